// bench_gemm: SGEMM throughput of the msc_vk GEMM shader (matmul, C = A @ B, float32).
// Not a ctest. Usage: bench_gemm [SIZE=1024] [RUNS=10] [--trans-b] [--tiled|--register]
// Prints the device, then min / median time per GEMM and GFLOP/s (2*M*N*K / time) for
// M = N = K = SIZE, timing Program::Run() (one submit + fence wait per GEMM), and the process
// CPU time per GEMM (all driver threads; robust against other load on a shared machine).
// --tiled / --register force the shared-memory or the register-blocked kernel (default: by
// device type).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "msc_vk.h"

namespace {

double CpuSeconds() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec +
         r.ru_stime.tv_usec * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> pos;
    bool trans_b = false;
    msc_vk::ContextOptions opt;
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--trans-b") == 0)
        trans_b = true;
      else if (std::strcmp(argv[i], "--tiled") == 0)
        opt.tiled_kernels = 1;
      else if (std::strcmp(argv[i], "--register") == 0)
        opt.tiled_kernels = 0;
      else
        pos.push_back(argv[i]);
    }
    const int64_t n = pos.size() > 0 ? std::atoll(pos[0].c_str()) : 1024;
    const int runs = pos.size() > 1 ? std::atoi(pos[1].c_str()) : 10;
    msc_vk::Context ctx(opt);
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
    const double cpu0 = CpuSeconds();
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      p.Run();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    const double cpu_ms = (CpuSeconds() - cpu0) / runs * 1e3;
    std::sort(ms.begin(), ms.end());
    const double flop = 2.0 * n * n * n;
    std::printf(
        "sgemm %lldx%lldx%lld%s, %s kernel: min %.2f ms (%.2f GFLOP/s), median %.2f ms (%.2f "
        "GFLOP/s); "
        "cpu %.2f ms per GEMM (%.2f GFLOP per core-second)\n",
        static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
        trans_b ? " (B transposed)" : "", ctx.use_tiled_kernels() ? "tiled" : "register-blocked",
        ms.front(), flop / ms.front() / 1e6, ms[ms.size() / 2], flop / ms[ms.size() / 2] / 1e6,
        cpu_ms, flop / cpu_ms / 1e6);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
