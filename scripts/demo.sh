#!/usr/bin/env bash
# The main job on a built-in example, from a fresh Debian 12 machine: packages, build, then
# export the PyTorch model -> generate a project -> run the project's golden test.
#   bash scripts/demo.sh [EXAMPLE=fashion_mnist_mlp] [BACKENDS="torch"] [OUT_ROOT=out/examples]
# Examples: conv_relu, fashion_mnist_mlp, resnet18, hostile. Backends: torch relax vulkan.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EXAMPLE="${1:-fashion_mnist_mlp}"
export MSC_BACKENDS="${2:-torch}"
bash "$ROOT/scripts/install_deps.sh"
bash "$ROOT/scripts/build.sh"
bash "$ROOT/examples/run_example.sh" "$EXAMPLE" "$ROOT/build/msc-codegen" "${3:-$ROOT/out/examples}"
