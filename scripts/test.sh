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
# Every C++ compile through ccache (CMake takes the launcher from the environment when it first
# configures a build folder): msc-codegen, the sanitizer build, and the many generated Vulkan
# projects the tests build, which share their runtime sources. The cache lives outside the clone;
# paths under the clone are hashed relative to it (CCACHE_BASEDIR, NOHASHDIR), so a fresh clone
# reuses it, and the tests' temporary folders are put under the build folder for the same reason.
CACHE="${MSC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen}"
export CCACHE_DIR="${CCACHE_DIR:-$CACHE/ccache}" CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
export TMPDIR="$ROOT/build/tmp"
mkdir -p "$TMPDIR"
# Today's stack (torch 2.x, numpy 2.x, the newest apache-tvm) in the project's venv, outside the
# clone and reused while its pins are unchanged (scripts/install_venv.sh).
VENV_PYTHON="$(bash "$ROOT/scripts/install_venv.sh")"
# Debian's stack (torch 1.13, numpy 1.24) plus the safetensors package generated projects read
# weights with: a --system-site-packages venv over /usr/bin/python3.
DEBIAN_PYTHON="$(bash "$ROOT/scripts/install_venv.sh" debian)"
# The ONNX importer's library: the pinned ONNX release built from source (scripts/install_onnx.sh),
# cached outside the clone.
ONNX_PREFIX="$(bash "$ROOT/scripts/install_onnx.sh")"
bash "$ROOT/scripts/build.sh" -DMSC_VENV_PYTHON="$VENV_PYTHON" -DMSC_PYTHON="$DEBIAN_PYTHON" \
  -DONNX_DIR="$ONNX_PREFIX/lib/cmake/ONNX"
# ctest and the sanitizer run both go on after failures; the summary line at the end counts them.
CTEST_LOG="$(mktemp)"
trap 'rm -f "$CTEST_LOG"' EXIT
ctest_rc=0
(cd "$ROOT/build" && ctest --output-on-failure -j2 --timeout 1500) 2>&1 | tee "$CTEST_LOG" || ctest_rc=$?
# Sanitizer build with clang (generator library + doctest binary + libFuzzer harnesses): one
# library build serves the ASan unit tests and the fuzzers (tests/fuzz.cmake, MSC_FUZZ; keep the
# configuration in sync with scripts/fuzz.sh). A build-asan configured with another compiler
# (gcc, before the fuzzers) is configured afresh: CMake cannot switch compilers in place.
grep -qs '^CMAKE_CXX_COMPILER:.*clang' "$ROOT/build-asan/CMakeCache.txt" ||
  rm -rf "$ROOT/build-asan/CMakeCache.txt" "$ROOT/build-asan/CMakeFiles"
cmake -S "$ROOT" -B "$ROOT/build-asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
  -DCMAKE_CXX_COMPILER=clang++ -DMSC_SANITIZE=ON -DMSC_FUZZ=ON -DONNX_DIR="$ONNX_PREFIX/lib/cmake/ONNX" >/dev/null
cmake --build "$ROOT/build-asan" -j"$(nproc)" --target msc_unit_tests msc_fuzzers
asan_rc=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$ROOT/build-asan/tests/msc_unit_tests" ||
  asan_rc=$?
# Every fuzz harness for MSC_FUZZ_SECONDS (20) on its committed corpus, two at a time; a finding
# fails the ctest test fuzz_<harness> and prints the input (tests/fuzz/README.md).
FUZZ_LOG="$(mktemp)"
trap 'rm -f "$CTEST_LOG" "$FUZZ_LOG"' EXIT
fuzz_rc=0
(cd "$ROOT/build-asan" && ctest -L fuzz -j2 --output-on-failure) 2>&1 | tee "$FUZZ_LOG" || fuzz_rc=$?
read -r fuzz_failed fuzz_total < <(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$FUZZ_LOG" | tail -1) || true
if [ -z "${fuzz_total:-}" ]; then fuzz_failed=1 fuzz_total=1; fi
[ "$fuzz_rc" -eq 0 ] || [ "$fuzz_failed" -gt 0 ] || fuzz_failed=1
# Summary: ctest's "N% tests passed, F tests failed out of T" plus the sanitizer run as one test
# (no such ctest line, e.g. ctest itself failed: counted as one failure).
read -r ctest_failed ctest_total < <(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$CTEST_LOG" | tail -1) || true
if [ -z "${ctest_total:-}" ]; then ctest_failed=1 ctest_total=1; fi
[ "$ctest_rc" -eq 0 ] || [ "$ctest_failed" -gt 0 ] || ctest_failed=1
failed=$((ctest_failed + (asan_rc != 0) + fuzz_failed))
passed=$((ctest_total - ctest_failed + (asan_rc == 0) + fuzz_total - fuzz_failed))
echo "$passed passed, $failed failed (ctest: $((ctest_total - ctest_failed))/$ctest_total; ASan+UBSan unit tests: $([ "$asan_rc" -eq 0 ] && echo passed || echo failed); fuzz harnesses: $((fuzz_total - fuzz_failed))/$fuzz_total)"
[ "$failed" -eq 0 ]
