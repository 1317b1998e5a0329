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
# ctest and the sanitizer run both go on after failures; the summary line at the end counts them.
CTEST_LOG="$(mktemp)"
trap 'rm -f "$CTEST_LOG"' EXIT
ctest_rc=0
(cd "$ROOT/build" && ctest --output-on-failure -j2 --timeout 1500) 2>&1 | tee "$CTEST_LOG" || ctest_rc=$?
# Sanitizer build of the unit tests (generator library + doctest binary only).
cmake -S "$ROOT" -B "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug -DMSC_SANITIZE=ON >/dev/null
cmake --build "$ROOT/build-asan" -j"$(nproc)" --target msc_unit_tests
asan_rc=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$ROOT/build-asan/tests/msc_unit_tests" ||
  asan_rc=$?
# Summary: ctest's "N% tests passed, F tests failed out of T" plus the sanitizer run as one test
# (no such ctest line, e.g. ctest itself failed: counted as one failure).
read -r ctest_failed ctest_total < <(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$CTEST_LOG" | tail -1) || true
if [ -z "${ctest_total:-}" ]; then ctest_failed=1 ctest_total=1; fi
[ "$ctest_rc" -eq 0 ] || [ "$ctest_failed" -gt 0 ] || ctest_failed=1
failed=$((ctest_failed + (asan_rc != 0)))
passed=$((ctest_total - ctest_failed + (asan_rc == 0)))
echo "$passed passed, $failed failed (ctest: $((ctest_total - ctest_failed))/$ctest_total; ASan+UBSan unit tests: $([ "$asan_rc" -eq 0 ] && echo passed || echo failed))"
[ "$failed" -eq 0 ]
