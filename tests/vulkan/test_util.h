// Shared fixtures of the Vulkan tests: a validated Context, a bump-allocated arena of test
// tensors, seeded random data, and tolerance checks.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "msc_vk.h"

namespace vkt {

// The process-wide Context: Khronos validation + synchronization validation enabled, every
// WARNING/ERROR message recorded (see msc_vk::Context).
msc_vk::Context& Ctx();
// A second Context that treats the device like a discrete GPU: non-UMA (staging copies) and the
// shared-memory tiled GEMM variant; also validated.
msc_vk::Context& StagingCtx();

// Messages still recorded by Ctx() and StagingCtx() (those created so far).
size_t RecordedValidationMessages();

// Fails the current test when `ctx` recorded validation messages (and prints them), then
// clears them.
void ExpectNoValidationMessages(msc_vk::Context& ctx);

// Seeded uniform random floats in [lo, hi).
std::vector<float> Random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

// A unary op a conv / GEMM epilogue runs (ops::Activation::Unary) with its float parameters.
struct UnaryEpilogue {
  const char* op;
  float p0, p1;
};
// The unary epilogues the kernel tests take in turn: erf- and tanh-based gelu, silu, sigmoid,
// tanh, and the ops with parameters (leakyrelu alpha, softplus beta / threshold).
const std::vector<UnaryEpilogue>& UnaryEpilogues();

// Reference values through a conv/GEMM kernel's fused activation: clamped to [a.min, a.max]
// when a.enabled (relu: [0, inf), clip: [min, max]).
std::vector<float> Activate(std::vector<float> v, const msc_vk::ops::Activation& a);

// Tensors bump-allocated (256-byte aligned) in one device buffer.
class Arena {
 public:
  explicit Arena(msc_vk::Context& ctx, uint64_t bytes = 64u << 20);
  msc_vk::Tensor Alloc(const std::string& name, const msc_vk::Shape& shape,
                       msc_vk::DType dtype = msc_vk::DType::kFloat32);
  // Allocates and uploads.
  msc_vk::Tensor Input(const std::string& name, const msc_vk::Shape& shape,
                       const std::vector<float>& data);
  // A float16 tensor holding `data` rounded to nearest even (msc_vk::FloatToHalf): the weights of
  // a --precision fp16 project. *rounded (if given) gets the float16 values widened back.
  msc_vk::Tensor InputHalf(const std::string& name, const msc_vk::Shape& shape,
                           const std::vector<float>& data, std::vector<float>* rounded = nullptr);
  // The tensor's values (float32, or float16 widened).
  std::vector<float> Read(const msc_vk::Tensor& t) const;
  msc_vk::Buffer& buffer() { return buffer_; }

 private:
  msc_vk::Buffer buffer_;
  uint64_t used_ = 0;
};

// CHECKs that `actual` matches `expected` within atol + rtol * |expected| (printing max errors).
void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected,
                 double atol = 1e-4, double rtol = 1e-4, const std::string& what = "output");

// Runs `fn`, expecting msc_vk::Error whose message contains `needle`.
template <class F>
void ExpectError(F&& fn, const std::string& needle) {
  try {
    fn();
    FAIL("expected an msc_vk::Error containing: " << needle);
  } catch (const msc_vk::Error& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.find(needle) != std::string::npos);
  }
}

// Sets an environment variable for the scope of the object (restores or unsets it after).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A unique path under the system temp dir.
std::string TempPath(const std::string& name);

// Coordinates of row-major index i in shape s, and back.
inline std::vector<int64_t> Unravel(int64_t i, const msc_vk::Shape& s) {
  std::vector<int64_t> c(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}
inline int64_t Ravel(const std::vector<int64_t>& c, const msc_vk::Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

// Runs `add` (recording kernels) on a fresh program of `ctx`; checks the dispatch count.
template <class F>
void RunProgram(msc_vk::Context& ctx, size_t dispatches, F&& add) {
  msc_vk::Program p(ctx);
  add(p);
  CHECK(p.num_dispatches() == dispatches);
  p.Run();
}

}  // namespace vkt
