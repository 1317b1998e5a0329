// Numerical tests of nn/conv2d, msc/conv2d_bias and the GEMM shaders (runtime ops_gemm.cc; the
// 1-D convolutions: test_ops_conv1d_pool1d.cc) against ref::Conv2d/Gemm.
#include <algorithm>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;
using vkt::RunProgram;
using Vec = std::vector<float>;

namespace {

struct ConvCase {
  const char* name;
  Shape x, w;
  std::array<int64_t, 2> stride;
  std::array<int64_t, 4> pad;
  std::array<int64_t, 2> dil;
  int64_t groups;
  bool bias;
  ops::Activation act;
};

void RunConv(msc_vk::Context& ctx, const ConvCase& c, uint32_t seed) {
  INFO("case " << c.name);
  vkt::Arena ar(ctx);
  const auto xd = vkt::Random(msc_vk::NumElements(c.x), seed);
  const auto wd = vkt::Random(msc_vk::NumElements(c.w), seed + 1);
  const auto bd = c.bias ? vkt::Random(c.w[0], seed + 2) : std::vector<float>{};
  Shape ys;
  const auto expect = vkt::Activate(
      ref::Conv2d(xd, c.x, wd, c.w, bd, c.stride, c.pad, c.dil, c.groups, &ys), c.act);
  msc_vk::Tensor x = ar.Input("x", c.x, xd), w = ar.Input("w", c.w, wd), y = ar.Alloc(c.name, ys);
  msc_vk::Program p(ctx);
  ops::Conv2dAttrs a{c.stride, c.pad, c.dil, c.groups, c.act};
  if (c.bias) {
    ops::Conv2dBias(p, x, w, ar.Input("b", {c.w[0]}, bd), y, a);
  } else {
    ops::Conv2d(p, x, w, y, a);
  }
  p.Run();
  vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4, c.name);
  vkt::ExpectNoValidationMessages(ctx);
}

// One call of the GEMM family by optype (the linear ops: b is the weight [N, K]; msc.linear_bias
// adds *bias; matmul: a @ b).
void GemmOp(msc_vk::Program& p, const std::string& op, const Tensor& a, const Tensor& b,
            const Tensor* bias, const Tensor& y, ops::Activation act, const Tensor* residual,
            const ops::NormEpilogue& norm = {}) {
  if (op == "nn.dense")
    ops::Dense(p, a, b, y, act, residual, norm);
  else if (op == "msc.linear_bias")
    ops::LinearBias(p, a, b, *bias, y, act, residual, norm);
  else if (op == "msc.linear")
    ops::Linear(p, a, b, y, act, residual, norm);
  else
    ops::Matmul(p, a, b, y, false, act, residual, norm);
}

}  // namespace

TEST_CASE("nn.conv2d / msc.conv2d_bias match the CPU reference") {
  const ops::Activation none{}, relu = ops::Activation::Relu(), relu6 = ops::Activation::Clip(0, 6);
  const ConvCase cases[] = {
      {"3x3 pad1 vec4-weights",
       {1, 8, 10, 10},
       {16, 8, 3, 3},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       1,
       false,
       none},
      {"7x7 stride2 pad3 bias relu",
       {2, 3, 17, 15},
       {20, 3, 7, 7},
       {2, 2},
       {3, 3, 3, 3},
       {1, 1},
       1,
       true,
       relu},
      {"asym pad dil2 groups2",
       {1, 8, 9, 11},
       {12, 4, 3, 3},
       {1, 1},
       {1, 0, 2, 1},
       {2, 2},
       2,
       true,
       none},
      {"depthwise stride2 relu6",
       {2, 12, 14, 14},
       {12, 1, 3, 3},
       {2, 2},
       {1, 1, 1, 1},
       {1, 1},
       12,
       true,
       relu6},
      {"depthwise 5x5 odd pixels",
       {1, 7, 7, 9},
       {7, 1, 5, 5},
       {1, 1},
       {2, 2, 2, 2},
       {1, 1},
       7,
       false,
       none},
      {"depth multiplier 2",
       {1, 4, 6, 6},
       {8, 1, 3, 3},
       {1, 1},
       {1, 1, 1, 1},
       {1, 1},
       4,
       false,
       none},
      {"1x1", {1, 32, 7, 7}, {64, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, none},
      {"3x3 stride2 non-square",
       {1, 16, 13, 21},
       {24, 16, 3, 3},
       {2, 1},
       {1, 1, 1, 1},
       {1, 1},
       1,
       true,
       relu},
      {"64ch 28x28", {1, 64, 28, 28}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false, none},
  };
  uint32_t seed = 10;
  for (const ConvCase& c : cases) RunConv(vkt::Ctx(), c, seed += 10);
}

TEST_CASE("nn.conv2d rejects shapes that do not fit") {
  vkt::Arena ar(vkt::Ctx());
  msc_vk::Tensor x = ar.Alloc("x", {1, 3, 8, 8}), w = ar.Alloc("w", {4, 3, 3, 3});
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Conv2d(p, x, w, ar.Alloc("conv", {1, 4, 8, 8}), {});
      },
      "nn.conv2d 'conv': output 'conv' float32 [1, 4, 8, 8] does not match the computed shape [1, "
      "4, 6, 6]");
  vkt::ExpectError(
      [&] {
        ops::Conv2d(p, x, w, ar.Alloc("g", {1, 4, 6, 6}), {{1, 1}, {0, 0, 0, 0}, {1, 1}, 2});
      },
      "groups = 2 does not fit");
}

TEST_CASE("msc.linear / msc.linear_bias / nn.dense at odd and vec4 sizes (register and tiled)") {
  struct Case {
    const char* stem;
    Shape x;
    int64_t N;
    bool bias;
    ops::Activation act;
  };
  const Case cases[] = {
      {"msc.linear", {37, 53}, 29, false, {}},  // scalar path, edge blocks
      {"msc.linear_bias", {2, 8, 64}, 96, true, ops::Activation::Relu()},  // vec4, 3-D input
      {"nn.dense", {5, 12}, 20, false, {}},                                // vec4 with N % 8 == 4
      {"msc.linear_bias", {1, 130}, 7, true, {}},                          // M = 1
  };
  uint32_t seed = 100;
  // half: the weight stored as float16 (generate --precision fp16), read through an R16 /
  // R16G16B16A16_SFLOAT view; the reference uses the same rounded weights.
  for (bool half : {false, true})
    for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()})
      for (const Case& c : cases) {
        auto& ctx = *ctx_ptr;
        INFO(c.stem << " x " << msc_vk::ShapeToString(c.x) << " N " << c.N << " tiled "
                    << ctx.use_tiled_kernels() << " float16 weight " << half);
        vkt::Arena ar(ctx);
        const int64_t K = c.x.back(), M = msc_vk::NumElements(c.x) / K;
        const auto xd = vkt::Random(M * K, ++seed);
        auto wd = vkt::Random(c.N * K, ++seed);
        const msc_vk::Tensor w =
            half ? ar.InputHalf("w", {c.N, K}, wd, &wd) : ar.Input("w", {c.N, K}, wd);
        const auto bd = c.bias ? vkt::Random(c.N, ++seed) : std::vector<float>{};
        auto expect = ref::Gemm(xd, wd, bd, 1, M, c.N, K, true, 0, 0);
        if (c.act.enabled) {
          for (float& v : expect) v = std::max(v, 0.0f);
        }
        Shape ys = c.x;
        ys.back() = c.N;
        msc_vk::Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", ys);
        msc_vk::Program p(ctx);
        if (std::string(c.stem) == "nn.dense")
          ops::Dense(p, x, w, y, c.act);
        else if (c.bias)
          ops::LinearBias(p, x, w, ar.Input("b", {c.N}, bd), y, c.act);
        else
          ops::Linear(p, x, w, y, c.act);
        p.Run();
        vkt::ExpectClose(ar.Read(y), expect);
        vkt::ExpectNoValidationMessages(ctx);
      }
}

TEST_CASE("matmul / nn.batch_matmul with batch broadcasting, transpose_b and 1-D operands") {
  struct Case {
    const char* name;
    Shape a, b, y;
    bool trans_b;
    int64_t batch, M, N, K, a_bstride, b_bstride;  // for the reference (flattened batch)
  };
  const Case cases[] = {
      {"scalar path", {33, 18}, {18, 7}, {33, 7}, false, 1, 33, 7, 18, 0, 0},
      {"vec4 transpose_b batched",
       {4, 16, 8},
       {4, 24, 8},
       {4, 16, 24},
       true,
       4,
       16,
       24,
       8,
       128,
       192},
      {"broadcast a batch", {1, 16, 16}, {5, 16, 16}, {5, 16, 16}, false, 5, 16, 16, 16, 0, 256},
      {"1-D a", {20}, {3, 20, 5}, {3, 5}, false, 3, 1, 5, 20, 0, 100},
      {"1-D b", {2, 6, 9}, {9}, {2, 6}, false, 2, 6, 1, 9, 54, 0},
      {"big", {128, 256}, {256, 200}, {128, 200}, false, 1, 128, 200, 256, 0, 0},
  };
  uint32_t seed = 200;
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()})
    for (const Case& c : cases) {
      auto& ctx = *ctx_ptr;
      INFO("case " << c.name << " tiled " << ctx.use_tiled_kernels());
      vkt::Arena ar(ctx);
      const auto ad = vkt::Random(msc_vk::NumElements(c.a), ++seed),
                 bd = vkt::Random(msc_vk::NumElements(c.b), ++seed);
      const auto expect =
          ref::Gemm(ad, bd, {}, c.batch, c.M, c.N, c.K, c.trans_b, c.a_bstride, c.b_bstride);
      msc_vk::Tensor a = ar.Input("a", c.a, ad), b = ar.Input("b", c.b, bd), y = ar.Alloc("y", c.y);
      msc_vk::Program p(ctx);
      ops::Matmul(p, a, b, y, c.trans_b);
      p.Run();
      vkt::ExpectClose(ar.Read(y), expect);
      vkt::ExpectNoValidationMessages(ctx);
    }

  auto& ctx = vkt::Ctx();
  SUBCASE("4-D batch broadcast [2,3,17,20] @ [3,20,12]") {
    vkt::Arena ar(ctx);
    const auto ad = vkt::Random(2 * 3 * 17 * 20, 301), bd = vkt::Random(3 * 20 * 12, 302);
    std::vector<float> expect;
    for (int i = 0; i < 2; ++i) {
      std::vector<float> ai(ad.begin() + i * 3 * 340, ad.begin() + (i + 1) * 3 * 340);
      auto part = ref::Gemm(ai, bd, {}, 3, 17, 12, 20, false, 340, 240);
      expect.insert(expect.end(), part.begin(), part.end());
    }
    msc_vk::Tensor a = ar.Input("a", {2, 3, 17, 20}, ad), b = ar.Input("b", {3, 20, 12}, bd);
    msc_vk::Tensor y = ar.Alloc("y", {2, 3, 17, 12});
    msc_vk::Program p(ctx);
    ops::Matmul(p, a, b, y);
    p.Run();
    vkt::ExpectClose(ar.Read(y), expect);
    vkt::ExpectNoValidationMessages(ctx);
  }

  SUBCASE("nn.batch_matmul") {
    vkt::Arena ar(ctx);
    const auto ad = vkt::Random(3 * 10 * 6, 401), bd = vkt::Random(3 * 6 * 14, 402);
    msc_vk::Tensor a = ar.Input("a", {3, 10, 6}, ad), b = ar.Input("b", {3, 6, 14}, bd),
                   y = ar.Alloc("y", {3, 10, 14});
    msc_vk::Program p(ctx);
    ops::BatchMatmul(p, a, b, y);
    p.Run();
    vkt::ExpectClose(ar.Read(y), ref::Gemm(ad, bd, {}, 3, 10, 14, 6, false, 60, 84));
    vkt::ExpectNoValidationMessages(ctx);
  }

  SUBCASE("mismatched inner dims are an error") {
    vkt::Arena ar(ctx);
    msc_vk::Program p(ctx);
    vkt::ExpectError(
        [&] {
          ops::Matmul(p, ar.Alloc("a", {4, 5}), ar.Alloc("b", {6, 3}), ar.Alloc("mm", {4, 3}));
        },
        "matmul 'mm': inner dims differ");
  }
}

TEST_CASE("the GEMM family adds the fused residual before the activation (register and tiled)") {
  // y = act(x @ w^T (+ bias) + r) for msc.linear / msc.linear_bias / nn.dense, y = act(a @ b + r)
  // for matmul: scalar and vec4 epilogues (N % 4), partial column blocks (N % 8 == 4, odd N),
  // batched and broadcast matmul; on the register path (Ctx) and the tiled one (StagingCtx).
  struct Case {
    const char* op;
    Shape a, b, y;  // linear family: a = x, b = w [N, K]; matmul: a @ b
    bool bias;
    ops::Activation act;
    int64_t batch, M, N, K, a_bstride, b_bstride;  // for ref::Gemm (flattened batch)
  };
  const ops::Activation relu = ops::Activation::Relu(), relu6 = ops::Activation::Clip(0, 6);
  const Case cases[] = {
      // scalar path, edge blocks
      {"msc.linear", {37, 53}, {29, 53}, {37, 29}, false, relu, 1, 37, 29, 53, 0, 0},
      // vec4 epilogue, 3-D input
      {"msc.linear_bias", {2, 8, 64}, {96, 64}, {2, 8, 96}, true, relu, 1, 16, 96, 64, 0, 0},
      // vec4 with N % 8 == 4
      {"nn.dense", {5, 12}, {20, 12}, {5, 20}, false, relu6, 1, 5, 20, 12, 0, 0},
      // M = 1, odd N
      {"msc.linear_bias", {1, 130}, {7, 130}, {1, 7}, true, {}, 1, 1, 7, 130, 0, 0},
      {"matmul", {33, 18}, {18, 7}, {33, 7}, false, relu, 1, 33, 7, 18, 0, 0},
      // a's batch broadcast
      {"matmul", {1, 16, 16}, {5, 16, 16}, {5, 16, 16}, false, relu6, 5, 16, 16, 16, 0, 256},
      // batched, vec4
      {"matmul", {3, 12, 20}, {3, 20, 8}, {3, 12, 8}, false, {}, 3, 12, 8, 20, 240, 160},
  };
  uint32_t seed = 900;
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()})
    for (const Case& c : cases) {
      auto& ctx = *ctx_ptr;
      INFO(c.op << " " << msc_vk::ShapeToString(c.a) << " @ " << msc_vk::ShapeToString(c.b)
                << " tiled " << ctx.use_tiled_kernels());
      vkt::Arena ar(ctx);
      const bool linear = std::string(c.op) != "matmul";
      const auto ad = vkt::Random(msc_vk::NumElements(c.a), ++seed);
      const auto bd = vkt::Random(msc_vk::NumElements(c.b), ++seed);
      const auto biasd = c.bias ? vkt::Random(c.N, ++seed) : std::vector<float>{};
      auto sum = ref::Gemm(ad, bd, biasd, c.batch, c.M, c.N, c.K, linear, c.a_bstride, c.b_bstride);
      const auto rd = vkt::Random(sum.size(), ++seed);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += rd[i];  // the unfused graph's add
      const auto expect = vkt::Activate(sum, c.act);
      msc_vk::Tensor a = ar.Input("a", c.a, ad), b = ar.Input("b", c.b, bd), y = ar.Alloc("y", c.y);
      const msc_vk::Tensor r = ar.Input("r", c.y, rd);
      msc_vk::Program p(ctx);
      const Tensor bias = ar.Input("bias", {c.N}, c.bias ? biasd : Vec(c.N, 0.0f));
      GemmOp(p, c.op, a, b, &bias, y, c.act, &r);
      p.Run();
      vkt::ExpectClose(ar.Read(y), expect);
      vkt::ExpectNoValidationMessages(ctx);
    }
  SUBCASE("a residual of another shape or on the output's bytes is an error") {
    vkt::Arena ar(vkt::Ctx());
    msc_vk::Program p(vkt::Ctx());
    msc_vk::Tensor x = ar.Alloc("x", {4, 8}), w = ar.Alloc("w", {6, 8}), y = ar.Alloc("fc", {4, 6});
    msc_vk::Tensor row = ar.Alloc("row", {6});
    vkt::ExpectError([&] { ops::Linear(p, x, w, y, {}, &row); },
                     "msc.linear 'fc': residual 'row' float32 [6] does not have the output's "
                     "shape [4, 6]");
    vkt::ExpectError(
        [&] {
          ops::Matmul(p, x, ar.Alloc("b", {8, 6}), y, false, {}, &y);
        },
        "matmul 'fc': residual 'fc' float32 [4, 6] shares bytes with the output");
    CHECK(p.num_dispatches() == 0);
  }
}

TEST_CASE(
    "register GEMM: A rows shuffled through the subgroup (+sg) match per-invocation fetches") {
  // The same GEMMs on the register path with subgroup shuffles (the default context, when the
  // device's compute subgroups shuffle) and without (optional features off): both against the
  // reference. Shapes cover edge row blocks (M % 16 != 0), lanes past N (which must still take
  // part in the shuffles), both vec4 paths, the scalar path, batches and the fused epilogue.
  msc_vk::ContextOptions o;
  o.validation = true;
  o.tiled_kernels = 0;
  msc_vk::Context with_sg(o);
  o.disable_optional_features = true;
  msc_vk::Context without_sg(o);
  REQUIRE(without_sg.features().subgroup_shuffle_size == 0);
  struct Case {
    const char* name;
    Shape a, b, y;
    bool trans_b;
    int64_t batch, M, N, K, a_bstride, b_bstride;
  };
  const Case cases[] = {
      {"vec4, N % 8 == 4, edge rows", {37, 24}, {24, 52}, {37, 52}, false, 1, 37, 52, 24, 0, 0},
      {"vec4 transpose_b, lanes past N",
       {21, 36},
       {600, 36},
       {21, 600},
       true,
       1,
       21,
       600,
       36,
       0,
       0},
      {"scalar", {19, 7}, {7, 13}, {19, 13}, false, 1, 19, 13, 7, 0, 0},
      {"scalar transpose_b", {40, 9}, {11, 9}, {40, 11}, true, 1, 40, 11, 9, 0, 0},
      {"batched broadcast", {1, 33, 16}, {3, 16, 20}, {3, 33, 20}, false, 3, 33, 20, 16, 0, 320},
  };
  const ops::Activation relu = ops::Activation::Relu();
  uint32_t seed = 1700;
  for (msc_vk::Context* ctx_ptr : {&with_sg, &without_sg})
    for (const Case& c : cases) {
      auto& ctx = *ctx_ptr;
      const uint32_t sg = ctx.features().subgroup_shuffle_size;
      INFO(c.name << ", subgroup shuffle size " << sg);
      vkt::Arena ar(ctx, 8u << 20);
      const auto ad = vkt::Random(msc_vk::NumElements(c.a), ++seed);
      const auto bd = vkt::Random(msc_vk::NumElements(c.b), ++seed);
      auto sum = ref::Gemm(ad, bd, {}, c.batch, c.M, c.N, c.K, c.trans_b, c.a_bstride, c.b_bstride);
      const auto rd = vkt::Random(sum.size(), ++seed);
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += rd[i];
      msc_vk::Tensor a = ar.Input("a", c.a, ad), b = ar.Input("b", c.b, bd), y = ar.Alloc("y", c.y);
      const msc_vk::Tensor r = ar.Input("r", c.y, rd);
      msc_vk::Program p(ctx);
      p.EnableProfiling();
      ops::Matmul(p, a, b, y, c.trans_b, relu, &r);
      p.Run();
      vkt::ExpectClose(ar.Read(y), vkt::Activate(sum, relu));
      const bool sg_kernel = p.Profile().count("matmul+sg") != 0;
      CHECK(sg_kernel == (sg == 4 || sg == 8 || sg == 16));
      CHECK(sg_kernel != (p.Profile().count("matmul") != 0));
      vkt::ExpectNoValidationMessages(ctx);
    }
}

TEST_CASE("batch_matmul transpose_a / transpose_b and msc.matmul") {
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    msc_vk::Context& ctx = *ctx_ptr;
    const int64_t B = 3, M = 19, K = 12, N = 10;
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        INFO("transpose_a " << ta << " transpose_b " << tb);
        vkt::Arena ar(ctx, 1 << 20);
        const Vec ad = vkt::Random(B * M * K, 50 + ta), bd = vkt::Random(B * K * N, 60 + tb);
        // The reference takes a as [B, M, K]: transpose the stored [B, K, M] for transpose_a.
        Vec a_mk = ad;
        if (ta) {
          for (int64_t b = 0; b < B; ++b)
            for (int64_t m = 0; m < M; ++m)
              for (int64_t k = 0; k < K; ++k) a_mk[(b * M + m) * K + k] = ad[(b * K + k) * M + m];
        }
        const Vec expect = ref::Gemm(a_mk, bd, {}, B, M, N, K, tb, M * K, K * N);
        Tensor a = ar.Input("a", ta ? Shape{B, K, M} : Shape{B, M, K}, ad);
        Tensor b = ar.Input("b", tb ? Shape{B, N, K} : Shape{B, K, N}, bd);
        Tensor y = ar.Alloc("bmm", {B, M, N});
        RunProgram(ctx, 1, [&](msc_vk::Program& p) { ops::BatchMatmul(p, a, b, y, ta, tb); });
        vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
      }
    }
    vkt::Arena ar(ctx, 1 << 20);
    const Vec ad = vkt::Random(2 * 5 * 8, 70), bd = vkt::Random(8 * 4, 71);
    const Vec expect = ref::Gemm(ad, bd, {}, 2, 5, 4, 8, false, 5 * 8, 0);
    Tensor a = ar.Input("a", {2, 5, 8}, ad), b = ar.Input("b", {8, 4}, bd);
    Tensor y = ar.Alloc("mm", {2, 5, 4});
    RunProgram(ctx, 1, [&](msc_vk::Program& p) { ops::MscMatmul(p, a, b, y); });
    vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
    vkt::ExpectNoValidationMessages(ctx);
  }
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::BatchMatmul(p, ar.Alloc("a", {2, 3, 4}), ar.Alloc("b", {2, 3, 5}),
                         ar.Alloc("bmm", {2, 4, 5}), false, false);
      },
      "nn.batch_matmul 'bmm': inner dims differ");
}

TEST_CASE("the GEMM family's fused layer_norm epilogue matches the GEMM then ops::LayerNorm") {
  // z = layer_norm(act(x @ w^T (+ bias) (+ r))): in the GEMM's dispatch on the register path (the
  // whole row in one workgroup: odd N, partial row blocks, N past one 64-lane workgroup, batched
  // matmul, y kept or not, gamma / beta or not), a second dispatch (ops::LayerNorm) otherwise
  // (tiled kernels, a norm over another axis, rows past 2048 columns, a matmul whose y lost the N
  // dim). Expected: the same graph
  // unfused on the same device.
  struct Case {
    const char* op;
    Shape a, b, y;
    bool bias, residual, keep_y, affine;
    std::vector<int64_t> axes;
    bool in_kernel;  // on the register path
  };
  const Case cases[] = {
      {"msc.linear_bias", {1, 16, 64}, {64, 64}, {1, 16, 64}, true, true, false, true, {-1}, true},
      {"msc.linear", {37, 53}, {29, 53}, {37, 29}, false, true, true, true, {1}, true},
      {"nn.dense", {5, 12}, {700, 12}, {5, 700}, false, false, true, false, {-1}, true},
      {"matmul", {3, 12, 20}, {3, 20, 8}, {3, 12, 8}, false, true, false, true, {-1}, true},
      {"msc.linear_bias", {4, 6}, {9, 6}, {4, 9}, true, false, false, true, {0}, false},
      {"msc.linear", {3, 8}, {2100, 8}, {3, 2100}, false, false, false, true, {-1}, false},
      // a 1-D b: y [M] has no N dim, so its last axis is not the GEMM's row
      {"matmul", {4, 8}, {8}, {4}, false, false, false, false, {-1}, false},
  };
  uint32_t seed = 1300;
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()})
    for (const Case& c : cases) {
      auto& ctx = *ctx_ptr;
      INFO(c.op << " " << msc_vk::ShapeToString(c.a) << " @ " << msc_vk::ShapeToString(c.b)
                << " tiled " << ctx.use_tiled_kernels());
      vkt::Arena ar(ctx);
      const std::string op = c.op;
      const int64_t N = c.y.back();
      const Shape pshape = {c.y[c.axes[0] < 0 ? c.y.size() - 1 : c.axes[0]]};
      const Tensor a = ar.Input("a", c.a, vkt::Random(msc_vk::NumElements(c.a), ++seed));
      const Tensor b = ar.Input("b", c.b, vkt::Random(msc_vk::NumElements(c.b), ++seed));
      const Tensor bias = ar.Input("bias", {N}, vkt::Random(N, ++seed));
      const Tensor r = ar.Input("r", c.y, vkt::Random(msc_vk::NumElements(c.y), ++seed));
      const Tensor g = ar.Input("g", pshape, vkt::Random(pshape[0], ++seed, 0.5f, 1.5f));
      const Tensor beta = ar.Input("beta", pshape, vkt::Random(pshape[0], ++seed));
      // relu, and unary epilogues (the "+act" kernels: the activation before the row sums)
      const auto i = &c - cases;
      const ops::Activation act = i % 3 == 0   ? ops::Activation::Relu()
                                  : i % 3 == 1 ? ops::Activation::Unary("nn.gelu")
                                               : ops::Activation::Unary("nn.silu");
      auto gemm = [&](msc_vk::Program& p, const Tensor& y, const ops::NormEpilogue& norm) {
        GemmOp(p, op, a, b, &bias, y, act, c.residual ? &r : nullptr, norm);
      };
      // unfused
      const Tensor y0 = ar.Alloc("y0", c.y), z0 = ar.Alloc("z0", c.y);
      msc_vk::Program p0(ctx);
      gemm(p0, y0, {});
      ops::LayerNorm(p0, y0, c.affine ? &g : nullptr, c.affine ? &beta : nullptr, z0, c.axes, 1e-5);
      p0.Run();
      // fused
      const Tensor y = ar.Alloc("y", c.y), z = ar.Alloc("z", c.y);
      msc_vk::Program p(ctx);
      const ops::NormEpilogue norm{
          &z, c.affine ? &g : nullptr, c.affine ? &beta : nullptr, c.axes, 1e-5, c.keep_y};
      gemm(p, y, norm);
      p.Run();
      const bool one = c.in_kernel && !ctx.use_tiled_kernels();
      CHECK(p.num_dispatches() == (one ? 1u : 2u));
      vkt::ExpectClose(ar.Read(z), ar.Read(z0), 1e-5, 1e-5, "z");
      if (c.keep_y || !one) vkt::ExpectClose(ar.Read(y), ar.Read(y0), 1e-6, 1e-6, "y");
      vkt::ExpectNoValidationMessages(ctx);
    }
  SUBCASE("an output on y's or the residual's bytes is an error") {
    vkt::Arena ar(vkt::Ctx());
    msc_vk::Program p(vkt::Ctx());
    const Tensor x = ar.Alloc("x", {4, 8}), w = ar.Alloc("w", {6, 8}), y = ar.Alloc("fc", {4, 6});
    const Tensor r = ar.Alloc("r", {4, 6});
    const ops::NormEpilogue on_y{&y};
    vkt::ExpectError([&] { ops::Linear(p, x, w, y, {}, nullptr, on_y); },
                     "msc.linear 'fc': layer_norm epilogue output 'fc' float32 [4, 6] shares bytes "
                     "with y");
    const ops::NormEpilogue on_r{&r};
    vkt::ExpectError([&] { ops::Linear(p, x, w, y, {}, &r, on_r); },
                     "msc.linear 'fc': layer_norm epilogue output 'r' float32 [4, 6] shares bytes "
                     "with the residual");
    CHECK(p.num_dispatches() == 0);
  }
}

TEST_CASE("the GEMM family runs a unary epilogue after bias and residual (register and tiled)") {
  // Each GEMM op with a unary op as its activation (gelu, silu, ... in turn, two per op and
  // context), against the same GEMM unfused (no activation, the same bias and residual) followed
  // by ops::Unary on the same device: the same float32 math, so within 1e-6. Odd N (scalar
  // stores) and N % 4 == 0 (vec4 stores), on the register path (Ctx) and the tiled one
  // (StagingCtx); the fused program has one dispatch fewer. The convolutions:
  // test_conv_algos.cc.
  const std::vector<vkt::UnaryEpilogue>& acts = vkt::UnaryEpilogues();
  struct Case {
    const char* op;
    Shape a, b, y;
    bool bias, residual;
  };
  const Case cases[] = {
      {"msc.linear_bias", {2, 5, 24}, {20, 24}, {2, 5, 20}, true, true},
      {"msc.linear", {2, 5, 24}, {16, 24}, {2, 5, 16}, false, false},
      {"nn.dense", {7, 12}, {9, 12}, {7, 9}, false, true},
      {"matmul", {3, 12, 20}, {3, 20, 8}, {3, 12, 8}, false, true},
  };
  size_t next = 0;
  uint32_t seed = 1500;
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    auto& ctx = *ctx_ptr;
    for (const Case& c : cases) {
      for (int k = 0; k < 2; ++k) {
        const vkt::UnaryEpilogue& u = acts[next++ % acts.size()];
        INFO(c.op << " + " << u.op << " tiled " << ctx.use_tiled_kernels());
        vkt::Arena ar(ctx);
        const Tensor a = ar.Input("a", c.a, vkt::Random(msc_vk::NumElements(c.a), ++seed, -2, 2));
        const Tensor b = ar.Input("b", c.b, vkt::Random(msc_vk::NumElements(c.b), ++seed));
        const Tensor bias = ar.Input("bias", {c.y.back()}, vkt::Random(c.y.back(), ++seed));
        const Tensor r = ar.Input("r", c.y, vkt::Random(msc_vk::NumElements(c.y), ++seed));
        const Tensor t = ar.Alloc("t", c.y), y0 = ar.Alloc("y0", c.y), y = ar.Alloc("y", c.y);
        msc_vk::Program unfused(ctx);
        GemmOp(unfused, c.op, a, b, c.bias ? &bias : nullptr, t, ops::Activation::None(),
               c.residual ? &r : nullptr);
        ops::Unary(unfused, u.op, t, y0, u.p0, u.p1);
        unfused.Run();
        msc_vk::Program fused(ctx);
        GemmOp(fused, c.op, a, b, c.bias ? &bias : nullptr, y,
               ops::Activation::Unary(u.op, u.p0, u.p1), c.residual ? &r : nullptr);
        CHECK(fused.num_dispatches() == unfused.num_dispatches() - 1);
        fused.Run();
        vkt::ExpectClose(ar.Read(y), ar.Read(y0), 1e-6, 1e-6, u.op);
      }
    }
    vkt::ExpectNoValidationMessages(ctx);
  }
  vkt::ExpectError([] { ops::Activation::Unary("isnan"); },
                   "unary op 'isnan' is not float-valued: it cannot be an epilogue");
  vkt::ExpectError([] { ops::Activation::Unary("nn.softmax"); },
                   "epilogue 'nn.softmax' is not a Vulkan unary op");
}
