#include "test_util.h"

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

namespace vkt {

namespace {

msc_vk::ContextOptions ValidatedOptions(bool gpu_like) {
  msc_vk::ContextOptions o;
  o.validation = true;
  o.force_staging = gpu_like;
  o.tiled_kernels = gpu_like ? 1 : 0;
  return o;
}

msc_vk::Context* g_ctx = nullptr;
msc_vk::Context* g_staging_ctx = nullptr;

}  // namespace

msc_vk::Context& Ctx() {
  static msc_vk::Context ctx(ValidatedOptions(false));
  g_ctx = &ctx;
  return ctx;
}

msc_vk::Context& StagingCtx() {
  static msc_vk::Context ctx(ValidatedOptions(true));
  g_staging_ctx = &ctx;
  return ctx;
}

size_t RecordedValidationMessages() {
  return (g_ctx ? g_ctx->message_count() : 0) +
         (g_staging_ctx ? g_staging_ctx->message_count() : 0);
}

void ExpectNoValidationMessages(msc_vk::Context& ctx) {
  const std::vector<std::string> msgs = ctx.messages();
  for (const std::string& m : msgs) MESSAGE("validation: " << m);
  CHECK(msgs.size() == 0);
  ctx.ClearMessages();
}

const std::vector<UnaryEpilogue>& UnaryEpilogues() {
  static const std::vector<UnaryEpilogue> acts = {
      {"nn.gelu", 0, 0},      {"nn.silu", 0, 0},         {"sigmoid", 0, 0},    {"tanh", 0, 0},
      {"nn.gelu_tanh", 0, 0}, {"nn.leakyrelu", 0.1f, 0}, {"nn.softplus", 2, 5}};
  return acts;
}

std::vector<float> Activate(std::vector<float> v, const msc_vk::ops::Activation& a) {
  if (a.enabled) {
    for (float& x : v) x = std::min(std::max(x, a.min), a.max);
  }
  return v;
}

std::vector<float> Random(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Arena::Arena(msc_vk::Context& ctx, uint64_t bytes)
    : buffer_(ctx, bytes, msc_vk::MemoryKind::kDevice, "test_arena") {}

msc_vk::Tensor Arena::Alloc(const std::string& name, const msc_vk::Shape& shape,
                            msc_vk::DType dtype) {
  msc_vk::Tensor t = msc_vk::MakeTensor(buffer_, name, dtype, shape, used_);
  used_ += (t.bytes() + 255) / 256 * 256;
  return t;
}

msc_vk::Tensor Arena::Input(const std::string& name, const msc_vk::Shape& shape,
                            const std::vector<float>& data) {
  msc_vk::Tensor t = Alloc(name, shape);
  REQUIRE(data.size() == static_cast<size_t>(t.numel()));
  buffer_.Upload(t.offset, data.data(), t.bytes());
  return t;
}

msc_vk::Tensor Arena::InputHalf(const std::string& name, const msc_vk::Shape& shape,
                                const std::vector<float>& data, std::vector<float>* rounded) {
  msc_vk::Tensor t = Alloc(name, shape, msc_vk::DType::kFloat16);
  REQUIRE(data.size() == static_cast<size_t>(t.numel()));
  std::vector<uint16_t> half(data.size());
  for (size_t i = 0; i < data.size(); ++i) half[i] = msc_vk::FloatToHalf(data[i]);
  buffer_.Upload(t.offset, half.data(), t.bytes());
  if (rounded) {
    rounded->resize(half.size());
    for (size_t i = 0; i < half.size(); ++i) (*rounded)[i] = msc_vk::HalfToFloat(half[i]);
  }
  return t;
}

std::vector<float> Arena::Read(const msc_vk::Tensor& t) const {
  std::vector<float> v(t.numel());
  if (t.dtype == msc_vk::DType::kFloat16) {
    std::vector<uint16_t> half(v.size());
    buffer_.Download(t.offset, half.data(), t.bytes());
    for (size_t i = 0; i < v.size(); ++i) v[i] = msc_vk::HalfToFloat(half[i]);
    return v;
  }
  buffer_.Download(t.offset, v.data(), t.bytes());
  return v;
}

void ExpectClose(const std::vector<float>& actual, const std::vector<float>& expected, double atol,
                 double rtol, const std::string& what) {
  REQUIRE(actual.size() == expected.size());
  msc_vk::CompareResult r = msc_vk::CompareFloat32(what, actual.data(), expected.data(),
                                                   actual.size(), msc_vk::Tolerance{atol, rtol});
  INFO(r.Summary());
  CHECK(r.pass());
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    old_ = old;
    had_ = true;
  }
  setenv(name, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_) {
    setenv(name_, old_.c_str(), 1);
  } else {
    unsetenv(name_);
  }
}

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/msc_vk_test_" + std::to_string(getpid()) +
         "_" + name;
}

}  // namespace vkt
