// bench_gemm: SGEMM throughput of the msc_vk GEMM shader (matmul, C = A @ B, float32).
// Not a ctest. Usage: bench_gemm [SIZE=1024] [RUNS=10] [--trans-b]
// Prints the device, then min / median time per GEMM and GFLOP/s (2*M*N*K / time) for
// M = N = K = SIZE, timing Program::Run() (one submit + fence wait per GEMM).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "msc_vk.h"

int main(int argc, char** argv) {
  try {
    int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 10;
    const bool trans_b = argc > 3 && std::strcmp(argv[3], "--trans-b") == 0;
    msc_vk::Context ctx;
    std::printf("device: %s\n", ctx.Describe().c_str());
    const uint64_t bytes = static_cast<uint64_t>(n) * n * 4;
    const uint64_t slot = (bytes + 255) / 256 * 256;
    msc_vk::Buffer buf(ctx, 3 * slot, msc_vk::MemoryKind::kDevice, "gemm");
    msc_vk::Tensor a = msc_vk::MakeTensor(buf, "a", msc_vk::DType::kFloat32, {n, n}, 0);
    msc_vk::Tensor b = msc_vk::MakeTensor(buf, "b", msc_vk::DType::kFloat32, {n, n}, slot);
    msc_vk::Tensor c = msc_vk::MakeTensor(buf, "c", msc_vk::DType::kFloat32, {n, n}, 2 * slot);
    std::vector<float> h(n * n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1, 1);
    for (float& v : h) v = d(rng);
    buf.Upload(a.offset, h.data(), a.bytes());
    buf.Upload(b.offset, h.data(), b.bytes());
    msc_vk::Program p(ctx);
    msc_vk::ops::Matmul(p, a, b, c, trans_b);
    p.Run();  // warm-up (pipeline compile on first use)
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      p.Run();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double flop = 2.0 * n * n * n;
    std::printf("sgemm %lldx%lldx%lld%s: min %.2f ms (%.2f GFLOP/s), median %.2f ms (%.2f GFLOP/s)\n",
                static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
                trans_b ? " (B transposed)" : "", ms.front(), flop / ms.front() / 1e6, ms[ms.size() / 2],
                flop / ms[ms.size() / 2] / 1e6);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
