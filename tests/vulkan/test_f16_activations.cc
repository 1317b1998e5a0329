// float16 activations (generate --precision fp16): every float kernel reads float16 inputs
// through R16 texel views and writes a float16 output from its "+f16" shader variant. Each case
// runs an op twice on the same values: once on float32 tensors, once with the activations
// (inputs, residuals, masks and the output) stored as float16. Both compute in float32 from the
// same (float16-representable) inputs, so the float16 result must be the float32 result rounded
// to float16: within one float16 ulp. A kernel that wrote float32 bits into the float16 output,
// read a float16 input through a float32 view, or mis-sized a view fails by far more.
#include <functional>

#include "ops_internal.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::DType;
using msc_vk::Shape;
using msc_vk::Tensor;

namespace {

// Tensors of one run: activations as float16 (`half`) or float32, holding the same values
// (random data rounded to float16 either way); parameters always float32.
class Maker {
 public:
  Maker(vkt::Arena& ar, bool half) : ar_(ar), half_(half) {}
  Tensor Act(const std::string& name, const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> rounded;
    const Tensor h = ar_.InputHalf(name + ".h", shape, Data(shape, lo, hi), &rounded);
    return half_ ? h : ar_.Input(name, shape, rounded);
  }
  Tensor Param(const std::string& name, const Shape& shape, float lo = -1.0f, float hi = 1.0f) {
    return ar_.Input(name, shape, Data(shape, lo, hi));
  }
  Tensor Out(const std::string& name, const Shape& shape) {
    return ar_.Alloc(name, shape, half_ ? DType::kFloat16 : DType::kFloat32);
  }

 private:
  std::vector<float> Data(const Shape& shape, float lo, float hi) {
    return vkt::Random(static_cast<size_t>(msc_vk::NumElements(shape)), seed_++, lo, hi);
  }
  vkt::Arena& ar_;
  bool half_;
  uint32_t seed_ = 7100;
};

// Records the op on the maker's tensors; returns its output.
using Build = std::function<Tensor(Maker&, msc_vk::Program&)>;

// Runs `build` with float32 and with float16 activations on `ctx`; CHECKs that the float16
// output is float32's rounded (one float16 ulp: 2^-10 relative, and 2^-24 near zero).
void CheckOnContext(msc_vk::Context& ctx, const char* what, const Build& build) {
  const std::string label = std::string(what) + (ctx.uma() ? "" : " (staging context)");
  INFO(label);
  std::vector<float> out[2];
  for (int half = 0; half < 2; ++half) {
    vkt::Arena ar(ctx);
    Maker m(ar, half != 0);
    msc_vk::Program p(ctx);
    const Tensor y = build(m, p);
    REQUIRE(y.dtype == (half ? DType::kFloat16 : DType::kFloat32));
    p.Run();
    out[half] = ar.Read(y);
  }
  std::vector<float> expect(out[0].size());
  for (size_t i = 0; i < expect.size(); ++i)
    expect[i] = msc_vk::HalfToFloat(msc_vk::FloatToHalf(out[0][i]));
  vkt::ExpectClose(out[1], expect, 6e-8, 1.0 / 1024, what);
  vkt::ExpectNoValidationMessages(ctx);
}

void Check(const char* what, const Build& build) {
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) CheckOnContext(*ctx, what, build);
}

// A conv case with a float16 residual added before the activation.
Build ConvCase(Shape x, Shape w, std::array<int64_t, 2> stride, std::array<int64_t, 4> pad,
               int64_t groups, Shape y) {
  return [=](Maker& m, msc_vk::Program& p) {
    const Tensor xt = m.Act("x", x), wt = m.Param("w", w), b = m.Param("b", {w[0]});
    const Tensor r = m.Act("r", y), out = m.Out("y", y);
    p.MarkConstant(wt);
    ops::Conv2dBias(p, xt, wt, b, out,
                    ops::Conv2dAttrs{stride, pad, {1, 1}, groups, ops::Activation::Relu(), &r});
    return out;
  };
}

}  // namespace

TEST_CASE("float16 activations: every convolution algorithm") {
  Check("winograd",
        ConvCase({2, 17, 9, 7}, {19, 17, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, {2, 19, 9, 7}));
  {
    vkt::ScopedEnv tile("MSC_VK_WINOGRAD_TILE", "4");
    Check("winograd F4",
          ConvCase({1, 16, 8, 8}, {16, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, {1, 16, 8, 8}));
  }
  Check("1x1 vec4",
        ConvCase({1, 32, 8, 8}, {40, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, {1, 40, 8, 8}));
  Check("1x1 unaligned",
        ConvCase({2, 13, 5, 7}, {21, 13, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, {2, 21, 5, 7}));
  Check("depthwise", ConvCase({1, 8, 11, 16}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 8, {1, 8, 6, 8}));
  Check("im2col", ConvCase({2, 3, 17, 15}, {20, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, 1, {2, 20, 9, 8}));
  Check("grouped direct",
        ConvCase({1, 6, 7, 5}, {18, 3, 3, 2}, {2, 1}, {1, 0, 0, 1}, 2, {1, 18, 3, 5}));
  vkt::ScopedEnv direct("MSC_VK_CONV", "direct");
  Check("direct", ConvCase({1, 16, 9, 7}, {24, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, {1, 24, 9, 7}));
}

TEST_CASE("float16 activations: GEMMs, pooling, softmax, normalization, attention") {
  Check("linear_bias + residual, vec4", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {2, 5, 32}), r = m.Act("r", {2, 5, 24}), y = m.Out("y", {2, 5, 24});
    ops::LinearBias(p, x, m.Param("w", {24, 32}), m.Param("b", {24}), y, {}, &r);
    return y;
  });
  Check("linear, scalar", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {7, 13}), y = m.Out("y", {7, 9});
    ops::Linear(p, x, m.Param("w", {9, 13}), y, ops::Activation::Relu());
    return y;
  });
  Check("batched matmul, transposed b", [](Maker& m, msc_vk::Program& p) {
    const Tensor a = m.Act("a", {3, 6, 8}), b = m.Act("b", {3, 10, 8}), y = m.Out("y", {3, 6, 10});
    ops::Matmul(p, a, b, y, true);
    return y;
  });
  Check("max pool rows", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {1, 5, 17, 19}), y = m.Out("y", {1, 5, 8, 9});
    ops::MaxPool2d(p, x, y, {{3, 3}, {2, 2}});
    return y;
  });
  Check("avg pool", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {2, 3, 9, 9}), y = m.Out("y", {2, 3, 5, 5});
    ops::AvgPool2d(p, x, y, {{3, 3}, {2, 2}, {1, 1, 1, 1}});
    return y;
  });
  Check("adaptive avg pool", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {1, 64, 7, 7}), y = m.Out("y", {1, 64, 1, 1});
    ops::AdaptiveAvgPool2d(p, x, y);
    return y;
  });
  Check("softmax", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {4, 33}, -4, 4), y = m.Out("y", {4, 33});
    ops::Softmax(p, x, y);
    return y;
  });
  Check("log_softmax", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {3, 10, 5}, -4, 4), y = m.Out("y", {3, 10, 5});
    ops::LogSoftmax(p, x, y, 1);
    return y;
  });
  for (const Shape& s : {Shape{16, 64}, Shape{2, 4096}}) {  // per-invocation and cooperative
    Check("layer_norm", [s](Maker& m, msc_vk::Program& p) {
      const Tensor x = m.Act("x", s), g = m.Param("g", {s[1]}), b = m.Param("b", {s[1]});
      const Tensor y = m.Out("y", s);
      ops::LayerNorm(p, x, &g, &b, y, {1}, 1e-5);
      return y;
    });
  }
  // The fused layer_norm epilogue: y is never stored, so z is the float32 norm rounded once.
  CheckOnContext(vkt::Ctx(), "linear_bias + layer_norm epilogue", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {16, 64}), w = m.Param("w", {96, 64}), b = m.Param("b", {96});
    const Tensor g = m.Param("g", {96}), beta = m.Param("beta", {96}), r = m.Act("r", {16, 96});
    const Tensor y = m.Out("y", {16, 96}), z = m.Out("z", {16, 96});
    const ops::NormEpilogue norm{&z, &g, &beta, {-1}, 1e-5, false};
    ops::LinearBias(p, x, w, b, y, {}, &r, norm);
    return z;
  });
  Check("group_norm", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {2, 8, 5, 5}), g = m.Param("g", {8}), y = m.Out("y", {2, 8, 5, 5});
    ops::GroupNorm(p, x, &g, nullptr, y, 4, 1, {2, 3}, 1e-5);
    return y;
  });
  Check("rms_norm", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {6, 40}), y = m.Out("y", {6, 40});
    ops::RmsNorm(p, x, nullptr, y, {1}, 1e-6);
    return y;
  });
  for (const Shape& s : {Shape{2, 6, 4, 8}, Shape{1, 3, 5, 7}}) {  // vec4 and scalar
    Check("batch_norm", [s](Maker& m, msc_vk::Program& p) {
      const Tensor x = m.Act("x", s), y = m.Out("y", s);
      ops::BatchNorm(p, x, m.Param("g", {s[1]}), m.Param("b", {s[1]}), m.Param("mu", {s[1]}),
                     m.Param("var", {s[1]}, 0.5f, 2.0f), y, 1, 1e-5);
      return y;
    });
  }
  Check("attention with a mask", [](Maker& m, msc_vk::Program& p) {
    // [B, N, S, H] inputs (MSC's default axes), mask [B, N, Sq, Skv]
    const Tensor q = m.Act("q", {2, 3, 5, 8}), k = m.Act("k", {2, 3, 7, 8});
    const Tensor v = m.Act("v", {2, 3, 7, 8}), mask = m.Act("mask", {2, 3, 5, 7});
    const Tensor y = m.Out("y", {2, 3, 5, 8});
    ops::Attention(p, q, k, v, &mask, y, {});
    return y;
  });
}

TEST_CASE("float16 activations: elementwise chains, binary and unary ops, reductions") {
  for (const Shape& s : {Shape{3, 8}, Shape{3, 7}}) {  // MODE 1 (four per invocation) and MODE 0
    Check("chain", [s](Maker& m, msc_vk::Program& p) {
      // a float16 and a float32 input, broadcast third input
      const Tensor a = m.Act("a", s), b = m.Param("b", s), c = m.Act("c", {s[1]});
      const Tensor y = m.Out("y", s);
      ops::ElementwiseChain(p, {a, b, c},
                            {ops::ChainBinary("add", ops::ChainInput(0), ops::ChainInput(1)),
                             ops::ChainUnary("nn.gelu", ops::ChainResult(0)),
                             ops::ChainBinary("multiply", ops::ChainResult(1), ops::ChainInput(2))},
                            y);
      return y;
    });
  }
  Check("add, float16 + float32", [](Maker& m, msc_vk::Program& p) {
    const Tensor a = m.Act("a", {4, 6}), y = m.Out("y", {4, 6});
    ops::Add(p, a, m.Param("b", {6}), y);
    return y;
  });
  Check("relu", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {37}), y = m.Out("y", {37});
    ops::Relu(p, x, y);
    return y;
  });
  Check("mean", [](Maker& m, msc_vk::Program& p) {
    const Tensor x = m.Act("x", {2, 16, 9}), y = m.Out("y", {2, 16});
    ops::Mean(p, x, y, {2}, false);
    return y;
  });
}

TEST_CASE("float kernels refuse activations that are not float32 or float16") {
  vkt::Arena ar(vkt::Ctx());
  msc_vk::Program p(vkt::Ctx());
  const Tensor x = ar.Alloc("x", {2, 8}, DType::kInt32), y = ar.Alloc("y", {2, 8});
  vkt::ExpectError([&] { ops::Softmax(p, x, y); },
                   "nn.softmax 'y': tensor 'x' int32 [2, 8] is int32; the Vulkan shaders take "
                   "float32 or float16");
}

TEST_CASE("a float16 output needs the embedded +f16 variant (msc_vk_embed_shaders F16)") {
  // "binary" has no f16 variant (the dtype-generic kernels write float16 from "+ext"): stands for a
  // float kernel whose project was built without F16.
  vkt::Arena ar(vkt::Ctx());
  const Tensor y = ar.Alloc("y", {4}, DType::kFloat16), x = ar.Alloc("x", {4});
  CHECK(ops::detail::FloatStem("nn/softmax", {msc_vk::InTexel(x), msc_vk::Out(y)}) ==
        "nn/softmax+f16");
  CHECK(ops::detail::FloatStem("nn/softmax", {msc_vk::InTexel(y), msc_vk::Out(x)}) == "nn/softmax");
  vkt::ExpectError(
      [&] {
        ops::detail::FloatStem("binary", {msc_vk::InTexel(x), msc_vk::Out(y)});
      },
      "kernel 'y' writes float16, but shader 'binary+f16' is not embedded "
      "(msc_vk_embed_shaders(... F16)");
}
