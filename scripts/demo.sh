#!/usr/bin/env bash
# The main job on a built-in example, from a fresh Debian 12 machine: packages, build the
# msc-codegen binary (only it: no test binaries or test shaders), then export the PyTorch model ->
# generate a project -> run the project's golden test. Each step line shows the seconds elapsed.
#   bash scripts/demo.sh [EXAMPLE=fashion_mnist_mlp] [BACKENDS="torch"] [OUT_ROOT=out/examples]
# Examples: conv_relu, fashion_mnist_mlp, resnet18, hostile. Backends: any of `msc-codegen backends`.
# BUILD_DIR (default <repo>/build): a build already there is reused as it is configured; a new one
# is configured without the test suite (scripts/build.sh and scripts/test.sh turn it back on).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
EXAMPLE="${1:-fashion_mnist_mlp}"
export MSC_BACKENDS="${2:-torch}"
START=$SECONDS
step() { printf '== [%4ds] %s\n' "$((SECONDS - START))" "$*"; }

step "packages (scripts/install_deps.sh)"
bash "$ROOT/scripts/install_deps.sh"
if [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
  step "build msc-codegen, reusing $BUILD_DIR"
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target msc-codegen
else
  step "configure $BUILD_DIR (no tests) and build msc-codegen"
  BUILD_DIR="$BUILD_DIR" MSC_BUILD_TESTS=OFF BUILD_TARGET=msc-codegen bash "$ROOT/scripts/build.sh"
fi
step "Python: Debian's torch + the safetensors package (scripts/install_venv.sh debian)"
MSC_PYTHON="$(bash "$ROOT/scripts/install_venv.sh" debian)"
export MSC_PYTHON
# run_example.sh's own "== step" lines get the elapsed time too.
bash "$ROOT/examples/run_example.sh" "$EXAMPLE" "$BUILD_DIR/msc-codegen" "${3:-$ROOT/out/examples}" 2>&1 |
  while IFS= read -r line; do
    case "$line" in
      "== "*) step "${line#== }" ;;
      *) printf '%s\n' "$line" ;;
    esac
  done
step "done"
