#!/usr/bin/env bash
# Long fuzzing runs of the libFuzzer harnesses in tests/fuzz (see tests/fuzz/README.md).
#
#   scripts/fuzz.sh [options] [HARNESS...]        (default: every harness, one after the other)
#     -t, --time SECONDS   stop each harness after SECONDS (default 600; 0 = no time limit)
#     -n, --runs N         stop each harness after N executions in all (default: no limit)
#     -j, --jobs J         fuzzing processes per harness (libFuzzer -fork=J, default 1): they share
#                          one scratch corpus, and each is restarted every few minutes, so memory
#                          does not pile up over a long run (yaml-cpp's allocation pattern makes
#                          the RSS of one long-lived ASan process grow ~0.8 KB per execution);
#                          findings do not stop the run (-ignore_crashes/timeouts/ooms)
#     -o, --out DIR        scratch folder (default BUILD_DIR/fuzz-runs): DIR/<harness>/corpus gets
#                          the new inputs, DIR/<harness>/ the findings, DIR/<harness>/fuzz.log
#     --keep               keep DIR/<harness>/corpus from a previous run (default: start empty)
#     --merge              afterwards, merge the new inputs that add coverage into the committed
#                          corpus tests/fuzz/corpus/<harness> (libFuzzer -merge=1); off by default
#     --build-dir DIR      sanitizer build folder (default: build-asan, shared with scripts/test.sh)
#     --no-build           do not configure/build first
#     --list               print the harness names and exit
#     -- FLAGS...          extra libFuzzer flags (e.g. -- -max_len=1024 -use_value_profile=1)
# Fuzzing processes run under `nice -n ${FUZZ_NICE:-10}`. For each harness it prints execs (all
# jobs), exec/s, edges (libFuzzer's "cov:" at the end), new corpus inputs and findings (saved
# inputs crash-/leak-/timeout-/oom-*). Exit status 1 if any harness has a finding.
# Example, the >= 10M-exec run of issue 10:  scripts/fuzz.sh -t 0 -n 10000000 -j 2
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ALL=(graph safetensors param_dict opdef backend_spec tmpl vk_readers onnx)  # = tests/fuzz.cmake
time_s=600 runs="" jobs=1 out="" keep=0 merge=0 build=1
build_dir="$ROOT/build-asan"
harnesses=() extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t|--time) time_s=$2; shift 2 ;;
    -n|--runs) runs=$2; shift 2 ;;
    -j|--jobs) jobs=$2; shift 2 ;;
    -o|--out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --merge) merge=1; shift ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --list) printf '%s\n' "${ALL[@]}"; exit 0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${ALL[@]}")
for h in "${harnesses[@]}"; do
  [[ " ${ALL[*]} " == *" $h "* ]] || { echo "fuzz.sh: unknown harness '$h' (have: ${ALL[*]})" >&2; exit 2; }
done
build_dir="$(mkdir -p "$build_dir" && cd "$build_dir" && pwd)"
out="${out:-$build_dir/fuzz-runs}"

if [ "$build" -eq 1 ]; then
  # The same configuration as scripts/test.sh's sanitizer build (keep the two in sync); a folder
  # configured with another compiler is configured afresh (CMake cannot switch in place).
  grep -qs '^CMAKE_CXX_COMPILER:.*clang' "$build_dir/CMakeCache.txt" ||
    rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
  cmake -S "$ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    -DCMAKE_CXX_COMPILER=clang++ -DMSC_SANITIZE=ON -DMSC_FUZZ=ON \
    -DONNX_DIR="$(bash "$ROOT/scripts/install_onnx.sh")/lib/cmake/ONNX" >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target "${harnesses[@]/#/fuzz_}"
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
status=0
summary=()
for h in "${harnesses[@]}"; do
  bin="$build_dir/tests/fuzz_$h"
  [ -x "$bin" ] || { echo "fuzz.sh: $bin not built (run without --no-build)" >&2; exit 1; }
  work="$out/$h"
  [ "$keep" -eq 1 ] || rm -rf "$work"
  rm -f "$work/fuzz.log"
  mkdir -p "$work/corpus"
  dirs=("$work/corpus" "$ROOT/tests/fuzz/corpus/$h")
  [ -d "$ROOT/tests/fuzz/regressions/$h" ] && dirs+=("$ROOT/tests/fuzz/regressions/$h")
  flags=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=25
         -rss_limit_mb=2048 -artifact_prefix="$work/")
  [ "$time_s" = 0 ] || flags+=(-max_total_time="$time_s")
  [ -z "$runs" ] || flags+=(-runs="$runs")
  echo "== fuzz_$h: ${flags[*]} ${extra[*]:-} (log: $work/fuzz.log)"
  start=$(date +%s)
  (cd "$work" && nice -n "${FUZZ_NICE:-10}" "$bin" "${flags[@]}" "${extra[@]}" "${dirs[@]}" \
    >"$work/fuzz.log" 2>&1) || true
  wall=$(($(date +%s) - start))
  # The fork driver's status lines "#<execs>: cov: ..." and, when -runs is reached, "INFO: fuzzed
  # for <execs> iterations": the largest is the total over all jobs.
  execs=$(sed -n -e 's/^#\([0-9]*\): cov:.*/\1/p' -e 's/^INFO: fuzzed for \([0-9]*\) iterations.*/\1/p' \
    "$work/fuzz.log" | sort -n | tail -1)
  execs=${execs:-0}
  # Edges: libFuzzer's "cov:" (covered PCs of the instrumented code) at the end of the run.
  cov=$(sed -n 's/^#[0-9]*: cov: \([0-9]*\).*/\1/p' "$work/fuzz.log" | tail -1)
  if [ "$merge" -eq 1 ]; then
    "$bin" -merge=1 "$ROOT/tests/fuzz/corpus/$h" "$work/corpus" >"$work/merge.log" 2>&1
  fi
  findings=()
  for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$f" ] && findings+=("$f")
  done
  rate=$((wall > 0 ? execs / wall : execs))
  line=$(printf '%-13s execs %11d  exec/s %7d  edges %6s  new inputs %5d  findings %d' "$h" "$execs" \
    "$rate" "${cov:-?}" "$(find "$work/corpus" -type f | wc -l)" "${#findings[@]}")
  echo "$line"
  summary+=("$line")
  if [ ${#findings[@]} -gt 0 ]; then
    status=1
    for f in "${findings[@]}"; do echo "  finding: $f (replay: $bin $f)"; done
  fi
done
echo "== summary (exec/s = executions / wall seconds, all jobs together)"
printf '%s\n' "${summary[@]}"
exit "$status"
