// The convolution algorithms of ops_gemm.cc (conv2d.glsl MODEs) against ref::Conv2d on odd
// shapes: Winograd F(2x2 / 4x4, 3x3) (constant weights, >= 16 channels), the 1x1 GEMM and the
// depthwise kernel, each also checked to be the algorithm actually used (dispatch count / profile
// rows), on the UMA context and on the staging (non-UMA) one, whose Winograd weight transform
// downloads the weights through a staging buffer. Every algorithm also with the fused residual
// (Conv2dAttrs::residual): y = act(conv + bias + residual).
#include <algorithm>
#include <cmath>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;

namespace {

struct AlgoCase {
  const char* name;
  Shape x, w;
  std::array<int64_t, 2> stride;
  std::array<int64_t, 4> pad;
  int64_t groups;
  bool bias;
  ops::Activation act;
  size_t dispatches;  // expected with the fast algorithms on a CPU device
  const char* row;    // expected profile row
  std::array<int64_t, 2> dil = {1, 1};
};

// Runs one case; `constant` marks the weights constant (Program::MarkConstant) as Model does;
// `residual` adds a fused residual (random, y's shape) before the activation; `half_weights`
// stores W as float16 (generate --precision fp16), the reference computing with W rounded the
// same way, so the float32 tolerance holds.
void RunCase(msc_vk::Context& ctx, const AlgoCase& c, uint32_t seed, bool constant,
             size_t dispatches, const std::string& row, bool residual = false,
             bool half_weights = false) {
  INFO("case " << c.name << (constant ? " (constant weights)" : "") << " staging " << !ctx.uma()
               << (residual ? " + residual" : "") << (half_weights ? " float16 weights" : ""));
  vkt::Arena ar(ctx);
  const auto xd = vkt::Random(msc_vk::NumElements(c.x), seed);
  auto wd = vkt::Random(msc_vk::NumElements(c.w), seed + 1);
  msc_vk::Tensor w;
  if (half_weights) w = ar.InputHalf("w", c.w, wd, &wd);  // wd: the rounded values from here on
  const auto bd = c.bias ? vkt::Random(c.w[0], seed + 2) : std::vector<float>{};
  Shape ys;
  auto conv = ref::Conv2d(xd, c.x, wd, c.w, bd, c.stride, c.pad, c.dil, c.groups, &ys);
  const auto rd = residual ? vkt::Random(conv.size(), seed + 3) : std::vector<float>{};
  for (size_t i = 0; i < rd.size(); ++i) conv[i] += rd[i];  // the unfused graph's add
  const auto expect = vkt::Activate(conv, c.act);
  if (!half_weights) w = ar.Input("w", c.w, wd);
  msc_vk::Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc(c.name, ys);
  msc_vk::Tensor r;
  if (residual) r = ar.Input("r", ys, rd);
  msc_vk::Program p(ctx);
  // Before any kernel: the query pool is sized when the program is finalized (it was sized here,
  // by the dispatches recorded so far, and then overran: validation errors and a crash).
  p.EnableProfiling();
  if (constant) p.MarkConstant(w);
  ops::Conv2dAttrs a{c.stride, c.pad, c.dil, c.groups, c.act, residual ? &r : nullptr};
  if (c.bias) {
    ops::Conv2dBias(p, x, w, ar.Input("b", {c.w[0]}, bd), y, a);
  } else {
    ops::Conv2d(p, x, w, y, a);
  }
  CHECK(p.num_dispatches() == dispatches);
  p.Run();
  CHECK(p.Profile().count(row) == 1);
  CHECK(p.profiled_runs() == 1);
  // Winograd sums 16 transformed products per channel: allow a little more rounding.
  vkt::ExpectClose(ar.Read(y), expect, 2e-4, 2e-4, c.name);
  // A second run reuses the transformed weights; ResetProfile forgets the first.
  p.ResetProfile();
  CHECK(p.Profile().empty());
  p.Run();
  CHECK(p.profiled_runs() == 1);
  vkt::ExpectClose(ar.Read(y), expect, 2e-4, 2e-4, c.name);
  vkt::ExpectNoValidationMessages(ctx);
}

const ops::Activation kNone{}, kRelu = ops::Activation::Relu(),
                               kRelu6 = ops::Activation::Clip(0, 6);

}  // namespace

TEST_CASE("Winograd F(2x2,3x3) / F(4x4,3x3) convolution matches the reference on odd shapes") {
  const char* W = "msc/conv2d_bias [winograd gemm]";
  const char* Wn = "nn/conv2d [winograd gemm]";
  const AlgoCase cases[] = {
      // odd channels (scalar U view), odd spatial sizes (partial tiles), batch 2, bias + relu
      {"odd", {2, 17, 9, 7}, {19, 17, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, true, kRelu, 3, W},
      // no padding (valid conv), vec4 U view, no bias
      {"valid", {1, 16, 6, 5}, {16, 16, 3, 3}, {1, 1}, {0, 0, 0, 0}, 1, false, kNone, 3, Wn},
      // asymmetric padding, relu6
      {"asym pad", {1, 20, 8, 11}, {24, 20, 3, 3}, {1, 1}, {1, 0, 2, 1}, 1, true, kRelu6, 3, W},
      // tiny spatial size: 1x1 input, padding 1 -> 1x1 output (one partial tile per image)
      {"1x1 input", {3, 32, 1, 1}, {40, 32, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, true, kNone, 3, W},
      // a resnet-like layer: 7x7 (T = 16 tiles) with many channels
      {"7x7 wide", {1, 64, 7, 7}, {72, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, true, kRelu, 3, W},
  };
  uint32_t seed = 500;
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    for (const AlgoCase& c : cases) RunCase(*ctx, c, seed += 10, true, c.dispatches, c.row);
  }
  // Both tile sizes on every case (the automatic choice above picks F = 4 only for "odd").
  for (const char* tile : {"2", "4"}) {
    vkt::ScopedEnv env("MSC_VK_WINOGRAD_TILE", tile);
    INFO("F = " << tile);
    for (const AlgoCase& c : cases) RunCase(vkt::Ctx(), c, seed += 10, true, c.dispatches, c.row);
  }
  // Weights not marked constant (an activation could be the weight): im2col + GEMM.
  RunCase(vkt::Ctx(), cases[0], 900, false, 2, "msc/conv2d_bias [im2col gemm]");
  // MSC_VK_CONV=direct forces the direct kernel.
  vkt::ScopedEnv env("MSC_VK_CONV", "direct");
  RunCase(vkt::Ctx(), cases[1], 910, true, 1, "nn/conv2d [direct]");
}

TEST_CASE("Winograd F(4x4,3x3) accuracy: deep channel sums stay near the direct kernel's error") {
  // 256 channels of post-ReLU-like activations (uniform [0, 1)) and He-scaled weights, 3x3,
  // padding 1, a 16x16 image: the worst absolute error of each kernel against ref::Conv2d (double
  // sums). With conv2d.glsl's F(4x4) points (0, -1, 1, 1/2, -2) F(4x4) measured 5.8e-6,
  // below the direct kernel's 6.7e-6 (F(2x2): 1.6e-6); with Lavin & Gray's (0, +-1, +-2), whose
  // transforms multiply by up to 8, 1.9e-5, which fails here.
  const int64_t C = 256, O = 32, H = 16, W = 16;
  const Shape xs = {1, C, H, W}, ws = {O, C, 3, 3}, ys = {1, O, H, W};
  auto xd = vkt::Random(msc_vk::NumElements(xs), 4242, 0.0f, 1.0f);
  const float scale = static_cast<float>(std::sqrt(2.0 / (C * 9)) * std::sqrt(3.0));
  auto wd = vkt::Random(msc_vk::NumElements(ws), 4243, -scale, scale);
  Shape ref_shape;  // the reference sums in double and rounds once (<= 2.4e-7 here)
  const auto ref = ref::Conv2d(xd, xs, wd, ws, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, &ref_shape);
  REQUIRE(ref_shape == ys);
  auto max_error = [&](const char* env, const char* value, const std::string& row) {
    vkt::ScopedEnv scoped(env, value);
    vkt::Arena ar(vkt::Ctx());
    msc_vk::Tensor x = ar.Input("x", xs, xd), w = ar.Input("w", ws, wd), y = ar.Alloc("y", ys);
    msc_vk::Program p(vkt::Ctx());
    p.EnableProfiling();
    p.MarkConstant(w);
    ops::Conv2d(p, x, w, y, ops::Conv2dAttrs{{1, 1}, {1, 1, 1, 1}, {1, 1}, 1, kNone, nullptr});
    p.Run();
    CHECK(p.Profile().count(row) == 1);
    const std::vector<float> got = ar.Read(y);
    double err = 0;
    for (size_t i = 0; i < got.size(); ++i)
      err = std::max(err, std::abs(double(got[i]) - double(ref[i])));
    return err;
  };
  const double f4 = max_error("MSC_VK_WINOGRAD_TILE", "4", "nn/conv2d [winograd out]");
  const double f2 = max_error("MSC_VK_WINOGRAD_TILE", "2", "nn/conv2d [winograd out]");
  const double direct = max_error("MSC_VK_CONV", "direct", "nn/conv2d [direct]");
  INFO("max abs error: F(4x4) " << f4 << ", F(2x2) " << f2 << ", direct " << direct);
  CHECK(f4 < 1e-5);
  CHECK(f2 < 5e-6);
  CHECK(direct < 1.5e-5);
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("1x1 convolution as a register-blocked GEMM matches the reference") {
  const char* G = "msc/conv2d_bias [1x1 gemm]";
  const AlgoCase cases[] = {
      // P = 35 (scalar X view), C = 13 (scalar W view), batch 2, relu6
      {"odd", {2, 13, 5, 7}, {21, 13, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kRelu6, 1, G},
      // vec4 views, P = 64, O = 40 (edge row block)
      {"vec4", {1, 32, 8, 8}, {40, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kNone, 1, G},
      // P % 8 == 4 (second vec4 column clamped), no bias
      {"P%8==4",
       {1, 8, 2, 6},
       {17, 8, 1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1,
       false,
       kRelu,
       1,
       "nn/conv2d [1x1 gemm]"},
      // 1x1 spatial, batch 3, few channels
      {"1x1 spatial", {3, 3, 1, 1}, {5, 3, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kNone, 1, G},
      // P % 4 == 1, 2, 3 (X rows at every unaligned texel offset, XU4); squeezenet's 13x13 and
      // 27x27; the last row's texels past X clamped (P = 21: elements 100..107 of 105)
      {"P%4==1", {1, 5, 3, 7}, {9, 5, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kRelu, 1, G},
      {"P%4==2", {2, 6, 5, 2}, {18, 6, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kNone, 1, G},
      {"P%4==3",
       {1, 9, 1, 11},
       {33, 9, 1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1,
       false,
       kRelu6,
       1,
       "nn/conv2d [1x1 gemm]"},
      {"13x13", {1, 16, 13, 13}, {20, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kRelu, 1, G},
  };
  uint32_t seed = 700;
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    for (const AlgoCase& c : cases) RunCase(*ctx, c, seed += 10, false, c.dispatches, c.row);
  }
  {  // the same with float X fetches where P % 4 != 0
    vkt::ScopedEnv env("MSC_VK_CONV_OFF", "gemm1x1_xu4");
    for (const AlgoCase& c : cases) RunCase(vkt::Ctx(), c, seed += 10, false, c.dispatches, c.row);
  }
  // Padded or strided 1x1 convolutions go through im2col.
  const AlgoCase strided = {
      "stride 2", {1, 16, 9, 9}, {8, 16, 1, 1}, {2, 2}, {0, 0, 0, 0},
      1,          true,          kNone,         2,      "msc/conv2d_bias [im2col gemm]"};
  RunCase(vkt::Ctx(), strided, 800, false, 2, strided.row);
}

TEST_CASE("depthwise convolution kernel matches the reference (3x3 / 5x5, stride 1 / 2)") {
  const char* D = "msc/conv2d_bias [depthwise]";
  const AlgoCase cases[] = {
      // odd width (scalar stores), batch 2, relu6
      {"3x3 s1 odd", {2, 5, 7, 9}, {5, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, 5, true, kRelu6, 1, D},
      // OW % 4 == 0 (vec4 stores), OH odd (last row pair half outside)
      {"3x3 s1 vec4", {1, 3, 11, 16}, {3, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, 3, true, kNone, 1, D},
      // mobilenet's stride-2 layers: 14x14 -> 7x7
      {"3x3 s2", {1, 6, 14, 14}, {6, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 6, true, kRelu6, 1, D},
      // 5x5 with asymmetric padding, no bias
      {"5x5 s1 asym",
       {1, 4, 10, 13},
       {4, 1, 5, 5},
       {1, 1},
       {2, 1, 1, 2},
       4,
       false,
       kNone,
       1,
       "nn/conv2d [depthwise]"},
      {"5x5 s2", {2, 3, 17, 12}, {3, 1, 5, 5}, {2, 2}, {2, 2, 2, 2}, 3, true, kRelu, 1, D},
      // tiny: 1x1 input with padding, and a valid conv whose output is 1x1
      {"1x1 input", {1, 7, 1, 1}, {7, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, 7, true, kNone, 1, D},
      {"valid 3x3", {1, 2, 3, 3}, {2, 1, 3, 3}, {2, 2}, {0, 0, 0, 0}, 2, true, kNone, 1, D},
      // W % 4 == 0 (rows fetched as vec4 texels) with every DW_OFF = (-pl) mod 4: mobilenet's
      // stride-2 112 -> 56 shape (pl 1: 3), a wide row of several blocks (pl 0: 0), 5x5 with
      // pl 3 (1) and pl 2 (2, the "5x5 s2" case above)
      {"3x3 s2 W%4", {1, 4, 16, 16}, {4, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, 4, true, kRelu6, 1, D},
      {"3x3 s1 wide pl0", {1, 2, 5, 40}, {2, 1, 3, 3}, {1, 1}, {1, 0, 1, 2}, 2, true, kNone, 1, D},
      {"5x5 s1 pl3", {1, 3, 9, 8}, {3, 1, 5, 5}, {1, 1}, {2, 3, 2, 1}, 3, true, kRelu, 1, D},
  };
  uint32_t seed = 1100;
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    for (const AlgoCase& c : cases) RunCase(*ctx, c, seed += 10, false, c.dispatches, c.row);
  }
  {  // the same without the vec4 row fetches
    vkt::ScopedEnv env("MSC_VK_CONV_OFF", "depthwise_vec4");
    for (const AlgoCase& c : cases) RunCase(vkt::Ctx(), c, seed += 10, false, c.dispatches, c.row);
  }
  // Dilation, a 7x7 kernel or unequal strides stay on the direct kernel's depthwise path.
  const AlgoCase other = {
      "7x7", {1, 4, 9, 9}, {4, 1, 7, 7}, {1, 1}, {3, 3, 3, 3},
      4,     true,         kNone,        1,      "msc/conv2d_bias [depthwise direct]"};
  RunCase(vkt::Ctx(), other, 1300, false, 1, other.row);
}

TEST_CASE("im2col + GEMM convolution matches the reference (strides, padding, dilation)") {
  const char* I = "msc/conv2d_bias [im2col gemm]";
  const AlgoCase cases[] = {
      // resnet / squeezenet stem: 7x7 stride 2 pad 3, C = 3 (K = 147: scalar W), P odd
      {"7x7 s2", {2, 3, 17, 15}, {20, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, 1, true, kRelu, 2, I},
      // stride-2 3x3, K = 135, P = 16 (vec4 stores)
      {"3x3 s2", {1, 15, 8, 8}, {24, 15, 3, 3}, {2, 2}, {1, 1, 1, 1}, 1, true, kNone, 2, I},
      // non-square kernel and stride, asymmetric padding, no bias
      {"3x2 s(2,1)",
       {1, 5, 9, 7},
       {7, 5, 3, 2},
       {2, 1},
       {0, 1, 2, 0},
       1,
       false,
       kRelu6,
       2,
       "nn/conv2d [im2col gemm]"},
      // tiny spatial size: 2x2 input, 3x3 kernel, padding 1, batch 3
      {"tiny", {3, 5, 2, 2}, {5, 5, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, true, kNone, 2, I},
      // dilation (2, 3) with padding: a stride-1 3x3 that Winograd must not take
      {"dilated",
       {1, 17, 11, 12},
       {16, 17, 3, 3},
       {1, 1},
       {2, 3, 2, 3},
       1,
       true,
       kNone,
       2,
       I,
       {2, 3}},
  };
  uint32_t seed = 1500;
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    for (const AlgoCase& c : cases) RunCase(*ctx, c, seed += 10, false, c.dispatches, c.row);
  }
  // The dilated case with constant weights is still not Winograd.
  RunCase(vkt::Ctx(), cases[4], 1700, true, 2, I);
  // K = C*KH*KW % 4 == 0 with a stride (resnet's downsampling 3x3): vec4 weights, no padding.
  const AlgoCase k4 = {
      "3x3 s2 K%4==0", {1, 16, 8, 8}, {24, 16, 3, 3}, {2, 2}, {1, 1, 1, 1}, 1, true, kNone, 2, I};
  RunCase(vkt::Ctx(), k4, 1710, true, 2, I);
}

TEST_CASE("max pooling row-block kernel matches the reference (and the generic kernel's cases)") {
  struct Case {
    const char* name;
    Shape x;
    ops::Pool2dAttrs a;
    bool rows;  // the row-block kernel applies
  };
  const Case cases[] = {
      // resnet18's stem pool (odd sizes), squeezenet's ceil_mode pools
      {"3x3 s2 p1", {2, 3, 15, 13}, {{3, 3}, {2, 2}, {1, 1, 1, 1}}, true},
      {"3x3 s2 ceil", {1, 4, 13, 13}, {{3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true}, true},
      {"3x3 s2 ceil even", {1, 2, 12, 18}, {{3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true}, true},
      {"2x2 s2", {1, 5, 9, 16}, {{2, 2}, {2, 2}}, true},
      {"3x3 s1 asym pad", {1, 2, 6, 11}, {{3, 3}, {1, 1}, {1, 0, 1, 2}}, true},
      {"2x2 s1 tiny", {3, 2, 2, 2}, {{2, 2}, {1, 1}}, true},
      {"1x1 input pad", {1, 3, 1, 1}, {{3, 3}, {2, 2}, {1, 1, 1, 1}}, true},
      // not covered: generic kernel
      {"3x3 s3", {1, 2, 9, 9}, {{3, 3}, {3, 3}}, false},
      {"3x2", {1, 2, 9, 9}, {{3, 2}, {2, 2}}, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    msc_vk::Context& ctx = vkt::Ctx();
    vkt::Arena ar(ctx, 1 << 20);
    const auto xd = vkt::Random(msc_vk::NumElements(c.x), 91);
    Shape ys;
    const auto expect = ref::Pool2d(xd, c.x, 0, c.a.pool_size, c.a.strides, c.a.padding,
                                    c.a.dilation, c.a.ceil_mode, c.a.count_include_pad, &ys);
    msc_vk::Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", ys);
    msc_vk::Program p(ctx);
    ops::MaxPool2d(p, x, y, c.a);
    // The row-block kernel: one invocation per (plane, 2x8 block), planes packed into 64-lane
    // workgroups; the generic one: one per output.
    REQUIRE(p.num_dispatches() == 1);
    const uint64_t planes = static_cast<uint64_t>(c.x[0] * c.x[1]);
    const uint64_t blocks = static_cast<uint64_t>((ys[2] + 1) / 2 * ((ys[3] + 7) / 8));
    const uint64_t outputs = static_cast<uint64_t>(msc_vk::NumElements(ys));
    CHECK(p.num_workgroups() == (c.rows ? (planes * blocks + 63) / 64 : (outputs + 63) / 64));
    p.Run();
    vkt::ExpectClose(ar.Read(y), expect, 0, 0, c.name);  // max is exact
    vkt::ExpectNoValidationMessages(ctx);
  }
}

// The store variants of every algorithm (checked by its profile row): scalar and vec4 stores
// (OH*OW or OW % 4), partial edge blocks, batches, bias or not, relu / relu6 / none. Winograd's
// weights are constant; the direct cases run under MSC_VK_CONV=direct (the GPUs' kernel).
struct EpilogueCases {
  std::vector<AlgoCase> wino, fast, direct;
};

const EpilogueCases& Epilogues() {
  static const EpilogueCases cases = [] {
    const char* W = "msc/conv2d_bias [winograd out]";
    const char* Wn = "nn/conv2d [winograd out]";
    const std::vector<AlgoCase> wino = {
        {"wino odd", {2, 17, 9, 7}, {19, 17, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, true, kRelu, 3, W},
        {"wino valid",
         {1, 16, 6, 5},
         {16, 16, 3, 3},
         {1, 1},
         {0, 0, 0, 0},
         1,
         false,
         kRelu6,
         3,
         Wn},
        {"wino 7x7", {1, 64, 7, 7}, {72, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, true, kRelu, 3, W},
    };
    const char* G = "msc/conv2d_bias [1x1 gemm]";
    const char* D = "msc/conv2d_bias [depthwise]";
    const char* I = "msc/conv2d_bias [im2col gemm]";
    const char* Gn = "nn/conv2d [1x1 gemm]";
    const char* Dn = "nn/conv2d [depthwise]";
    const char* Dd = "msc/conv2d_bias [depthwise direct]";
    const char* In = "nn/conv2d [im2col gemm]";
    const std::vector<AlgoCase> fast = {
        {"1x1 odd", {2, 13, 5, 7}, {21, 13, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kRelu6, 1, G},
        {"1x1 vec4", {1, 32, 8, 8}, {40, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true, kRelu, 1, G},
        {"1x1 P%8==4", {1, 8, 2, 6}, {17, 8, 1, 1}, {1, 1}, {0, 0, 0, 0}, 1, false, kNone, 1, Gn},
        {"dw 3x3 odd", {2, 5, 7, 9}, {5, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, 5, true, kRelu6, 1, D},
        {"dw 3x3 vec4", {1, 3, 11, 16}, {3, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, 3, true, kRelu, 1, D},
        {"dw 5x5 s2", {2, 3, 17, 12}, {3, 1, 5, 5}, {2, 2}, {2, 2, 2, 2}, 3, false, kRelu, 1, Dn},
        {"dw 7x7 direct", {1, 4, 9, 9}, {4, 1, 7, 7}, {1, 1}, {3, 3, 3, 3}, 4, true, kRelu, 1, Dd},
        {"im2col 7x7 s2",
         {2, 3, 17, 15},
         {20, 3, 7, 7},
         {2, 2},
         {3, 3, 3, 3},
         1,
         true,
         kRelu,
         2,
         I},
        {"im2col 3x3 s2",
         {1, 15, 8, 8},
         {24, 15, 3, 3},
         {2, 2},
         {1, 1, 1, 1},
         1,
         true,
         kRelu6,
         2,
         I},
        {"im2col tiny", {3, 5, 2, 2}, {5, 5, 3, 3}, {1, 1}, {1, 1, 1, 1}, 1, false, kRelu, 2, In},
    };
    // The direct kernel: vec4 stores, scalar stores with edge blocks, groups, depthwise.
    const std::vector<AlgoCase> direct = {
        {"direct vec4",
         {1, 8, 10, 10},
         {16, 8, 3, 3},
         {1, 1},
         {1, 1, 1, 1},
         1,
         true,
         kRelu,
         1,
         "msc/conv2d_bias [direct]"},
        {"direct odd",
         {2, 6, 7, 5},
         {18, 3, 3, 2},
         {2, 1},
         {1, 0, 0, 1},
         2,
         false,
         kRelu6,
         1,
         "nn/conv2d [direct]"},
        {"direct dw",
         {2, 5, 7, 9},
         {5, 1, 3, 3},
         {1, 1},
         {1, 1, 1, 1},
         5,
         true,
         kRelu,
         1,
         "msc/conv2d_bias [depthwise direct]"},
    };
    return EpilogueCases{wino, fast, direct};
  }();
  return cases;
}

TEST_CASE("every convolution algorithm adds the fused residual before the activation") {
  // A residual added after the clamp, at the wrong element or not at all fails the comparison
  // (the residual and the conv outputs are random in [-1, 1)).
  const EpilogueCases& e = Epilogues();
  uint32_t seed = 2000;
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    for (const AlgoCase& c : e.wino) RunCase(*ctx, c, seed += 10, true, c.dispatches, c.row, true);
    for (const AlgoCase& c : e.fast) RunCase(*ctx, c, seed += 10, false, c.dispatches, c.row, true);
  }
  for (const char* tile : {"2", "4"}) {
    vkt::ScopedEnv env("MSC_VK_WINOGRAD_TILE", tile);
    INFO("F = " << tile);
    for (const AlgoCase& c : e.wino)
      RunCase(vkt::Ctx(), c, seed += 10, true, c.dispatches, c.row, true);
  }
  vkt::ScopedEnv env("MSC_VK_CONV", "direct");
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()})
    for (const AlgoCase& c : e.direct) RunCase(*ctx, c, seed += 10, true, 1, c.row, true);
}

TEST_CASE("every convolution algorithm runs a unary epilogue after the residual") {
  // The cases of the residual test with a unary op as the activation (each op in turn), against
  // the same convolution unfused (no activation, the same residual) followed by ops::Unary on
  // the same device: the same float32 math, so within 1e-6. The algorithm is checked by its
  // profile row, and the fused program has one dispatch fewer. The kernels run their "+act"
  // shader variants (act.glsl): an activation applied before the residual, to a wrong element,
  // or lost on one store path fails the comparison.
  const std::vector<vkt::UnaryEpilogue>& acts = vkt::UnaryEpilogues();
  size_t next = 0;
  uint32_t seed = 3000;
  auto run = [&](msc_vk::Context& ctx, const AlgoCase& c, bool constant) {
    const vkt::UnaryEpilogue& u = acts[next++ % acts.size()];
    seed += 10;
    INFO("case " << c.name << " + " << u.op << " staging " << !ctx.uma());
    const int64_t OH =
        (c.x[2] + c.pad[0] + c.pad[2] - c.dil[0] * (c.w[2] - 1) - 1) / c.stride[0] + 1;
    const int64_t OW =
        (c.x[3] + c.pad[1] + c.pad[3] - c.dil[1] * (c.w[3] - 1) - 1) / c.stride[1] + 1;
    const Shape ys = {c.x[0], c.w[0], OH, OW};
    vkt::Arena ar(ctx);
    const msc_vk::Tensor x = ar.Input("x", c.x, vkt::Random(msc_vk::NumElements(c.x), seed, -2, 2));
    const msc_vk::Tensor w = ar.Input("w", c.w, vkt::Random(msc_vk::NumElements(c.w), seed + 1));
    const msc_vk::Tensor bias = ar.Input("b", {c.w[0]}, vkt::Random(c.w[0], seed + 2));
    const msc_vk::Tensor r = ar.Input("r", ys, vkt::Random(msc_vk::NumElements(ys), seed + 3));
    const msc_vk::Tensor t = ar.Alloc("t", ys), y0 = ar.Alloc("y0", ys), y = ar.Alloc("y", ys);
    auto conv = [&](msc_vk::Program& p, const msc_vk::Tensor& out, ops::Activation act) {
      if (constant) p.MarkConstant(w);
      const ops::Conv2dAttrs a{c.stride, c.pad, c.dil, c.groups, act, &r};
      if (c.bias)
        ops::Conv2dBias(p, x, w, bias, out, a);
      else
        ops::Conv2d(p, x, w, out, a);
    };
    msc_vk::Program unfused(ctx);
    conv(unfused, t, ops::Activation::None());
    ops::Unary(unfused, u.op, t, y0, u.p0, u.p1);
    unfused.Run();
    msc_vk::Program fused(ctx);
    fused.EnableProfiling();
    conv(fused, y, ops::Activation::Unary(u.op, u.p0, u.p1));
    CHECK(fused.num_dispatches() == unfused.num_dispatches() - 1);
    fused.Run();
    CHECK(fused.Profile().count(c.row) == 1);
    vkt::ExpectClose(ar.Read(y), ar.Read(y0), 1e-6, 1e-6, c.name);
    vkt::ExpectNoValidationMessages(ctx);
  };
  const EpilogueCases& e = Epilogues();
  for (const char* tile : {"2", "4"}) {  // Winograd's output stage: one case per tile size
    vkt::ScopedEnv env("MSC_VK_WINOGRAD_TILE", tile);
    INFO("F = " << tile);
    run(vkt::Ctx(), e.wino[tile[0] == '2' ? 0 : 2], true);
  }
  for (const AlgoCase& c : e.fast) run(vkt::Ctx(), c, false);
  vkt::ScopedEnv env("MSC_VK_CONV", "direct");
  for (const AlgoCase& c : e.direct) run(vkt::Ctx(), c, true);
}

TEST_CASE("every convolution algorithm reads float16 weights (generate --precision fp16)") {
  // W bound through R16 / R16G16B16A16_SFLOAT views; the host-side copies (Winograd's U, im2col's
  // zero-padded rows) keep float16 and convert on the way (also through the staging context's
  // downloads). The reference computes with the same rounded weights: a view of the wrong format
  // or texel size, or a U / padded copy written as float32 bits, fails at the float32 tolerance.
  const AlgoCase cases[] = {
      {"wino odd",
       {2, 17, 9, 7},
       {19, 17, 3, 3},
       {1, 1},
       {1, 1, 1, 1},
       1,
       true,
       kRelu,
       3,
       "msc/conv2d_bias [winograd gemm]"},
      {"wino vec4",
       {1, 16, 6, 5},
       {16, 16, 3, 3},
       {1, 1},
       {0, 0, 0, 0},
       1,
       false,
       kNone,
       3,
       "nn/conv2d [winograd gemm]"},
      {"1x1 scalar W",
       {2, 13, 5, 7},
       {21, 13, 1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1,
       true,
       kRelu6,
       1,
       "msc/conv2d_bias [1x1 gemm]"},
      {"1x1 vec4 W",
       {1, 32, 8, 8},
       {40, 32, 1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1,
       true,
       kNone,
       1,
       "msc/conv2d_bias [1x1 gemm]"},
      {"dw 3x3",
       {1, 3, 11, 16},
       {3, 1, 3, 3},
       {1, 1},
       {1, 1, 1, 1},
       3,
       true,
       kRelu,
       1,
       "msc/conv2d_bias [depthwise]"},
      {"im2col padded K",
       {2, 3, 17, 15},
       {20, 3, 7, 7},
       {2, 2},
       {3, 3, 3, 3},
       1,
       true,
       kRelu,
       2,
       "msc/conv2d_bias [im2col gemm]"},
      {"im2col vec4 K",
       {1, 16, 8, 8},
       {24, 16, 3, 3},
       {2, 2},
       {1, 1, 1, 1},
       1,
       true,
       kNone,
       2,
       "msc/conv2d_bias [im2col gemm]"},
  };
  uint32_t seed = 3000;
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()})
    for (const AlgoCase& c : cases)
      RunCase(*ctx, c, seed += 10, true, c.dispatches, c.row, false, true);
  {
    vkt::ScopedEnv env("MSC_VK_WINOGRAD_TILE", "4");
    RunCase(vkt::Ctx(), cases[0], seed += 10, true, 3, cases[0].row, false, true);
  }
  vkt::ScopedEnv env("MSC_VK_CONV", "direct");
  const AlgoCase direct = {"direct", {2, 6, 7, 5}, {18, 3, 3, 2}, {2, 1}, {1, 0, 0, 1},
                           2,        false,        kRelu6,        1,      "nn/conv2d [direct]"};
  RunCase(vkt::Ctx(), direct, seed += 10, true, 1, direct.row, false, true);
}

TEST_CASE(
    "small images pack channels into whole workgroups (depthwise, Winograd, im2col, direct, "
    "pool)") {
  // On a 7x7 output one channel has 4 depthwise blocks, 16 Winograd tiles and 7 im2col column
  // blocks: a workgroup (64 lanes) per channel left most lanes idle (mobilenet_v2's last depthwise
  // layers took 2 ms each). The kernels walk (channel, block) pairs instead; the results are
  // checked against the reference by the cases above (1x1 inputs, batches, odd channels).
  struct Case {
    const char* name;
    Shape x, w;
    std::array<int64_t, 2> stride;
    uint64_t workgroups;  // the packed grids (per channel: 960, 64 + 16 + 64, 576 + 1)
  };
  const Case cases[] = {
      {"depthwise 7x7x960", {1, 960, 7, 7}, {960, 1, 3, 3}, {1, 1}, 960 * 4 / 64},
      {"winograd 7x7x64", {1, 64, 7, 7}, {64, 64, 3, 3}, {1, 1}, 64 * 16 / 64 + 16 + 64 * 16 / 64},
      {"im2col 14x14 -> 7x7", {1, 64, 14, 14}, {64, 64, 3, 3}, {2, 2}, (576 * 7 + 63) / 64 + 1},
  };
  {  // squeezenet's last max pool: 27x27 -> 13x13, 14 blocks per channel
    vkt::Arena ar(vkt::Ctx());
    msc_vk::Tensor x = ar.Alloc("x", {1, 256, 27, 27}), y = ar.Alloc("y", {1, 256, 13, 13});
    msc_vk::Program p(vkt::Ctx());
    ops::MaxPool2d(p, x, y, {{3, 3}, {2, 2}});
    CHECK(p.num_workgroups() == 256 * 14 / 64);
  }
  {  // the direct kernel (GPUs): 4 channel blocks x 7 pixel blocks in one workgroup, not 4
    vkt::ScopedEnv direct("MSC_VK_CONV", "direct");
    vkt::Arena ar(vkt::Ctx());
    msc_vk::Tensor x = ar.Alloc("x", {2, 64, 7, 7}), w = ar.Alloc("w", {64, 64, 3, 3});
    msc_vk::Program p(vkt::Ctx());
    ops::Conv2d(p, x, w, ar.Alloc("y", {2, 64, 7, 7}), {{1, 1}, {1, 1, 1, 1}});
    CHECK(p.num_workgroups() == 2);  // one per image (grid z)
  }
  vkt::ScopedEnv tile("MSC_VK_WINOGRAD_TILE", "2");
  for (const Case& c : cases) {
    INFO(c.name);
    vkt::Arena ar(vkt::Ctx());
    msc_vk::Tensor x = ar.Alloc("x", c.x), w = ar.Alloc("w", c.w);
    msc_vk::Tensor y = ar.Alloc("y", {1, c.w[0], 7, 7});
    msc_vk::Program p(vkt::Ctx());
    p.MarkConstant(w);
    ops::Conv2d(p, x, w, y,
                {c.stride, {1, 1, 1, 1}, {1, 1}, c.x[1] == c.w[0] && c.w[1] == 1 ? c.x[1] : 1});
    CHECK(p.num_workgroups() == c.workgroups);
  }
}

TEST_CASE("a fused convolution residual must have the output's shape and its own bytes") {
  vkt::Arena ar(vkt::Ctx());
  msc_vk::Tensor x = ar.Alloc("x", {1, 3, 8, 8}), w = ar.Alloc("w", {4, 3, 3, 3});
  msc_vk::Tensor y = ar.Alloc("conv", {1, 4, 6, 6});
  msc_vk::Tensor bcast = ar.Alloc("bias4", {1, 4, 1, 1});
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Conv2d(p, x, w, y, {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1, kRelu, &bcast});
      },
      "nn.conv2d 'conv': residual 'bias4' float32 [1, 4, 1, 1] does not have the output's shape "
      "[1, 4, 6, 6] (a fused residual is not broadcast)");
  vkt::ExpectError(
      [&] {
        ops::Conv2d(p, x, w, y, {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1, kNone, &y});
      },
      "nn.conv2d 'conv': residual 'conv' float32 [1, 4, 6, 6] shares bytes with the "
      "output");
  // A view of y's bytes under another name (what a wrong memory plan would produce).
  msc_vk::Tensor alias = y;
  alias.name = "alias";
  alias.offset += 4;  // overlapping, not identical
  vkt::ExpectError(
      [&] {
        ops::Conv2d(p, x, w, y, {{1, 1}, {0, 0, 0, 0}, {1, 1}, 1, kNone, &alias});
      },
      "shares bytes with the output");
  CHECK(p.num_dispatches() == 0);
}

TEST_CASE("conv GEMMs with weight rows shuffled through the subgroup (+sg) match the reference") {
  // The GEMM MODEs (1x1, Winograd, im2col) on a context with subgroup shuffles (when the device
  // has them) and on one without (optional features off). The shapes give subgroups inside one
  // row block (the shuffled path) and subgroups straddling two (per-invocation fetches), edge
  // row blocks (O % 16 != 0) and the fused residual.
  msc_vk::ContextOptions o;
  o.validation = true;
  msc_vk::Context with_sg(o);
  o.disable_optional_features = true;
  msc_vk::Context without_sg(o);
  REQUIRE(without_sg.features().subgroup_shuffle_size == 0);
  const AlgoCase cases[] = {
      // P = 256: 32 column blocks, every subgroup in one row block
      {"1x1 wide",
       {1, 24, 16, 16},
       {40, 24, 1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1,
       true,
       kRelu,
       1,
       "msc/conv2d_bias [1x1 gemm]"},
      // P = 96: 12 column blocks, shuffled and straddling subgroups alternate; scalar W view
      {"1x1 mixed",
       {2, 13, 8, 12},
       {21, 13, 1, 1},
       {1, 1},
       {0, 0, 0, 0},
       1,
       false,
       kRelu6,
       1,
       "nn/conv2d [1x1 gemm]"},
      // F(2x2): 100 tiles, 13 column blocks
      {"winograd",
       {1, 16, 20, 20},
       {24, 16, 3, 3},
       {1, 1},
       {1, 1, 1, 1},
       1,
       true,
       kRelu,
       3,
       "msc/conv2d_bias [winograd gemm]"},
      // stride 2: im2col, P = 289 (Pp = 292), K = 144
      {"im2col",
       {1, 16, 33, 33},
       {20, 16, 3, 3},
       {2, 2},
       {1, 1, 1, 1},
       1,
       true,
       kNone,
       2,
       "msc/conv2d_bias [im2col gemm]"},
  };
  vkt::ScopedEnv env("MSC_VK_WINOGRAD_TILE", "2");
  uint32_t seed = 2100;
  for (msc_vk::Context* ctx : {&with_sg, &without_sg}) {
    INFO("subgroup shuffle size " << ctx->features().subgroup_shuffle_size);
    for (const AlgoCase& c : cases) {
      const bool winograd = std::string(c.name) == "winograd";
      RunCase(*ctx, c, seed += 10, winograd, c.dispatches, c.row);
      RunCase(*ctx, c, seed += 10, winograd, c.dispatches, c.row, true);
    }
  }
}
