#!/usr/bin/env bash
# Configures and builds msc-codegen into build/ (or $BUILD_DIR). Extra args go to cmake configure.
#   BUILD_TYPE       CMake build type (default RelWithDebInfo)
#   BUILD_TARGET     build only this target, e.g. msc-codegen (default: everything)
#   MSC_BUILD_TESTS  ON (default): configure the test suite too; OFF: only the generator
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DMSC_BUILD_TESTS="${MSC_BUILD_TESTS:-ON}" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
