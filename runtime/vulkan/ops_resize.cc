// image.resize2d (shaders image/resize2d): TOPI's formulas, one output element per invocation.
#include <initializer_list>
#include <string>

#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {

using detail::CheckFloat32;
using detail::CheckRank;
using detail::Fail;
using detail::U32;

void Resize2d(Program& p, const Tensor& x, const Tensor& y, const Resize2dAttrs& a) {
  const char* op = "image.resize2d";
  CheckFloat32(op, y, {&x, &y});
  CheckRank(op, y, x, 4, "input");
  CheckRank(op, y, y, 4, "output");
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t OH = y.dim(2), OW = y.dim(3);
  if (y.dim(0) != N || y.dim(1) != C)
    Fail(op, y, "output " + y.Describe() + " must keep N, C of input " + x.Describe());
  if (H < 1 || W < 1) Fail(op, y, "input " + x.Describe() + " is empty");
  auto index_of = [&](const std::string& v, std::initializer_list<const char*> names,
                      const char* attr) {
    uint32_t i = 0;
    for (const char* n : names) {
      if (v == n) return i;
      ++i;
    }
    std::string all;
    for (const char* n : names) all += std::string(all.empty() ? "" : ", ") + n;
    Fail(op, y, std::string(attr) + " '" + v + "' is not supported (one of: " + all + ")");
  };
  const uint32_t method = index_of(a.method, {"nearest_neighbor", "linear", "cubic"}, "method");
  const uint32_t coord = index_of(
      a.coordinate_transformation_mode,
      {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"},
      "coordinate_transformation_mode");
  std::string rounding = a.rounding_method;
  if (rounding.empty()) rounding = coord == 1 ? "round" : "floor";  // TOPI's default
  const uint32_t round =
      index_of(rounding, {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"},
               "rounding_method");
  // TOPI can_convert_multiply_to_intdiv: nearest + asymmetric with an integer upscale factor
  // indexes by integer division.
  auto int_factor = [&](int64_t in, int64_t out) -> uint32_t {
    if (method != 0 || coord != 2 || out % in != 0) return 0;
    const double factor = static_cast<double>(out / in);
    const double check = 1.0 / (1e-5 * static_cast<double>(in) + 1e-5);
    return factor > check ? 0 : static_cast<uint32_t>(out / in);
  };
  struct {
    uint32_t NC, H, W, OH, OW;
    float scale_h, scale_w, align_h, align_w;
    uint32_t factor_h, factor_w;
    float alpha;
    uint32_t exclude;
  } push{U32(N * C, op, y, "N*C"),
         U32(H, op, y, "H"),
         U32(W, op, y, "W"),
         U32(OH, op, y, "OH"),
         U32(OW, op, y, "OW"),
         static_cast<float>(H) / static_cast<float>(OH),
         static_cast<float>(W) / static_cast<float>(OW),
         OH > 1 ? static_cast<float>(H - 1) / static_cast<float>(OH - 1) : 0.0f,
         OW > 1 ? static_cast<float>(W - 1) / static_cast<float>(OW - 1) : 0.0f,
         int_factor(H, OH),
         int_factor(W, OW),
         a.cubic_alpha,
         a.cubic_exclude ? 1u : 0u};
  if (y.numel() == 0) return;
  detail::Launch(p, "image/resize2d", {InTexel(x), Out(y)}, push, {method, coord, round},
                 Grid1D(p.context(), y.numel(), 64), y);
}

}  // namespace ops
}  // namespace msc_vk
