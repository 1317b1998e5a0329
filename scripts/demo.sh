#!/usr/bin/env bash
# The main job on a built-in example, from a fresh Debian 12 machine:
# packages, build, export the PyTorch model -> generate a project -> run the project's golden test.
#   bash scripts/demo.sh [EXAMPLE=fashion_mnist_mlp] [BACKEND=torch] [OUT=out/EXAMPLE-BACKEND]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EXAMPLE="${1:-fashion_mnist_mlp}"
BACKEND="${2:-torch}"
OUT="${3:-$ROOT/out/$EXAMPLE-$BACKEND}"
bash "$ROOT/scripts/install_deps.sh"
bash "$ROOT/scripts/build.sh"
bash "$ROOT/examples/run_example.sh" "$ROOT/build/msc-codegen" "$EXAMPLE" "$BACKEND" "$OUT"
