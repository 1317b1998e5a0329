#!/usr/bin/env bash
# One libFuzzer harness for a short, fixed time on its committed corpus and regression inputs:
# the ctest test fuzz_<name> (label `fuzz`, registered by tests/fuzz.cmake when MSC_FUZZ=ON).
#   run_ci.sh HARNESS_BINARY NAME SECONDS WORK_DIR
# New inputs go to WORK_DIR/new (emptied first; the committed corpus is only read). Exit 0 when
# the run ends without a finding; otherwise prints "fuzz finding in harness '<name>'", the end of
# libFuzzer's log and the saved input (WORK_DIR/crash-*, leak-*, timeout-*, oom-*), and exits 1.
set -uo pipefail
bin=$1 name=$2 seconds=$3 work=$4
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$bin" ]; then
  echo "fuzz_$name: $bin is not built (cmake --build <dir> --target msc_fuzzers)"
  exit 1
fi
rm -rf "$work"
mkdir -p "$work/new"
dirs=("$work/new" "$here/corpus/$name")
[ -d "$here/regressions/$name" ] && dirs+=("$here/regressions/$name")
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
# -timeout: one input running longer than this is a finding (a hang); -rss_limit_mb: libFuzzer's
# default memory cap, stated; -seed: fixed (MSC_FUZZ_SEED, default 1), so that a CI run explores
# the same inputs every time -- new findings come from the long runs (scripts/fuzz.sh, random
# seeds), not from a red CI on an unrelated change. Flags the harness sets itself: -max_len, -dict
# (see fuzz_<name>.cc).
"$bin" -max_total_time="$seconds" -seed="${MSC_FUZZ_SEED:-1}" -timeout=25 -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -artifact_prefix="$work/" "${dirs[@]}" >"$work/log" 2>&1
rc=$?
stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)' "$work/log" |
  sed 's/^stat:://' | tr '\n' ' ')
cov=$(grep -oE 'cov: [0-9]+' "$work/log" | tail -1)
if [ "$rc" -eq 0 ]; then
  echo "fuzz_$name: no findings in ${seconds}s ($cov; $stats)"
  exit 0
fi
echo "fuzz finding in harness '$name' (libFuzzer exit status $rc); end of its log:"
tail -n 80 "$work/log"
for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work"/slow-unit-*; do
  [ -e "$f" ] || continue
  echo "saved input: $f ($(stat -c %s "$f") bytes; replay: $bin $f)"
  # CI logs outlive the machine: small inputs are printed whole (recreate with base64 -d).
  [ "$(stat -c %s "$f")" -le 8192 ] && echo "base64: $(base64 -w 0 "$f")"
done
exit 1
