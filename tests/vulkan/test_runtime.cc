// Context, Buffer, Program, shader lookup and device-limit tests.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <random>

#include "ops_internal.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Tensor;

using vkt::ScopedEnv;

TEST_CASE("device selection: list, automatic, --device, MSC_VK_DEVICE") {
  const auto devices = msc_vk::ListDevices();
  REQUIRE(!devices.empty());
  MESSAGE("device 0: " << devices[0].name << " ("
                       << std::string(msc_vk::DeviceTypeName(devices[0].type)) << ")");
  CHECK(vkt::Ctx().Describe().find(vkt::Ctx().info().name) != std::string::npos);

  msc_vk::ContextOptions bad;
  bad.device_index = 99;
  vkt::ExpectError([&] { msc_vk::Context c(bad); },
                   "Vulkan device index 99 (--device) is out of range; " +
                       std::to_string(devices.size()) + " device(s):\n  0: ");
  {
    ScopedEnv env("MSC_VK_DEVICE", "abc");
    vkt::ExpectError([] { msc_vk::Context c; },
                     "MSC_VK_DEVICE='abc' is not a device index; devices:");
  }
  {
    ScopedEnv env("MSC_VK_DEVICE", "0");
    msc_vk::Context c;
    CHECK(c.info().index == 0);
  }
  {
    ScopedEnv env("MSC_VK_DEVICE", "5");
    vkt::ExpectError([] { msc_vk::Context c; },
                     "Vulkan device index 5 (MSC_VK_DEVICE) is out of range");
  }
}

TEST_CASE("no Vulkan driver gives a clear error, not a crash") {
  ScopedEnv a("VK_ICD_FILENAMES", "/nonexistent/icd.json");
  ScopedEnv b("VK_DRIVER_FILES", "/nonexistent/icd.json");
  vkt::ExpectError([] { msc_vk::Context c; }, "no Vulkan device found");
  vkt::ExpectError([] { msc_vk::ListDevices(); }, "no Vulkan device found");
}

TEST_CASE("the validation messenger counts synchronization hazards") {
  // Two unsynchronized transfer writes to the same bytes: a WRITE_AFTER_WRITE hazard that
  // synchronization validation must report. Proves the zero-message assertions are meaningful.
  msc_vk::ContextOptions o;
  o.validation = true;
  msc_vk::Context ctx(o);
  msc_vk::Buffer buf(ctx, 256, msc_vk::MemoryKind::kDevice, "hazard");
  ctx.SubmitAndWait([&](VkCommandBuffer cmd) {
    vkCmdFillBuffer(cmd, buf.handle(), 0, 256, 1);
    vkCmdFillBuffer(cmd, buf.handle(), 0, 256, 2);
  });
  CHECK(ctx.message_count() >= 1);
  bool hazard = false;
  for (const std::string& m : ctx.messages())
    hazard = hazard || m.find("SYNC-HAZARD") != std::string::npos;
  CHECK(hazard);
}

TEST_CASE("Program: barriers only between dependent dispatches; one command buffer replayed") {
  auto& ctx = vkt::Ctx();
  vkt::Arena ar(ctx, 1 << 20);
  Tensor x = ar.Alloc("x", {64}), y = ar.Alloc("y", {64}), w = ar.Alloc("w", {64}),
         z = ar.Alloc("z", {64});
  msc_vk::Program p(ctx);
  ops::Relu(p, x, y);     // reads x, writes y
  ops::Sigmoid(p, x, w);  // independent: no barrier
  ops::Add(p, y, w, z);   // reads y and w: barrier
  ops::Relu(p, z, x);     // reads z (RAW) and overwrites x (WAR): barrier
  p.Finalize();
  CHECK(p.num_dispatches() == 4);
  CHECK(p.num_barriers() == 2);
  for (uint32_t run = 0; run < 3; ++run) {
    const auto xd = vkt::Random(64, run);
    ar.buffer().Upload(x.offset, xd.data(), x.bytes());
    p.Run();
    std::vector<float> expect(64);
    for (int i = 0; i < 64; ++i)
      expect[i] = std::max(0.0f, std::max(xd[i], 0.0f) + 1.0f / (1.0f + std::exp(-xd[i])));
    vkt::ExpectClose(ar.Read(x), expect, 1e-6, 1e-6);
  }
  vkt::ExpectNoValidationMessages(ctx);
  vkt::ExpectError([&] { ops::Relu(p, x, y); },
                   "cannot add kernels after the program was recorded");
}

TEST_CASE("non-UMA path: staging copies recorded into the same command buffer") {
  auto& ctx = vkt::StagingCtx();
  REQUIRE(!ctx.uma());
  msc_vk::Buffer arena(ctx, 4096, msc_vk::MemoryKind::kDevice, "arena");
  CHECK(arena.mapped() == nullptr);
  Tensor x = msc_vk::MakeTensor(arena, "x", msc_vk::DType::kFloat32, {4, 8}, 0);
  Tensor y = msc_vk::MakeTensor(arena, "y", msc_vk::DType::kFloat32, {4, 8}, 256);
  msc_vk::Program p(ctx);
  p.AddInput(x);
  p.AddOutput(y);
  ops::Tanh(p, x, y);
  for (uint32_t run = 0; run < 2; ++run) {
    const auto xd = vkt::Random(32, 50 + run);
    p.Write(x, xd.data(), x.bytes());
    p.Run();
    std::vector<float> got(32), expect(32);
    p.Read(y, got.data(), y.bytes());
    for (int i = 0; i < 32; ++i) expect[i] = std::tanh(xd[i]);
    vkt::ExpectClose(got, expect, 1e-6, 1e-6);
  }
  std::vector<float> tmp(32);
  vkt::ExpectError([&] { p.Read(x, tmp.data(), x.bytes()); }, "is not host-visible on this device");
  // Buffer::Upload/Download through temporary staging buffers.
  const auto d = vkt::Random(32, 3);
  arena.Upload(512, d.data(), 128);
  std::vector<float> back(32);
  arena.Download(512, back.data(), 128);
  CHECK(back == d);
  vkt::ExpectNoValidationMessages(ctx);
}

TEST_CASE("Program::PipelineStats counts each pipeline once, per shader module") {
  auto& ctx = vkt::Ctx();
  vkt::Arena ar(ctx, 1 << 20);
  Tensor x = ar.Input("x", {64}, vkt::Random(64, 4)), y = ar.Alloc("y", {64}),
         z = ar.Alloc("z", {64});
  msc_vk::Program p(ctx);
  CHECK(p.PipelineStats().empty());
  ops::Relu(p, x, y);
  ops::Relu(p, y, z);     // same shader, bindings and constants: the pipeline is reused
  ops::Sigmoid(p, y, z);  // another op code (specialization constant): a second pipeline
  Tensor a = ar.Input("a", {8, 8}, vkt::Random(64, 5)),
         b = ar.Input("b", {8, 8}, vkt::Random(64, 6)), m = ar.Alloc("m", {8, 8});
  ops::Matmul(p, a, b, m);
  const auto& stats = p.PipelineStats();
  REQUIRE(stats.count("unary") == 1);
  CHECK(stats.at("unary").pipelines == 2);
  CHECK(stats.at("unary").total_ns > 0);
  size_t pipelines = 0;
  for (const auto& [stem, e] : stats) pipelines += e.pipelines;
  CHECK(pipelines == 3);  // unary twice, one GEMM kernel (matmul or its +sg variant)
  vkt::ExpectNoValidationMessages(ctx);
}

TEST_CASE("a large 1-D op uses a folded 2-D grid (> 65535 workgroups in x)") {
  auto& ctx = vkt::Ctx();
  const int64_t n = 4200001;  // odd: one element per invocation -> 65626 workgroups of 64
  const auto grid = ops::Grid1D(ctx, n, 64);
  CHECK(grid[0] == 65535);
  CHECK(grid[1] == 2);
  vkt::Arena ar(ctx, 40 << 20);
  auto xd = vkt::Random(n, 9);
  Tensor x = ar.Input("x", {n}, xd), y = ar.Alloc("y", {n});
  msc_vk::Program p(ctx);
  ops::Relu(p, x, y);
  p.Run();
  for (float& v : xd) v = std::max(v, 0.0f);
  vkt::ExpectClose(ar.Read(y), xd, 0, 0);
  vkt::ExpectNoValidationMessages(ctx);
}

TEST_CASE("shaders are found by stem; an op without a shader is a clear error") {
  CHECK(std::string(msc_vk::GetEmbeddedShader("nn.softmax").stem) == "nn/softmax");
  CHECK(std::string(msc_vk::GetEmbeddedShader("msc/linear_bias").stem) == "msc/linear_bias");
  const std::vector<std::string> required = {"nn/conv2d@direct",
                                             "msc/conv2d_bias@gemm1x1",
                                             "nn/batch_norm",
                                             "nn/max_pool2d",
                                             "nn/avg_pool2d",
                                             "nn/adaptive_avg_pool2d",
                                             "msc/linear",
                                             "msc/linear_bias",
                                             "nn/dense",
                                             "matmul",
                                             "unary",
                                             "binary",
                                             "nn/batch_matmul",
                                             "nn/softmax",
                                             "mean",
                                             "reshape",
                                             "squeeze",
                                             "expand_dims",
                                             "permute_dims",
                                             "transpose",
                                             "concat",
                                             "strided_slice"};
  for (const std::string& s : required) {
    INFO(s);
    CHECK(msc_vk::FindEmbeddedShader(s) != nullptr);
  }
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError([&] { p.AddKernel("nn.foo", {}, nullptr, 0); },
                   "no Vulkan shader for op 'nn.foo' (expected "
                   "runtime/vulkan/shaders/nn/foo.comp); embedded shaders: arange, argmax, ");
  vkt::ExpectError([&] { p.AddKernel("nn.foo", {}, nullptr, 0); },
                   ", binary, ");  // no +ext variants
  // The list names each .comp once, without its kernels ("@direct") and variants.
  vkt::ExpectError([&] { p.AddKernel("nn.foo", {}, nullptr, 0); },
                   ", nn/conv2d, nn/conv2d_transpose, ");
  vkt::ExpectError([&] { p.AddKernel("nn/conv2d@frobnicate", {}, nullptr, 0); },
                   "no Vulkan shader for op 'nn/conv2d@frobnicate' (expected kernel 'frobnicate' "
                   "of runtime/vulkan/shaders/nn/conv2d.comp (its \"// msc_vk:kernel\" lines))");
}

TEST_CASE("a shader of several kernels is one small module per kernel; identical modules once") {
  // conv2d.glsl's eight kernels in one module were ~400 KB of SPIR-V, and lavapipe's pipeline
  // creation time follows the whole module; each kernel alone is what glslc -O keeps of it.
  const msc_vk::ShaderCode* wino_input = msc_vk::FindEmbeddedShader("nn/conv2d@wino_input");
  const msc_vk::ShaderCode* gemm = msc_vk::FindEmbeddedShader("nn/conv2d@gemm1x1");
  REQUIRE(wino_input != nullptr);
  REQUIRE(gemm != nullptr);
  CHECK(wino_input->word_count * 4 < 32 * 1024);
  CHECK(wino_input->word_count * 10 < gemm->word_count);
  CHECK(msc_vk::FindEmbeddedShader("nn/conv2d") == nullptr);
  CHECK(msc_vk::FindEmbeddedShader("nn/conv1d@gemm1x1") == nullptr);  // 1-D: direct only
  // A kernel has the variants on its line: the input transform writes a float32 workspace and has
  // no epilogue (no +act), the GEMM all of them.
  CHECK(msc_vk::FindEmbeddedShader("nn/conv2d@wino_input+act") == nullptr);
  CHECK(msc_vk::FindEmbeddedShader("nn/conv2d@gemm1x1+act") != nullptr);
  // Identical modules are embedded once: ops whose .comp files include the same shader.
  CHECK(msc_vk::FindEmbeddedShader("nn/conv1d@direct")->words ==
        msc_vk::FindEmbeddedShader("nn/conv2d@direct")->words);
  CHECK(msc_vk::FindEmbeddedShader("nn/dense")->words ==
        msc_vk::FindEmbeddedShader("matmul")->words);
  CHECK(msc_vk::FindEmbeddedShader("nn/conv2d@gemm1x1+act")->words != gemm->words);
  CHECK(msc_vk::FindEmbeddedShader("nn/conv2d@direct")->words !=
        msc_vk::FindEmbeddedShader("msc/conv2d_bias@direct")->words);
}

TEST_CASE("device limits and bad bindings are errors") {
  auto& ctx = vkt::Ctx();
  vkt::Arena ar(ctx, 1 << 20);
  Tensor x = ar.Alloc("x", {16}), y = ar.Alloc("y", {16});
  msc_vk::Program p(ctx);
  struct Big {
    uint32_t v[33];
  } big{};
  vkt::ExpectError(
      [&] {
        p.AddKernel("unary", {msc_vk::InTexel(x), msc_vk::Out(y)}, &big, sizeof(big));
      },
      "132 bytes of push constants (must be a multiple of 4 and <= 128)");
  vkt::ExpectError([&] { p.AddKernel("unary", {msc_vk::InTexel(x)}, nullptr, 0); },
                   "the shader declares bindings {0, 1} but 1 tensors were bound");
  struct {
    uint32_t total;
    float a, b;
    uint32_t i_lo[2], i_hi[2];
  } push{16, 0, 0, {0, 0}, {0, 0}};  // shaders/common/unary.glsl
  msc_vk::Kernel& k = p.AddKernel(
      "unary", {msc_vk::InTexel(x, msc_vk::View::kTexelUint), msc_vk::Out(y)}, push, {0});
  vkt::ExpectError([&] { p.Dispatch(k, 70000); }, "exceeds the device's maxComputeWorkGroupCount");
  vkt::ExpectError([&] { msc_vk::MakeTensor(ar.buffer(), "odd", msc_vk::DType::kFloat32, {4}, 4); },
                   "is not a multiple of the device's minStorageBufferOffsetAlignment");
  vkt::ExpectError(
      [&] { msc_vk::MakeTensor(ar.buffer(), "huge", msc_vk::DType::kFloat32, {1 << 20}, 0); },
      "does not fit in buffer 'test_arena'");
}

TEST_CASE("FastDiv magic numbers divide exactly (host emulation of shaders/common/util.glsl)") {
  auto fast_div = [](uint32_t n, msc_vk::ops::detail::MagicDivider m) {
    const uint32_t hi = static_cast<uint32_t>((uint64_t{n} * m.m) >> 32);
    return (hi + n) >> m.s;
  };
  std::mt19937 rng(5);
  for (uint32_t d : {1u, 2u, 3u, 5u, 7u, 10u, 56u, 64u, 100u, 112u, 1000u, 12544u, 65535u, 65536u,
                     1000003u, (1u << 25) - 1}) {
    const msc_vk::ops::detail::MagicDivider m = msc_vk::ops::detail::MakeMagicDivider(d);
    for (uint32_t n :
         {0u, 1u, d - 1, d, d + 1, 2 * d - 1, (1u << 25) - 1, (1u << 25), (1u << 31) - 1}) {
      INFO("n=" << n << " d=" << d);
      CHECK(fast_div(n, m) == n / d);
    }
    for (int i = 0; i < 2000; ++i) {
      const uint32_t n = rng() & 0x7fffffffu;
      if (fast_div(n, m) != n / d) {
        FAIL("n=" << n << " d=" << d);
        break;
      }
    }
  }
}
