// Numerical tests of the 1-D convolutions (runtime ops_gemm.cc: conv1d, conv1d_bias) and 1-D
// pools (ops_pool.cc) against the 2-D CPU references of reference.h on [N, C, 1, W].
// Every test runs under the validated contexts of test_util.h and checks the dispatch count.
#include <algorithm>
#include <string>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;
using vkt::RunProgram;
using Vec = std::vector<float>;

TEST_CASE("conv1d / conv1d_bias / max_pool1d / avg_pool1d / adaptive_avg_pool1d") {
  struct ConvCase {
    Shape x, w;
    int64_t stride;
    std::array<int64_t, 2> pad;
    int64_t dil, groups;
    bool bias;
  };
  for (const ConvCase& c : {ConvCase{{2, 4, 17}, {8, 4, 3}, 1, {1, 1}, 1, 1, false},
                            ConvCase{{1, 6, 20}, {9, 2, 5}, 2, {2, 0}, 2, 3, true},
                            ConvCase{{2, 5, 9}, {5, 1, 3}, 1, {1, 1}, 1, 5, true}}) {
    INFO("conv1d x " << msc_vk::ShapeToString(c.x) << " w " << msc_vk::ShapeToString(c.w));
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const Vec xd = vkt::Random(msc_vk::NumElements(c.x), 80),
              wd = vkt::Random(msc_vk::NumElements(c.w), 81);
    const Vec bd = c.bias ? vkt::Random(c.w[0], 82) : Vec{};
    Shape ys4;
    const Vec expect =
        ref::Conv2d(xd, {c.x[0], c.x[1], 1, c.x[2]}, wd, {c.w[0], c.w[1], 1, c.w[2]}, bd,
                    {1, c.stride}, {0, c.pad[0], 0, c.pad[1]}, {1, c.dil}, c.groups, &ys4);
    Tensor x = ar.Input("x", c.x, xd), w = ar.Input("w", c.w, wd);
    Tensor y = ar.Alloc("conv1d", {ys4[0], ys4[1], ys4[3]});
    const ops::Conv1dAttrs a{c.stride, c.pad, c.dil, c.groups};
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      if (c.bias)
        ops::Conv1dBias(p, x, w, ar.Input("b", {c.w[0]}, bd), y, a);
      else
        ops::Conv1d(p, x, w, y, a);
    });
    vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
  }
  struct PoolCase {
    int64_t W, k, s;
    std::array<int64_t, 2> pad;
    int64_t dil;
    bool ceil, cip;
  };
  for (const PoolCase& c :
       {PoolCase{16, 3, 2, {1, 1}, 1, false, true}, PoolCase{15, 3, 2, {1, 1}, 1, true, false},
        PoolCase{10, 2, 3, {0, 1}, 2, true, true}}) {
    for (int kind = 0; kind < 2; ++kind) {
      if (kind == 1 && c.dil != 1) continue;  // avg pooling has no dilation
      INFO("pool1d kind " << kind << " W " << c.W << " k " << c.k << " s " << c.s);
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      const Shape xs = {2, 3, c.W};
      const Vec xd = vkt::Random(msc_vk::NumElements(xs), 90);
      Shape ys4;
      const Vec expect = ref::Pool2d(xd, {2, 3, 1, c.W}, kind, {1, c.k}, {1, c.s},
                                     {0, c.pad[0], 0, c.pad[1]}, {1, c.dil}, c.ceil, c.cip, &ys4);
      Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("pool1d", {2, 3, ys4[3]});
      const ops::Pool1dAttrs a{c.k, c.s, c.pad, c.dil, c.ceil, c.cip};
      RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
        if (kind == 0)
          ops::MaxPool1d(p, x, y, a);
        else
          ops::AvgPool1d(p, x, y, a);
      });
      vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
    }
  }
  for (int64_t ow : {1, 4, 7}) {
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const Vec xd = vkt::Random(2 * 3 * 10, 95);
    const Vec expect = ref::AdaptiveAvgPool2d(xd, {2, 3, 1, 10}, 1, ow);
    Tensor x = ar.Input("x", {2, 3, 10}, xd), y = ar.Alloc("apool1d", {2, 3, ow});
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::AdaptiveAvgPool1d(p, x, y); });
    vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Conv1d(p, ar.Alloc("x", {1, 4, 10}), ar.Alloc("w", {8, 4, 3}),
                    ar.Alloc("c1", {1, 8, 10}), ops::Conv1dAttrs{});
      },
      "nn.conv1d 'c1': output 'c1' float32 [1, 8, 10] does not match the computed shape [1, 8, 8]");
  vkt::ExpectError(
      [&] {
        ops::MaxPool1d(p, ar.Alloc("x2", {1, 4, 10, 1}), ar.Alloc("mp", {1, 4, 5}),
                       ops::Pool1dAttrs{});
      },
      "nn.max_pool1d 'mp': input 'x2' float32 [1, 4, 10, 1] must have 3 dims");
}
