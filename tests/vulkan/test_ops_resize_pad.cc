// Numerical tests of image.resize2d (runtime ops_resize.cc, TOPI's formulas) and nn.pad
// (ops_pad.cc) against CPU references written here.
// Every test runs under the validated contexts of test_util.h and checks the dispatch count.
#include <algorithm>
#include <cmath>
#include <string>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;
using vkt::RunProgram;
using Vec = std::vector<float>;

using vkt::Ravel;
using vkt::Unravel;

namespace {

// TOPI _resize_2d in float32 coordinates (see shaders/image/resize2d.comp), double values.
Vec RefResize(const Vec& x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
              const ops::Resize2dAttrs& a) {
  const std::string& m = a.coordinate_transformation_mode;
  auto in_coord = [&](int64_t o, int64_t in, int64_t out) -> float {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    const float xo = static_cast<float>(o);
    if (m == "half_pixel") return (xo + 0.5f) * scale - 0.5f;
    if (m == "align_corners")
      return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) * xo : 0.0f;
    if (m == "asymmetric") return scale * xo;
    if (m == "pytorch_half_pixel") return out > 1 ? (xo + 0.5f) * scale - 0.5f : 0.0f;
    return (xo + 0.5f) * scale;  // tf_half_pixel_for_nn
  };
  std::string rounding = a.rounding_method;
  if (rounding.empty()) rounding = m == "align_corners" ? "round" : "floor";
  auto nearest = [&](int64_t o, int64_t in, int64_t out) -> int64_t {
    if (m == "asymmetric" && out % in == 0) return o / (out / in);  // TOPI integer path
    const float v = in_coord(o, in, out);
    if (rounding == "round") return static_cast<int64_t>(std::round(v));  // half away from zero
    if (rounding == "floor") return static_cast<int64_t>(std::floor(v + 1e-5f));
    if (rounding == "ceil") return static_cast<int64_t>(std::ceil(v - 1e-5f));
    if (rounding == "round_prefer_floor") return static_cast<int64_t>(std::ceil(v - 0.5f));
    return static_cast<int64_t>(std::floor(v + 0.5f));
  };
  auto px = [&](int64_t nc, int64_t yy, int64_t xx) -> double {
    yy = std::min(std::max<int64_t>(yy, 0), H - 1);
    xx = std::min(std::max<int64_t>(xx, 0), W - 1);
    return x[(nc * H + yy) * W + xx];
  };
  auto cubic_w = [&](double t, int64_t first, int64_t size) {
    const double al = a.cubic_alpha, t2 = t * t, t3 = t2 * t;
    std::array<double, 4> w = {al * (t3 - 2 * t2 + t), (al + 2) * t3 - (3 + al) * t2 + 1,
                               -(al + 2) * t3 + (3 + 2 * al) * t2 - al * t, -al * t3 + al * t2};
    if (a.cubic_exclude) {
      double s = 0;
      for (int k = 0; k < 4; ++k) {
        if (first + k < 0 || first + k >= size) w[k] = 0;
        s += w[k];
      }
      for (double& v : w) v /= s;
    }
    return w;
  };
  Vec y(NC * OH * OW);
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        double v;
        if (a.method == "nearest_neighbor") {
          v = px(nc, nearest(oy, H, OH), nearest(ox, W, OW));
        } else {
          const float iy = in_coord(oy, H, OH), ix = in_coord(ox, W, OW);
          const int64_t y0 = static_cast<int64_t>(std::floor(iy)),
                        x0 = static_cast<int64_t>(std::floor(ix));
          const double ty = iy - std::floor(iy), tx = ix - std::floor(ix);
          if (a.method == "linear") {
            const double top = px(nc, y0, x0) * (1 - tx) + px(nc, y0, x0 + 1) * tx;
            const double bot = px(nc, y0 + 1, x0) * (1 - tx) + px(nc, y0 + 1, x0 + 1) * tx;
            v = top * (1 - ty) + bot * ty;
          } else {
            const auto wy = cubic_w(ty, y0 - 1, H), wx = cubic_w(tx, x0 - 1, W);
            v = 0;
            for (int j = 0; j < 4; ++j) {
              double row = 0;
              for (int k = 0; k < 4; ++k) row += px(nc, y0 - 1 + j, x0 - 1 + k) * wx[k];
              v += row * wy[j];
            }
          }
        }
        y[(nc * OH + oy) * OW + ox] = static_cast<float>(v);
      }
  return y;
}

}  // namespace

TEST_CASE("image.resize2d (TOPI formulas)") {
  const char* modes[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                         "tf_half_pixel_for_nn"};
  struct Size {
    int64_t H, W, OH, OW;
  };
  int checked = 0;
  for (const Size& sz :
       {Size{5, 6, 10, 12}, Size{8, 7, 3, 5}, Size{4, 4, 1, 9}, Size{3, 5, 7, 5}}) {
    for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
      for (const char* mode : modes) {
        for (const char* rounding :
             {"", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}) {
          if (std::string(method) != "nearest_neighbor" && std::string(rounding) != "") continue;
          for (bool exclude : {false, true}) {
            if (exclude && std::string(method) != "cubic") continue;
            INFO(std::string(method)
                 << " " << mode << " rounding '" << std::string(rounding) << "' exclude " << exclude
                 << " " << sz.H << "x" << sz.W << " -> " << sz.OH << "x" << sz.OW);
            vkt::Arena ar(vkt::Ctx(), 1 << 20);
            const Vec xd = vkt::Random(2 * 3 * sz.H * sz.W, 130);
            ops::Resize2dAttrs a{method, mode, rounding, -0.75f, exclude};
            const Vec expect = RefResize(xd, 6, sz.H, sz.W, sz.OH, sz.OW, a);
            Tensor x = ar.Input("x", {2, 3, sz.H, sz.W}, xd),
                   y = ar.Alloc("rs", {2, 3, sz.OH, sz.OW});
            RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Resize2d(p, x, y, a); });
            vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked == 4 * 5 * (6 + 1 + 2));
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  ops::Resize2dAttrs a;
  a.method = "area";
  vkt::ExpectError(
      [&] {
        ops::Resize2d(p, ar.Alloc("x", {1, 1, 2, 2}), ar.Alloc("r", {1, 1, 4, 4}), a);
      },
      "image.resize2d 'r': method 'area' is not supported (one of: nearest_neighbor, linear, "
      "cubic)");
}

TEST_CASE("nn.pad constant / edge / reflect") {
  struct Case {
    Shape x;
    std::vector<int64_t> pw;
  };
  for (const Case& c : {Case{{2, 3, 4, 5}, {0, 0, 0, 0, 1, 2, 2, 1}}, Case{{7}, {3, 2}},
                        Case{{2, 3, 4, 5, 6}, {1, 0, 0, 0, 2, 1, 0, 0, 1, 3}},
                        Case{{3, 4, 5}, {0, 0, 2, 3, 0, 0}}}) {
    for (const char* mode : {"constant", "edge", "reflect"}) {
      INFO("pad " << std::string(mode) << " " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      const Vec xd = vkt::Random(msc_vk::NumElements(c.x), 140);
      Shape ys;
      for (size_t d = 0; d < c.x.size(); ++d) ys.push_back(c.x[d] + c.pw[2 * d] + c.pw[2 * d + 1]);
      Vec expect(msc_vk::NumElements(ys));
      for (int64_t i = 0; i < static_cast<int64_t>(expect.size()); ++i) {
        std::vector<int64_t> oc = Unravel(i, ys);
        bool inside = true;
        for (size_t d = 0; d < oc.size(); ++d) {
          int64_t s = oc[d] - c.pw[2 * d];
          const int64_t n = c.x[d];
          if (s < 0 || s >= n) {
            inside = false;
            if (std::string(mode) == "edge") s = std::min(std::max<int64_t>(s, 0), n - 1);
            if (std::string(mode) == "reflect") s = s < 0 ? -s : 2 * (n - 1) - s;
          }
          oc[d] = s;
        }
        expect[i] = (inside || std::string(mode) != "constant") ? xd[Ravel(oc, c.x)] : 1.5f;
      }
      Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("pad", ys);
      RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Pad(p, x, y, c.pw, mode, 1.5f); });
      vkt::ExpectClose(ar.Read(y), expect, 0, 0);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor x = ar.Alloc("x", {2, 3});
  vkt::ExpectError(
      [&] {
        ops::Pad(p, x, ar.Alloc("p1", {2, 7}), {0, 0, 3, 1}, "reflect");
      },
      "nn.pad 'p1': reflect padding needs pads < the dim size: dim 1");
  vkt::ExpectError(
      [&] {
        ops::Pad(p, x, ar.Alloc("p2", {2, 5}), {0, 0, 1, 1}, "circular");
      },
      "pad_mode 'circular' is not one of constant, edge, reflect");
  vkt::ExpectError(
      [&] {
        ops::Pad(p, x, ar.Alloc("p3", {2, 5}), {1, 1});
      },
      "pad_width has 2 values; input 'x' float32 [2, 3] needs 4");
}
