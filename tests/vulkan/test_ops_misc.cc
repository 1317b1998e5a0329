// Numerical tests of the elementwise, normalization, pooling, reduction and copy shaders.
#include <cmath>
#include <limits>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

// Runs `add` (which adds kernels writing y) on a fresh program and returns y.
template <class F>
std::vector<float> Run(vkt::Arena& ar, const Tensor& y, F&& add) {
  msc_vk::Program p(vkt::Ctx());
  add(p);
  p.Run();
  return ar.Read(y);
}

}  // namespace

TEST_CASE("add / subtract / multiply / divide with broadcasting") {
  struct Case {
    const char* name;
    Shape a, b;
  };
  const Case cases[] = {
      {"same shape vec4", {2, 3, 4, 4}, {2, 3, 4, 4}},
      {"same shape odd", {3, 5, 7}, {3, 5, 7}},
      {"broadcast middle", {2, 3, 4, 5}, {3, 1, 5}},
      {"outer product", {4, 1}, {1, 6}},
      {"b scalar vec4", {2, 8}, {1}},
      {"a rank-0", {}, {8}},
      {"channel bias", {2, 16, 5, 5}, {1, 16, 1, 1}},
      {"b scalar odd", {7}, {}},
      {"channel bias vec4 stores", {2, 16, 4, 4}, {1, 16, 1, 1}},  // MODE 4, B inner stride 0
      {"row vector", {3, 8}, {8}},                                 // MODE 4, B inner stride 1
      {"column x row", {4, 1}, {1, 8}},                            // MODE 4, both kinds
  };
  uint32_t seed = 1000;
  for (const Case& c : cases) {
    for (int op = 0; op < 4; ++op) {
      INFO("case " << c.name << " op " << op);
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      const auto ad = vkt::Random(msc_vk::NumElements(c.a), ++seed);
      const auto bd = vkt::Random(msc_vk::NumElements(c.b), ++seed, 0.5f, 2.0f);
      Shape ys;
      const auto expect = ref::Binary(ad, c.a, bd, c.b, op, &ys);
      Tensor a = ar.Input("a", c.a, ad), b = ar.Input("b", c.b, bd), y = ar.Alloc("y", ys);
      const auto got = Run(ar, y, [&](msc_vk::Program& p) {
        if (op == 0) ops::Add(p, a, b, y);
        if (op == 1) ops::Subtract(p, a, b, y);
        if (op == 2) ops::Multiply(p, a, b, y);
        if (op == 3) ops::Divide(p, a, b, y);
      });
      vkt::ExpectClose(got, expect, 1e-6, 1e-6);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Add(p, ar.Alloc("a", {2, 3}), ar.Alloc("b", {4}), ar.Alloc("sum", {2, 3}));
      },
      "add 'sum': output 'sum' float32 [2, 3] is not the broadcast of");
}

TEST_CASE("unary ops: relu, sigmoid, tanh, gelu, clip (vec4 and odd sizes, extreme values)") {
  for (int64_t n : {1000, 1001}) {
    auto xd = vkt::Random(n, static_cast<uint32_t>(n), -6.0f, 6.0f);
    xd[0] = 80.0f;
    xd[1] = -80.0f;
    xd[2] = 0.0f;
    struct Case {
      const char* name;
      float (*fn)(float);
    };
    const Case cases[] = {
        {"relu", [](float v) { return v > 0 ? v : 0.0f; }},
        {"sigmoid", [](float v) { return static_cast<float>(1.0 / (1.0 + std::exp(-double(v)))); }},
        {"tanh", [](float v) { return static_cast<float>(std::tanh(double(v))); }},
        {"gelu",
         [](float v) {
           return static_cast<float>(0.5 * v * (1.0 + std::erf(double(v) / std::sqrt(2.0))));
         }},
    };
    for (const Case& c : cases) {
      INFO(c.name << " n=" << n);
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      Tensor x = ar.Input("x", {n}, xd), y = ar.Alloc("y", {n});
      std::vector<float> expect(n);
      for (int64_t i = 0; i < n; ++i) expect[i] = c.fn(xd[i]);
      const auto got = Run(ar, y, [&](msc_vk::Program& p) {
        const std::string name = c.name;
        if (name == "relu") ops::Relu(p, x, y);
        if (name == "sigmoid") ops::Sigmoid(p, x, y);
        if (name == "tanh") ops::Tanh(p, x, y);
        if (name == "gelu") ops::Gelu(p, x, y);
      });
      vkt::ExpectClose(got, expect, 1e-5, 1e-5);
    }
    for (auto [lo, hi] : {std::pair<float, float>{-0.5f, kInf}, {-kInf, 0.25f}, {-1.0f, 1.0f}}) {
      INFO("clip " << lo << " " << hi);
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      Tensor x = ar.Input("x", {n}, xd), y = ar.Alloc("y", {n});
      std::vector<float> expect(n);
      for (int64_t i = 0; i < n; ++i) expect[i] = std::min(std::max(xd[i], lo), hi);
      vkt::ExpectClose(Run(ar, y, [&](msc_vk::Program& p) { ops::Clip(p, x, y, lo, hi); }), expect,
                       0, 0);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("nn.batch_norm (inference)") {
  struct Case {
    Shape x;
    int64_t axis;
  };
  for (const Case& c : {Case{{2, 5, 7, 3}, 1}, Case{{2, 4, 8, 8}, 1}, Case{{6, 10}, -1}}) {
    INFO("x " << msc_vk::ShapeToString(c.x) << " axis " << c.axis);
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const int64_t ax = c.axis < 0 ? c.axis + static_cast<int64_t>(c.x.size()) : c.axis, C = c.x[ax];
    int64_t inner = 1;
    for (size_t d = ax + 1; d < c.x.size(); ++d) inner *= c.x[d];
    const auto xd = vkt::Random(msc_vk::NumElements(c.x), 7), g = vkt::Random(C, 8),
               b = vkt::Random(C, 9);
    const auto m = vkt::Random(C, 10), v = vkt::Random(C, 11, 0.1f, 2.0f);
    const double eps = 1e-5;
    std::vector<float> expect(xd.size());
    for (size_t i = 0; i < xd.size(); ++i) {
      const int64_t ch = (static_cast<int64_t>(i) / inner) % C;
      expect[i] = static_cast<float>((xd[i] - m[ch]) / std::sqrt(v[ch] + eps) * g[ch] + b[ch]);
    }
    Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", c.x);
    Tensor tg = ar.Input("g", {C}, g), tb = ar.Input("b", {C}, b), tm = ar.Input("m", {C}, m),
           tv = ar.Input("v", {C}, v);
    vkt::ExpectClose(
        Run(ar, y,
            [&](msc_vk::Program& p) { ops::BatchNorm(p, x, tg, tb, tm, tv, y, c.axis, eps); }),
        expect, 1e-5, 1e-5);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("nn.max_pool2d / nn.avg_pool2d / nn.adaptive_avg_pool2d") {
  struct Case {
    const char* name;
    int kind;  // 0 max, 1 avg
    Shape x;
    ops::Pool2dAttrs a;
  };
  const Case cases[] = {
      {"max 3x3 s2 p1", 0, {2, 3, 15, 15}, {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true}},
      {"max 2x2 s2 ceil", 0, {1, 2, 7, 7}, {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, true}},
      {"max 3x3 dil2 p2", 0, {1, 2, 9, 9}, {{3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, false, true}},
      {"avg 3x3 s2 p1 ceil incl",
       1,
       {2, 3, 10, 10},
       {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, true}},
      {"avg 3x3 s2 p1 ceil excl",
       1,
       {2, 3, 10, 10},
       {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, false}},
      {"avg 2x2 s2", 1, {1, 4, 8, 8}, {{2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, true}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const auto xd = vkt::Random(msc_vk::NumElements(c.x), 77);
    Shape ys;
    const auto expect = ref::Pool2d(xd, c.x, c.kind, c.a.pool_size, c.a.strides, c.a.padding,
                                    c.a.dilation, c.a.ceil_mode, c.a.count_include_pad, &ys);
    Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", ys);
    const auto got = Run(ar, y, [&](msc_vk::Program& p) {
      if (c.kind == 0)
        ops::MaxPool2d(p, x, y, c.a);
      else
        ops::AvgPool2d(p, x, y, c.a);
    });
    vkt::ExpectClose(got, expect, 1e-6, 1e-5);
  }
  for (auto [xs, oh, ow] : {std::tuple<Shape, int64_t, int64_t>{{1, 3, 7, 7}, 3, 3},
                            {{2, 2, 5, 9}, 2, 4},
                            {{1, 8, 8, 8}, 1, 1}}) {
    INFO("adaptive " << msc_vk::ShapeToString(xs));
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const auto xd = vkt::Random(msc_vk::NumElements(xs), 78);
    Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("y", {xs[0], xs[1], oh, ow});
    vkt::ExpectClose(Run(ar, y, [&](msc_vk::Program& p) { ops::AdaptiveAvgPool2d(p, x, y); }),
                     ref::AdaptiveAvgPool2d(xd, xs, oh, ow), 1e-6, 1e-5);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::MaxPool2d(p, ar.Alloc("x", {1, 1, 7, 7}), ar.Alloc("pool", {1, 1, 4, 4}),
                       {{2, 2}, {2, 2}});
      },
      "nn.max_pool2d 'pool': output 'pool' float32 [1, 1, 4, 4] does not match the computed shape "
      "[1, 1, 3, 3]");
}

TEST_CASE("nn.softmax along an axis") {
  struct Case {
    Shape x;
    int64_t axis;
    float scale;
  };
  for (const Case& c : {Case{{4, 10}, -1, 1.0f}, Case{{2, 5, 3, 4}, 1, 1.0f},
                        Case{{3, 7}, 1, 100.0f}, Case{{1, 1000}, -1, 5.0f}}) {
    INFO("x " << msc_vk::ShapeToString(c.x) << " axis " << c.axis);
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const auto xd = vkt::Random(msc_vk::NumElements(c.x), 5, -c.scale, c.scale);
    const int64_t ax = c.axis < 0 ? c.axis + static_cast<int64_t>(c.x.size()) : c.axis;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < ax; ++d) outer *= c.x[d];
    for (size_t d = ax + 1; d < c.x.size(); ++d) inner *= c.x[d];
    Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", c.x);
    vkt::ExpectClose(Run(ar, y, [&](msc_vk::Program& p) { ops::Softmax(p, x, y, c.axis); }),
                     ref::Softmax(xd, outer, c.x[ax], inner), 1e-6, 1e-4);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("mean over axes, with and without keepdims") {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    bool keepdims;
    Shape y;
  };
  const Case cases[] = {
      {{2, 3, 5, 7}, {2, 3}, true, {2, 3, 1, 1}},
      {{2, 3, 5, 7}, {-1, 2}, false, {2, 3}},
      {{2, 5, 7}, {1}, false, {2, 7}},
      {{2, 3, 4, 7}, {0, 2}, false, {3, 7}},
      {{4, 6}, {}, false, {}},
  };
  for (const Case& c : cases) {
    INFO("x " << msc_vk::ShapeToString(c.x) << " -> " << msc_vk::ShapeToString(c.y));
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const auto xd = vkt::Random(msc_vk::NumElements(c.x), 9);
    std::vector<bool> reduce(c.x.size(), c.axes.empty());
    for (int64_t a : c.axes) reduce[a < 0 ? a + c.x.size() : a] = true;
    Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", c.y);
    vkt::ExpectClose(
        Run(ar, y, [&](msc_vk::Program& p) { ops::Mean(p, x, y, c.axes, c.keepdims); }),
        ref::Mean(xd, c.x, reduce), 1e-6, 1e-5);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("reshape / squeeze / expand_dims, permute_dims / transpose, concat, strided_slice") {
  auto& ctx = vkt::Ctx();
  SUBCASE("reshape copies, or aliases with no kernel") {
    for (int64_t n : {24, 15}) {
      vkt::Arena ar(ctx, 1 << 20);
      const auto xd = vkt::Random(n, 3);
      Tensor x = ar.Input("x", {n}, xd), y = ar.Alloc("y", {n / 3, 3});
      vkt::ExpectClose(Run(ar, y, [&](msc_vk::Program& p) { ops::Reshape(p, x, y); }), xd, 0, 0);
      Tensor z = ar.Alloc("z", {1, n});
      vkt::ExpectClose(Run(ar, z, [&](msc_vk::Program& p) { ops::ExpandDims(p, y, z); }), xd, 0, 0);
      Tensor s = ar.Alloc("s", {n});
      vkt::ExpectClose(Run(ar, s, [&](msc_vk::Program& p) { ops::Squeeze(p, z, s); }), xd, 0, 0);
    }
    vkt::Arena ar(ctx, 1 << 20);
    Tensor x = ar.Alloc("x", {2, 6});
    Tensor alias = x;
    alias.shape = {3, 4};
    msc_vk::Program p(ctx);
    ops::Reshape(p, x, alias);
    CHECK(p.num_kernels() == 0);
  }
  SUBCASE("permute_dims and transpose") {
    struct Case {
      Shape x;
      std::vector<int64_t> axes;
    };
    for (const Case& c : {Case{{2, 3, 4, 5}, {0, 2, 3, 1}}, Case{{2, 3, 4}, {}},
                          Case{{5, 7}, {1, 0}}, Case{{2, 1, 3, 4, 2}, {4, 0, 3, 1, 2}},
                          Case{{2, 8, 3, 4}, {0, 2, 1, 3}}, Case{{4, 8}, {1, 0}}}) {
      INFO("x " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(ctx, 1 << 20);
      const auto xd = vkt::Random(msc_vk::NumElements(c.x), 4);
      std::vector<int64_t> axes = c.axes;
      if (axes.empty()) {
        for (int64_t i = static_cast<int64_t>(c.x.size()) - 1; i >= 0; --i) axes.push_back(i);
      }
      Shape ys;
      std::vector<int64_t> st, xs(c.x.size(), 1);
      for (int i = static_cast<int>(c.x.size()) - 2; i >= 0; --i) xs[i] = xs[i + 1] * c.x[i + 1];
      for (int64_t a : axes) {
        ys.push_back(c.x[a]);
        st.push_back(xs[a]);
      }
      Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("y", ys);
      const auto expect = ref::Gather(xd, ys, st, 0);
      vkt::ExpectClose(Run(ar, y, [&](msc_vk::Program& p) { ops::PermuteDims(p, x, y, c.axes); }),
                       expect, 0, 0);
      vkt::ExpectClose(Run(ar, y, [&](msc_vk::Program& p) { ops::Transpose(p, x, y, c.axes); }),
                       expect, 0, 0);
    }
  }
  SUBCASE("concat") {
    for (int64_t axis : {1, -1}) {
      vkt::Arena ar(ctx, 1 << 20);
      const Shape s0 = axis == 1 ? Shape{2, 3, 4} : Shape{2, 3, 4};
      const Shape s1 = axis == 1 ? Shape{2, 1, 4} : Shape{2, 3, 1};
      const Shape s2 = axis == 1 ? Shape{2, 5, 4} : Shape{2, 3, 6};
      const auto d0 = vkt::Random(24, 1), d1 = vkt::Random(msc_vk::NumElements(s1), 2),
                 d2 = vkt::Random(msc_vk::NumElements(s2), 3);
      Shape ys = s0;
      const int ax = axis == 1 ? 1 : 2;
      ys[ax] = s0[ax] + s1[ax] + s2[ax];
      std::vector<float> expect;
      for (int64_t i = 0; i < 2; ++i) {  // outer = dim 0 for axis 1; dims 0,1 for axis -1
        const int64_t rows = axis == 1 ? 1 : 3;
        for (int64_t r = 0; r < rows; ++r) {
          for (auto [d, s] :
               {std::pair<const std::vector<float>*, Shape>{&d0, s0}, {&d1, s1}, {&d2, s2}}) {
            const int64_t chunk = axis == 1 ? s[1] * s[2] : s[2];
            const int64_t at = (i * rows + r) * chunk;
            expect.insert(expect.end(), d->begin() + at, d->begin() + at + chunk);
          }
        }
      }
      Tensor t0 = ar.Input("t0", s0, d0), t1 = ar.Input("t1", s1, d1), t2 = ar.Input("t2", s2, d2),
             y = ar.Alloc("y", ys);
      vkt::ExpectClose(Run(ar, y,
                           [&](msc_vk::Program& p) {
                             ops::Concat(p, {t0, t1, t2}, y, axis);
                           }),
                       expect, 0, 0);
    }
  }
  SUBCASE("strided_slice with negative steps and clamping") {
    vkt::Arena ar(ctx, 1 << 20);
    const Shape xs = {4, 10, 6};
    const auto xd = vkt::Random(240, 6);
    Tensor x = ar.Input("x", xs, xd);
    // axis 1: 2, 5, 8; axis 2: 5, 3, 1.
    Tensor y = ar.Alloc("y", {4, 3, 3});
    vkt::ExpectClose(Run(ar, y,
                         [&](msc_vk::Program& p) {
                           ops::StridedSlice(p, x, y, {2, -1}, {9, 0}, {3, -2}, {1, 2});
                         }),
                     ref::Gather(xd, {4, 3, 3}, {60, 18, -2}, 2 * 6 + 5), 0, 0);
    // axis 0: 1..end (clamped 100), axis 2: 0..4.
    Tensor z = ar.Alloc("z", {3, 10, 4});
    vkt::ExpectClose(Run(ar, z,
                         [&](msc_vk::Program& p) {
                           ops::StridedSlice(p, x, z, {1, 0}, {100, 4}, {}, {0, 2});
                         }),
                     ref::Gather(xd, {3, 10, 4}, {60, 6, 1}, 60), 0, 0);
    msc_vk::Program p(ctx);
    vkt::ExpectError(
        [&] {
          ops::StridedSlice(p, x, ar.Alloc("slice", {4, 2, 3}), {2, -1}, {9, 0}, {3, -2}, {1, 2});
        },
        "strided_slice 'slice': output 'slice' float32 [4, 2, 3] does not match the computed shape "
        "[4, 3, 3]");
  }
  vkt::ExpectNoValidationMessages(ctx);
}
