// Latency statistics for `--bench N`: warm-up runs, then N timed runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace msc_vk {

struct BenchStats {
  int iterations = 0;
  double p50_ms = 0, p90_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0;
  // "50 runs: p50 1.234 ms, p90 1.456 ms, mean 1.300 ms, min 1.200 ms, max 1.900 ms".
  std::string Summary() const;
};

// Nearest-rank percentiles of per-run latencies in milliseconds (empty input: all zero).
BenchStats LatencyStats(std::vector<double> ms);
// Calls fn() `warmup` times untimed, then `iterations` times timed (steady_clock, per call).
BenchStats Benchmark(const std::function<void()>& fn, int warmup, int iterations);

}  // namespace msc_vk
