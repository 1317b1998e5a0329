#include "bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace msc_vk {
namespace {

double Percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

}  // namespace

std::string BenchStats::Summary() const {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%d runs: p50 %.3f ms, p90 %.3f ms, mean %.3f ms, min %.3f ms, max %.3f ms",
                iterations, p50_ms, p90_ms, mean_ms, min_ms, max_ms);
  return buf;
}

BenchStats LatencyStats(std::vector<double> ms) {
  BenchStats s;
  s.iterations = static_cast<int>(ms.size());
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.p50_ms = Percentile(ms, 50);
  s.p90_ms = Percentile(ms, 90);
  double sum = 0;
  for (double v : ms) sum += v;
  s.mean_ms = sum / ms.size();
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  return s;
}

BenchStats Benchmark(const std::function<void()>& fn, int warmup, int iterations) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return LatencyStats(std::move(ms));
}

}  // namespace msc_vk
