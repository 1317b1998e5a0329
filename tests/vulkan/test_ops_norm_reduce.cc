// Numerical tests of the reductions (runtime ops_reduce.cc: sum, prod, max, min, mean, std,
// variance) and normalizations (ops_norm.cc: layer_norm, group_norm, rms_norm, log_softmax)
// against CPU references written here (double accumulation, from the formulas in ops.h / TOPI).
// Every test runs under the validated contexts of test_util.h and checks the dispatch count.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;
using vkt::RunProgram;
using Vec = std::vector<float>;

namespace {

using vkt::Ravel;
using vkt::Unravel;

// ---- reduction / normalization references ------------------------------------------------

// op: 0 sum 1 prod 2 max 3 min 4 mean 5 variance 6 std; output in row-major kept-dims order.
Vec RefReduce(int op, const Vec& x, const Shape& xs, const std::vector<bool>& red) {
  Shape ks;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (!red[d]) ks.push_back(xs[d]);
  }
  std::vector<std::vector<double>> groups(msc_vk::NumElements(ks));
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const std::vector<int64_t> c = Unravel(i, xs);
    std::vector<int64_t> kc;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (!red[d]) kc.push_back(c[d]);
    }
    groups[Ravel(kc, ks)].push_back(x[i]);
  }
  Vec y;
  for (const auto& g : groups) {
    double r = op == 1 ? 1.0 : (op == 2 ? -INFINITY : (op == 3 ? INFINITY : 0.0));
    double mean = 0;
    for (double v : g) mean += v;
    mean /= static_cast<double>(g.size());
    for (double v : g) {
      if (op == 0 || op == 4) r += v;
      if (op == 1) r *= v;
      if (op == 2) r = std::max(r, v);
      if (op == 3) r = std::min(r, v);
      if (op >= 5) r += (v - mean) * (v - mean);
    }
    if (op >= 4) r /= static_cast<double>(g.size());
    if (op == 6) r = std::sqrt(r);
    y.push_back(static_cast<float>(r));
  }
  return y;
}

// Normalizes groups of x: group(i) -> key, gidx(i) -> gamma/beta index (-1: none). rms: no
// centering.
Vec RefNormalize(const Vec& x, const Shape& xs,
                 const std::function<int64_t(const std::vector<int64_t>&)>& group,
                 const std::function<int64_t(const std::vector<int64_t>&)>& gidx, const Vec& gamma,
                 const Vec& beta, double eps, bool rms) {
  std::map<int64_t, std::vector<int64_t>> members;
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
    members[group(Unravel(i, xs))].push_back(i);
  Vec y(x.size());
  for (const auto& kv : members) {
    double mean = 0, var = 0;
    for (int64_t i : kv.second) mean += x[i];
    mean /= static_cast<double>(kv.second.size());
    if (rms) mean = 0;
    for (int64_t i : kv.second) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(kv.second.size());
    for (int64_t i : kv.second) {
      double v = (x[i] - mean) / std::sqrt(var + eps);
      const int64_t g = gidx(Unravel(i, xs));
      if (!gamma.empty()) v *= gamma[g];
      if (!beta.empty()) v += beta[g];
      y[i] = static_cast<float>(v);
    }
  }
  return y;
}

}  // namespace

TEST_CASE("reductions sum/prod/max/min/mean/variance/std over up to 8 dims") {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    bool keepdims;
  };
  const Case cases[] = {
      {{2, 3, 4, 5, 2, 3}, {1, 3, 5}, false},  // 6-D, alternating (3 kept + 3 reduced runs)
      {{2, 3, 4, 5, 2, 3}, {0, -1}, true},
      {{3, 2, 2, 2, 3, 2, 2, 3}, {1, 3, 5, 7}, false},  // 8-D, 4 + 4 runs
      {{4, 130}, {1}, false},                           // inner run >= 64: cooperative on GPUs only
      {{70, 3, 90}, {0, 2}, true},                      // strided rows
      {{5, 6}, {}, false},                              // all axes
      {{300, 4}, {}, false},                            // all axes, cooperative on GPUs
      {{6, 1, 5}, {1}, false},                          // size-1 reduced dim
      // cooperative on CPU devices too (at most 8 outputs of >= 8192 elements)
      {{2, 8200}, {1}, false},
      {{2, 100, 90}, {0, 2}, true},  // strided rows
      {{90, 100}, {}, false},        // all axes
  };
  const char* names[] = {"sum", "prod", "max", "min", "mean", "variance", "std"};
  uint32_t seed = 900;
  for (const Case& c : cases) {
    for (int op = 0; op < 7; ++op) {
      INFO(std::string(names[op]) << " of " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      // prod: values near 1 so products of hundreds of elements stay finite and accurate.
      const Vec xd = op == 1 ? vkt::Random(msc_vk::NumElements(c.x), ++seed, 0.9f, 1.1f)
                             : vkt::Random(msc_vk::NumElements(c.x), ++seed, -2.0f, 3.0f);
      std::vector<bool> red(c.x.size(), c.axes.empty());
      for (int64_t a : c.axes) red[a < 0 ? a + c.x.size() : a] = true;
      Shape ys;
      for (size_t d = 0; d < c.x.size(); ++d) {
        if (!red[d])
          ys.push_back(c.x[d]);
        else if (c.keepdims)
          ys.push_back(1);
      }
      Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc(names[op], ys);
      // Which kernel ran, by workgroup count: one per output (cooperative) or per 64 outputs.
      int64_t inner = 1, count = 1;  // innermost reduced run, reduced elements
      for (size_t d = 0; d < c.x.size(); ++d) count *= red[d] ? c.x[d] : 1;
      for (size_t d = c.x.size(); d-- > 0 && (red[d] || c.x[d] == 1);) inner *= c.x[d];
      const int64_t outputs = msc_vk::NumElements(ys);
      const bool gpu = vkt::Ctx().prefers_shared_memory();
      const bool coop = inner >= 64 && (gpu || (outputs <= 8 && count >= 8192));
      RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
        switch (op) {
          case 0:
            ops::Sum(p, x, y, c.axes, c.keepdims);
            break;
          case 1:
            ops::Prod(p, x, y, c.axes, c.keepdims);
            break;
          case 2:
            ops::Max(p, x, y, c.axes, c.keepdims);
            break;
          case 3:
            ops::Min(p, x, y, c.axes, c.keepdims);
            break;
          case 4:
            ops::Mean(p, x, y, c.axes, c.keepdims);
            break;
          case 5:
            ops::Variance(p, x, y, c.axes, c.keepdims);
            break;
          default:
            ops::Std(p, x, y, c.axes, c.keepdims);
            break;
        }
        CHECK(p.num_workgroups() == static_cast<uint64_t>(coop ? outputs : (outputs + 63) / 64));
      });
      vkt::ExpectClose(ar.Read(y), RefReduce(op, xd, c.x, red), 1e-4, 1e-4, names[op]);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor x9 = ar.Alloc("x9", {2, 2, 2, 2, 2, 2, 2, 2, 2});
  vkt::ExpectError(
      [&] {
        ops::Sum(p, x9, ar.Alloc("s9", {2, 2, 2, 2}), {1, 3, 5, 7}, false);
      },
      "sum 's9': output 's9' float32 [2, 2, 2, 2] does not match [2, 2, 2, 2, 2]");
  vkt::ExpectError(
      [&] {
        ops::Sum(p, x9, ar.Alloc("s9b", {2, 2, 2, 2, 2}), {1, 3, 5, 7}, false);
      },
      "has 5 kept and 4 reduced runs of dims; the shader handles 4 of each");
  CHECK(p.num_dispatches() == 0);
  vkt::ExpectError(
      [&] {
        ops::Max(p, ar.Alloc("e", {3, 0}), ar.Alloc("m0", {3}), {1}, false);
      },
      "max 'm0': reduction over zero elements");
  vkt::ExpectError(
      [&] {
        ops::Sum(p, x9, ar.Alloc("s1", {2, 2, 2, 2, 2, 2, 2, 2}), {1, -8}, false);
      },
      "axis -8 is listed twice");
}

TEST_CASE("layer_norm / group_norm / rms_norm / log_softmax") {
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    msc_vk::Context& ctx = *ctx_ptr;
    // layer_norm over trailing axes: one group per invocation (hidden 8; 12 rows of 96 on CPU
    // devices) and one per workgroup (cooperative: hidden >= 64 with at most 8 groups, or groups
    // of at least 4096 elements, on CPU devices; hidden >= 64 on GPUs), told apart by the
    // workgroup count.
    for (const Shape& xs :
         {Shape{2, 5, 8}, Shape{3, 4, 96}, Shape{2, 3, 96}, Shape{9, 4096}, Shape{2, 3, 4, 5}}) {
      for (int affine = 0; affine < 3; ++affine) {  // 0 none, 1 gamma, 2 gamma + beta
        INFO("layer_norm " << msc_vk::ShapeToString(xs) << " affine " << affine);
        vkt::Arena ar(ctx, 1 << 20);
        const bool two_axes = xs.size() == 4;
        const std::vector<int64_t> axes =
            two_axes ? std::vector<int64_t>{-2, -1} : std::vector<int64_t>{-1};
        const Shape ps = two_axes ? Shape{xs[2], xs[3]} : Shape{xs.back()};
        const Vec xd = vkt::Random(msc_vk::NumElements(xs), 11, -3, 5);
        const Vec gd = affine ? vkt::Random(msc_vk::NumElements(ps), 12) : Vec{};
        const Vec bd = affine == 2 ? vkt::Random(msc_vk::NumElements(ps), 13) : Vec{};
        const size_t nr = axes.size();
        auto group = [&](const std::vector<int64_t>& c) {
          return Ravel(std::vector<int64_t>(c.begin(), c.end() - nr),
                       Shape(xs.begin(), xs.end() - nr));
        };
        auto gidx = [&](const std::vector<int64_t>& c) {
          return Ravel(std::vector<int64_t>(c.end() - nr, c.end()), ps);
        };
        const Vec expect = RefNormalize(xd, xs, group, gidx, gd, bd, 1e-5, false);
        Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("ln", xs);
        Tensor g = affine ? ar.Input("g", ps, gd) : Tensor{};
        Tensor b = affine == 2 ? ar.Input("b", ps, bd) : Tensor{};
        const int64_t count = msc_vk::NumElements(ps), groups = msc_vk::NumElements(xs) / count;
        const bool gpu = ctx.prefers_shared_memory();
        const bool coop = ps.back() >= 64 && (gpu || groups <= 8 || count >= 4096);
        RunProgram(ctx, 1, [&](msc_vk::Program& p) {
          ops::LayerNorm(p, x, affine ? &g : nullptr, affine == 2 ? &b : nullptr, y, axes, 1e-5);
          CHECK(p.num_workgroups() == static_cast<uint64_t>(coop ? groups : (groups + 63) / 64));
        });
        vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
      }
    }
    // group_norm NCHW (channel_axis 1, axes 2, 3) and a channels-last variant.
    struct GN {
      Shape x;
      int64_t groups, channel_axis;
      std::vector<int64_t> axes;
    };
    for (const GN& gn : {GN{{2, 6, 4, 5}, 3, 1, {2, 3}}, GN{{2, 8, 10, 10}, 2, 1, {2, 3}},
                         GN{{2, 5, 6}, 2, -1, {1}}}) {
      INFO("group_norm " << msc_vk::ShapeToString(gn.x) << " groups " << gn.groups);
      vkt::Arena ar(ctx, 1 << 20);
      const size_t ca = gn.channel_axis < 0 ? gn.channel_axis + gn.x.size() : gn.channel_axis;
      const int64_t C = gn.x[ca], Cg = C / gn.groups;
      const Vec xd = vkt::Random(msc_vk::NumElements(gn.x), 21, -2, 4);
      const Vec gd = vkt::Random(C, 22), bd = vkt::Random(C, 23);
      auto group = [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> key;
        for (size_t d = 0; d < c.size(); ++d) {
          const bool reduced =
              std::find(gn.axes.begin(), gn.axes.end(), static_cast<int64_t>(d)) != gn.axes.end();
          if (d == ca)
            key.push_back(c[d] / Cg);
          else if (!reduced)
            key.push_back(c[d]);
        }
        int64_t k = 0;
        for (int64_t v : key) k = k * 1000 + v;
        return k;
      };
      auto gidx = [&](const std::vector<int64_t>& c) { return c[ca]; };
      const Vec expect = RefNormalize(xd, gn.x, group, gidx, gd, bd, 1e-5, false);
      Tensor x = ar.Input("x", gn.x, xd), g = ar.Input("g", {C}, gd), b = ar.Input("b", {C}, bd);
      Tensor y = ar.Alloc("gn", gn.x);
      RunProgram(ctx, 1, [&](msc_vk::Program& p) {
        ops::GroupNorm(p, x, &g, &b, y, gn.groups, gn.channel_axis, gn.axes, 1e-5);
      });
      vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
    }
    // rms_norm with and without weight.
    for (const Shape& xs : {Shape{3, 7, 16}, Shape{2, 200}}) {
      for (bool weighted : {false, true}) {
        INFO("rms_norm " << msc_vk::ShapeToString(xs) << " weighted " << weighted);
        vkt::Arena ar(ctx, 1 << 20);
        const Vec xd = vkt::Random(msc_vk::NumElements(xs), 31, -2, 2);
        const Vec wd = weighted ? vkt::Random(xs.back(), 32) : Vec{};
        auto group = [&](const std::vector<int64_t>& c) {
          return Ravel(std::vector<int64_t>(c.begin(), c.end() - 1),
                       Shape(xs.begin(), xs.end() - 1));
        };
        auto gidx = [&](const std::vector<int64_t>& c) { return c.back(); };
        const Vec expect = RefNormalize(xd, xs, group, gidx, wd, {}, 1e-6, true);
        Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("rms", xs);
        Tensor w = weighted ? ar.Input("w", {xs.back()}, wd) : Tensor{};
        RunProgram(ctx, 1, [&](msc_vk::Program& p) {
          ops::RmsNorm(p, x, weighted ? &w : nullptr, y, {-1}, 1e-6);
        });
        vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
      }
    }
    // log_softmax along a middle axis and the last one, with large magnitudes.
    for (int64_t axis : {1, -1}) {
      vkt::Arena ar(ctx, 1 << 20);
      const Shape xs = {3, 7, 5};
      Vec xd = vkt::Random(105, 41, -20, 20);
      xd[0] = 90.0f;
      const int64_t ax = axis < 0 ? 2 : axis;
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < ax; ++d) outer *= xs[d];
      for (int64_t d = ax + 1; d < 3; ++d) inner *= xs[d];
      Vec expect(xd.size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t n = 0; n < inner; ++n) {
          double m = -INFINITY, s = 0;
          for (int64_t l = 0; l < xs[ax]; ++l)
            m = std::max<double>(m, xd[(o * xs[ax] + l) * inner + n]);
          for (int64_t l = 0; l < xs[ax]; ++l) s += std::exp(xd[(o * xs[ax] + l) * inner + n] - m);
          for (int64_t l = 0; l < xs[ax]; ++l) {
            const int64_t e = (o * xs[ax] + l) * inner + n;
            expect[e] = static_cast<float>(xd[e] - m - std::log(s));
          }
        }
      Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("lsm", xs);
      RunProgram(ctx, 1, [&](msc_vk::Program& p) { ops::LogSoftmax(p, x, y, axis); });
      vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-5);
    }
    vkt::ExpectNoValidationMessages(ctx);
  }
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor x = ar.Alloc("x", {2, 6, 4}), g = ar.Alloc("g", {5});
  vkt::ExpectError(
      [&] {
        ops::LayerNorm(p, x, &g, nullptr, ar.Alloc("ln", {2, 6, 4}), {-1}, 1e-5);
      },
      "nn.layer_norm 'ln': 'g' float32 [5] must have the shape of the normalized dims [4]");
  vkt::ExpectError(
      [&] {
        ops::GroupNorm(p, x, nullptr, nullptr, ar.Alloc("gn", {2, 6, 4}), 4, 1, {2}, 1e-5);
      },
      "num_groups = 4 does not divide the 6 channels");
  vkt::ExpectError(
      [&] {
        ops::GroupNorm(p, x, nullptr, nullptr, ar.Alloc("gn2", {2, 6, 4}), 2, 1, {1}, 1e-5);
      },
      "axes must not contain the channel axis");
}
