// Numerical tests of the transposed convolutions (runtime ops_conv_transpose.cc:
// conv2d_transpose, conv1d_transpose) against a scatter reference written here.
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

TEST_CASE("conv2d_transpose / conv1d_transpose match a scatter reference") {
  struct Case {
    Shape x, w;  // w: [C, O/groups, KH, KW]
    std::array<int64_t, 2> s;
    std::array<int64_t, 4> pad;
    std::array<int64_t, 2> opad, dil;
    int64_t groups;
  };
  for (const Case& c :
       {Case{{1, 3, 5, 5}, {3, 4, 3, 3}, {1, 1}, {0, 0, 0, 0}, {0, 0}, {1, 1}, 1},
        Case{{2, 4, 4, 6}, {4, 3, 3, 2}, {2, 3}, {1, 0, 1, 1}, {1, 2}, {1, 1}, 2},
        Case{{1, 2, 5, 4}, {2, 2, 3, 3}, {2, 2}, {2, 1, 0, 1}, {1, 0}, {2, 1}, 1},
        Case{{1, 1, 6, 7}, {1, 1, 4, 4}, {3, 3}, {1, 1, 1, 1}, {2, 0}, {1, 2}, 1}}) {
    INFO("conv2d_transpose x " << msc_vk::ShapeToString(c.x) << " w "
                               << msc_vk::ShapeToString(c.w));
    const int64_t N = c.x[0], C = c.x[1], H = c.x[2], W = c.x[3], KH = c.w[2], KW = c.w[3];
    const int64_t Og = c.w[1], O = Og * c.groups, Cg = C / c.groups;
    const int64_t OH = (H - 1) * c.s[0] - c.pad[0] - c.pad[2] + c.dil[0] * (KH - 1) + c.opad[0] + 1;
    const int64_t OW = (W - 1) * c.s[1] - c.pad[1] - c.pad[3] + c.dil[1] * (KW - 1) + c.opad[1] + 1;
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const Vec xd = vkt::Random(msc_vk::NumElements(c.x), 110),
              wd = vkt::Random(msc_vk::NumElements(c.w), 111);
    std::vector<double> acc(N * O * OH * OW, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw)
            for (int64_t og = 0; og < Og; ++og)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t oh = ih * c.s[0] - c.pad[0] + kh * c.dil[0];
                  const int64_t ow = iw * c.s[1] - c.pad[1] + kw * c.dil[1];
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                  const int64_t o = (ch / Cg) * Og + og;
                  acc[((n * O + o) * OH + oh) * OW + ow] +=
                      xd[((n * C + ch) * H + ih) * W + iw] *
                      wd[((ch * Og + og) * KH + kh) * KW + kw];
                }
    const Vec expect(acc.begin(), acc.end());
    Tensor x = ar.Input("x", c.x, xd), w = ar.Input("w", c.w, wd);
    Tensor y = ar.Alloc("convT", {N, O, OH, OW});
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      ops::Conv2dTranspose(p, x, w, y,
                           ops::ConvTranspose2dAttrs{c.s, c.pad, c.opad, c.dil, c.groups});
    });
    vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
  }
  // conv1d_transpose: the same scatter with H = 1.
  {
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const int64_t N = 2, C = 4, W = 7, Og = 3, G = 2, KW = 3, s = 2, pl = 1, pr = 2, op = 1, d = 2;
    const int64_t O = Og * G, Cg = C / G;
    const int64_t OW = (W - 1) * s - pl - pr + d * (KW - 1) + op + 1;
    const Vec xd = vkt::Random(N * C * W, 120), wd = vkt::Random(C * Og * KW, 121);
    std::vector<double> acc(N * O * OW, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t iw = 0; iw < W; ++iw)
          for (int64_t og = 0; og < Og; ++og)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t ow = iw * s - pl + kw * d;
              if (ow < 0 || ow >= OW) continue;
              acc[(n * O + (ch / Cg) * Og + og) * OW + ow] +=
                  xd[(n * C + ch) * W + iw] * wd[(ch * Og + og) * KW + kw];
            }
    Tensor x = ar.Input("x", {N, C, W}, xd), w = ar.Input("w", {C, Og, KW}, wd);
    Tensor y = ar.Alloc("convT1d", {N, O, OW});
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      ops::Conv1dTranspose(p, x, w, y, ops::ConvTranspose1dAttrs{s, {pl, pr}, op, d, G});
    });
    vkt::ExpectClose(ar.Read(y), Vec(acc.begin(), acc.end()), 1e-4, 1e-4);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Conv1dTranspose(p, ar.Alloc("x", {1, 4, 5}), ar.Alloc("w", {4, 2, 3}),
                             ar.Alloc("ct", {1, 2, 9}), ops::ConvTranspose1dAttrs{2});
      },
      "nn.conv1d_transpose 'ct': output 'ct' float32 [1, 2, 9] does not match the computed shape "
      "[1, 2, 11]");
  vkt::ExpectError(
      [&] {
        ops::Conv2dTranspose(p, ar.Alloc("x2", {1, 4, 5, 5}), ar.Alloc("w2", {3, 2, 3, 3}),
                             ar.Alloc("ct2", {1, 2, 7, 7}), ops::ConvTranspose2dAttrs{});
      },
      "IOHW: weight dim 0 must be the input channels");
}
