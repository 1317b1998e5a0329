// ONNX Resize (10, 11, 13) and Upsample (1, 7, 9) -> image.resize2d on 4-D NCHW data, as TVM
// v0.20's relax ONNX frontend maps Resize (method nearest -> nearest_neighbor, nearest_mode ->
// rounding_method, cubic_coeff_a -> cubic_alpha, exclude_outside -> cubic_exclude, roi
// [0, 0, 0, 0]). image.resize2d (TOPI resize) derives its coordinate transform from the size ratio
// out / in, while ONNX uses the given scale; a scale that does not equal that ratio (e.g. 0.6 on
// 4 elements -> 2) is rejected except for align_corners, which uses neither. Resize-10 and
// Upsample are "asymmetric" (x_in = x_out / scale) with floor rounding for nearest (ONNX
// Upsample's reference output; ONNX Runtime's opset-10 behaviour); tf_crop_and_resize and
// scales / sizes computed at run time Fail.
#include <cmath>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/convert.h"
#include "generator/frontend/onnx/ops_nn_util.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {

namespace {

using namespace nn;  // NOLINT(build/namespaces): the helpers of ops_nn_util.h

struct ResizeSpec {
  std::string method;  ///< nearest_neighbor, linear, cubic.
  std::string coord = "half_pixel";
  std::string rounding = "round_prefer_floor";
  float cubic_alpha = -0.75f;
  int64_t cubic_exclude = 0;
  float extrapolation = 0;
};

std::string Method(const C& c, const std::string& mode) {
  if (mode == "nearest") return "nearest_neighbor";
  if (mode == "linear" || mode == "bilinear") return "linear";
  if (mode == "cubic") return "cubic";
  c.Fail("mode '" + mode + "' is not supported (nearest, linear, cubic)");
}

/// Output H, W from `scales` ([N, C, H, W] factors, N / C must be 1) as ONNX computes them,
/// floor(in * scale), checked against the ratio image.resize2d will use (ONNX's coordinate
/// transforms, align_corners included, use the scale: x * (in - 1) / (in * scale - 1)).
std::vector<int64_t> SizeFromScales(const C& c, const std::vector<double>& scales,
                                    const std::vector<int64_t>& in) {
  if (scales.size() != 4) c.Fail("scales must have 4 values (N, C, H, W)");
  if (scales[0] != 1 || scales[1] != 1)
    c.Fail("scales of the N and C dims must be 1 (image.resize2d resizes H and W)");
  std::vector<int64_t> size;
  for (size_t d = 2; d < 4; ++d) {
    if (!(scales[d] > 0)) c.Fail("scales must be positive");
    const double scaled = std::floor(static_cast<double>(in[d]) * scales[d]);
    if (!FitsInt64(scaled))  // the cast below would be undefined (fuzz_onnx)
      c.Fail("scale " + ir::AttrDouble(scales[d]) + " gives more outputs than int64 can count");
    const auto out = static_cast<int64_t>(scaled);
    if (out < 1) c.Fail("scale " + ir::AttrDouble(scales[d]) + " leaves no output elements");
    const double ratio = static_cast<double>(out) / static_cast<double>(in[d]);
    if (std::fabs(ratio - scales[d]) > 1e-6 * scales[d])
      c.Fail("scale " + ir::AttrDouble(scales[d]) + " of dim " + std::to_string(d) + " gives " +
             std::to_string(out) + " outputs from " + std::to_string(in[d]) +
             "; image.resize2d computes coordinates from the ratio " + ir::AttrDouble(ratio) +
             ", not from the scale");
    size.push_back(out);
  }
  return size;
}

void EmitResize(C& c, const ResizeSpec& r, const std::vector<int64_t>& in,
                const std::vector<int64_t>& size) {
  // TOPI's resize (python/tvm/topi/image/resize.py, can_convert_multiply_to_intdiv) computes
  // nearest + asymmetric with an integer upscale factor k as x // k whatever rounding_method
  // says; that equals ONNX's rounding of x / k only for floor, and round_prefer_floor when k = 2.
  if (r.method == "nearest_neighbor" && r.coord == "asymmetric")
    for (size_t d = 0; d < 2; ++d) {
      if (size[d] % in[2 + d] != 0) continue;
      const int64_t k = size[d] / in[2 + d];
      if (k >= 2 && r.rounding != "floor" && !(r.rounding == "round_prefer_floor" && k == 2))
        c.Fail("nearest_mode '" + r.rounding + "' with asymmetric coordinates and the integer " +
               "factor " + std::to_string(k) + ": image.resize2d (TOPI) rounds down there");
    }
  const OutSpec out = c.Out(0);
  const std::vector<int64_t> expect{in[0], in[1], size[0], size[1]};
  if (out.shape != expect)
    c.Fail("output shape " + weights::FormatShape(expect) +
           " differs from ONNX shape inference's " + weights::FormatShape(out.shape));
  c.EmitOut("image.resize2d", {c.T(0)},
            Attrs({{"coordinate_transformation_mode", r.coord},
                   {"cubic_exclude", ir::AttrInt(r.cubic_exclude)},
                   {"roi", ir::AttrFloats({0, 0, 0, 0})},
                   {"extrapolation_value", ir::AttrFloat(r.extrapolation)},
                   {"method", r.method},
                   {"cubic_alpha", ir::AttrFloat(r.cubic_alpha)},
                   {"out_dtype", ""},
                   {"layout", "NCHW"},
                   {"rounding_method", r.rounding},
                   {"size", ir::AttrInts(size)}}));
}

/// The NCHW shape of input 0; N and C may be symbolic (-1), H and W must be static.
std::vector<int64_t> Input4D(const C& c) {
  if (c.Rank(0) != 4)
    c.Fail("input rank " + std::to_string(c.Rank(0)) +
           " is not supported (image.resize2d resizes 4-D NCHW)");
  const std::vector<int64_t>& s = c.In(0).shape;
  if (s[2] < 0 || s[3] < 0) c.Fail("the H and W dims must be static");
  return s;
}

/// Resize-10 / Upsample: asymmetric; nearest rounds down (upsampling only, as Upsample's spec
/// requires scales >= 1; Resize-10's downsampling rounding is unspecified).
void Asymmetric(C& c, const std::string& mode, const std::vector<double>& scales) {
  const std::vector<int64_t> in = Input4D(c);
  ResizeSpec r;
  r.method = Method(c, mode);
  r.coord = "asymmetric";
  r.rounding = r.method == "nearest_neighbor" ? "floor" : "";
  if (r.method == "cubic") c.Fail("mode 'cubic' needs Resize from opset 11");
  if (r.method == "nearest_neighbor" && scales.size() == 4 && (scales[2] < 1 || scales[3] < 1))
    c.Fail("nearest downsampling before opset 11 has no specified rounding");
  EmitResize(c, r, in, SizeFromScales(c, scales, in));
}

void Resize(C& c) {
  if (c.opset < 11) {
    if (!c.IsConst(1)) c.Fail("scales must be a constant (image.resize2d takes a static size)");
    Asymmetric(c, c.attrs.Str("mode", "nearest"), c.ConstDoubles(1));
    return;
  }
  const std::vector<int64_t> in = Input4D(c);
  ResizeSpec r;
  r.method = Method(c, c.attrs.Str("mode", "nearest"));
  r.coord = c.attrs.Str("coordinate_transformation_mode", "half_pixel");
  if (r.coord == "tf_crop_and_resize")
    c.Fail("coordinate_transformation_mode 'tf_crop_and_resize' (roi crop) is not supported");
  if (r.coord != "half_pixel" && r.coord != "align_corners" && r.coord != "asymmetric" &&
      r.coord != "pytorch_half_pixel" && r.coord != "tf_half_pixel_for_nn")
    c.Fail("coordinate_transformation_mode '" + r.coord + "' is not supported");
  r.rounding = c.attrs.Str("nearest_mode", "round_prefer_floor");
  if (r.rounding != "round_prefer_floor" && r.rounding != "round_prefer_ceil" &&
      r.rounding != "floor" && r.rounding != "ceil")
    c.Fail("nearest_mode '" + r.rounding + "' is not supported");
  r.cubic_alpha = c.attrs.Float("cubic_coeff_a", -0.75f);
  r.cubic_exclude = c.attrs.Int("exclude_outside", 0);
  r.extrapolation = c.attrs.Float("extrapolation_value", 0);
  auto given = [&](int k) {
    if (!c.Has(k)) return false;
    if (!c.IsConst(k))
      c.Fail(std::string(k == 2 ? "scales" : "sizes") +
             " must be a constant (image.resize2d takes a static size)");
    return Numel(c.Const(k).shape) > 0;
  };
  const bool has_sizes = given(3), has_scales = given(2);
  if (has_sizes == has_scales) c.Fail("exactly one of scales and sizes must be given");
  std::vector<int64_t> size;
  if (has_sizes) {
    const std::vector<int64_t> s = c.ConstInts(3);
    if (s.size() != 4) c.Fail("sizes must have 4 values (N, C, H, W)");
    if ((in[0] >= 0 && s[0] != in[0]) || (in[1] >= 0 && s[1] != in[1]))
      c.Fail("sizes must keep the N and C dims (image.resize2d resizes H and W)");
    if (s[2] < 1 || s[3] < 1) c.Fail("sizes must be >= 1");
    size = {s[2], s[3]};
  } else {
    size = SizeFromScales(c, c.ConstDoubles(2), in);
  }
  EmitResize(c, r, in, size);
}

/// Upsample: 1 (height_scale / width_scale attrs, modes nearest / bilinear), 7 (scales attr),
/// 9 (scales input).
void Upsample(C& c) {
  std::vector<double> scales;
  if (c.opset < 7) {
    scales = {1, 1, c.attrs.Float("height_scale", 0), c.attrs.Float("width_scale", 0)};
  } else if (c.opset < 9) {
    for (float s : c.attrs.Floats("scales")) scales.push_back(s);
  } else {
    if (!c.IsConst(1)) c.Fail("scales must be a constant (image.resize2d takes a static size)");
    scales = c.ConstDoubles(1);
  }
  Asymmetric(c, c.attrs.Str("mode", "nearest"), scales);
}

}  // namespace

void RegisterNnResizeOps(ConverterMap& m) {
  m["Resize"] = Resize;
  m["Upsample"] = Upsample;
}

}  // namespace msc::frontend::onnx_import
