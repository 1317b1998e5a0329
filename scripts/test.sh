#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: packages, build, ctest, then the unit tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer. This is what CI runs (.ci/run).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# Tests compare against graphs written by TVM's MSC itself, kept beside the checkout (read-only).
if [ ! -d "$ROOT/../shared/reference/msc-real" ]; then
  echo "error: $ROOT/../shared/reference/msc-real not found: the tests need the reference data beside the checkout" >&2
  exit 1
fi
bash "$ROOT/scripts/install_deps.sh"
bash "$ROOT/scripts/build.sh"
(cd "$ROOT/build" && ctest --output-on-failure -j2 --timeout 1500)
# Sanitizer build of the unit tests (generator library + doctest binary only).
cmake -S "$ROOT" -B "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug -DMSC_SANITIZE=ON >/dev/null
cmake --build "$ROOT/build-asan" -j"$(nproc)" --target msc_unit_tests
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$ROOT/build-asan/tests/msc_unit_tests"
echo "all tests passed"
