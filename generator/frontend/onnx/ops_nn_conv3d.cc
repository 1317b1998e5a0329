// 3-D convolution (ONNX Conv on NCDHW data) written with MSC's 2-D ops: MSC has no conv3d
// optype (msc_optypes_relax.txt), but a 3-D cross-correlation is the sum over the kernel's depth
// taps of 2-D cross-correlations of depth slices:
//   y[n, o, d] = sum_kd conv2d(x[n, :, d * sd + kd * dd], W[o, :, kd])   (per output depth d)
// x [N, C, D, H, W] is zero-padded in depth (nn.pad), permuted to [N, D, C, H, W]; for each kd a
// strided_slice takes the depths kd * dd + d * sd (d < oD), reshaped to [N * oD, C, H, W] and
// convolved in 2-D with W[:, :, kd] (the H/W padding, strides, dilations and groups of the 3-D
// conv); the kD results are added (the bias once, on the first tap: msc.conv2d_bias), reshaped to
// [N, oD, O, oH, oW] and permuted to [N, O, oD, oH, oW].
//
// 3-D max / average pooling is separable over its box window: a 2-D pool over (H, W) of x seen as
// [N, C * D, H, W], then a (kD, 1) pool over depth of the result seen as [N, C, D, oH * oW]. Max
// of maxes is the max; for averages the divisor is the product of the per-axis counts (with or
// without the padding, ceil_mode's partial windows included), so an average of averages is the
// average.
#include <algorithm>
#include <cstring>

#include "generator/frontend/onnx/ops_nn_util.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {
namespace nn {

namespace {

/// W[:, :, kd] of a constant [O, Cg, kD, kH, kW] weight, as [O, Cg, kH, kW].
weights::Tensor DepthTap(const weights::Tensor& w, int64_t kd) {
  const int64_t item = weights::DtypeItemSize(w.dtype);
  const int64_t outer = w.shape[0] * w.shape[1], kdn = w.shape[2], plane = w.shape[3] * w.shape[4];
  weights::Tensor t{w.dtype, {w.shape[0], w.shape[1], w.shape[3], w.shape[4]}, {}};
  t.data.resize(static_cast<size_t>(outer * plane * item));
  for (int64_t i = 0; i < outer; ++i)
    std::memcpy(t.data.data() + i * plane * item, w.data.data() + (i * kdn + kd) * plane * item,
                static_cast<size_t>(plane * item));
  return t;
}

}  // namespace

void Conv3dAsConv2d(C& c) {
  const std::string what = "3-D Conv (as 2-D convolutions over depth taps)";
  const std::vector<int64_t> xs = StaticShape(c, 0, what);
  if (!c.IsConst(1)) c.Fail(what + ": the weight must be a constant");
  const weights::Tensor& wt = c.Const(1);
  if (wt.shape.size() != 5) c.Fail(what + ": the weight must be 5-D [O, C/group, kD, kH, kW]");
  const std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  if (c.attrs.Has("kernel_shape") && c.attrs.Ints("kernel_shape") != kernel)
    c.Fail("kernel_shape does not match the weight's shape " + weights::FormatShape(wt.shape));
  const Window w = ReadWindow(c, kernel, {xs[2], xs[3], xs[4]}, true);
  const int64_t group = c.attrs.Int("group", 1), o = wt.shape[0];
  if (group < 1 || o % group != 0 || xs[1] != wt.shape[1] * group)
    c.Fail(what + ": input channels " + std::to_string(xs[1]) + " do not match the weight " +
           weights::FormatShape(wt.shape) + " with group " + std::to_string(group));
  const OutSpec out = c.Out(0);
  if (out.shape.size() != 5 ||
      std::any_of(out.shape.begin(), out.shape.end(), [](int64_t d) { return d < 1; }))
    c.Fail(what + ": the output must be static and non-empty, got " +
           weights::FormatShape(out.shape));
  const int64_t n = xs[0], ch = xs[1], od = out.shape[2], oh = out.shape[3], ow = out.shape[4];
  const std::string dtype = c.In(0).dtype;
  const int64_t pd0 = w.pads[0], pd1 = w.pads[3];
  std::string x = c.T(0);
  int64_t depth = xs[2];
  if (pd0 || pd1) {
    depth += pd0 + pd1;
    x = Node(c, "nn.pad", {x},
             Attrs({{"pad_mode", "constant"},
                    {"pad_value", ir::AttrFloat(0)},
                    {"pad_width", ir::AttrInts({0, 0, 0, 0, pd0, pd1, 0, 0, 0, 0})}}),
             {dtype, {n, ch, depth, xs[3], xs[4]}, {}});
  }
  x = Permute(c, x, {0, 2, 1, 3, 4});  // [N, D, C, H, W]
  const auto attrs2d =
      Attrs({{"out_layout", "NCHW"},
             {"data_layout", "NCHW"},
             {"padding", PaddingAttr({w.pads[1], w.pads[2], w.pads[4], w.pads[5]})},
             {"groups", ir::AttrInt(group)},
             {"kernel_layout", "OIHW"},
             {"strides", ir::AttrInts({w.strides[1], w.strides[2]})},
             {"dilation", ir::AttrInts({w.dilations[1], w.dilations[2]})},
             {"out_dtype", ""}});
  const bool bias = c.Has(2);
  if (bias && (!c.IsConst(2) || c.Const(2).shape != std::vector<int64_t>{o}))
    c.Fail(what + ": the bias must be a constant of shape [" + std::to_string(o) + "]");
  const OutSpec tap_out{out.dtype, {n * od, o, oh, ow}, {}};
  std::string sum;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    const int64_t b = kd * w.dilations[0];
    std::string s = Node(c, "strided_slice", {x},
                         Attrs({{"assume_inbound", "0"},
                                {"end", ir::AttrInts({b + (od - 1) * w.strides[0] + 1})},
                                {"begin", ir::AttrInts({b})},
                                {"axes", ir::AttrInts({1})},
                                {"strides", ir::AttrInts({w.strides[0]})}}),
                         {dtype, {n, od, ch, xs[3], xs[4]}, {}});
    s = Reshape(c, s, {n * od, ch, xs[3], xs[4]});
    std::vector<WeightSpec> ws{{"weight", DepthTap(wt, kd), "", "OIHW"}};
    std::string y;
    if (kd == 0 && bias) {
      ws.push_back({"bias", c.Const(2), c.InName(2), "O"});
      y = Node(c, "msc.conv2d_bias", {s}, attrs2d, tap_out, ws);
    } else {
      y = Node(c, "nn.conv2d", {s}, attrs2d, tap_out, ws);
    }
    sum = sum.empty() ? y : Node(c, "add", {sum, y}, {}, tap_out);
  }
  sum = Reshape(c, sum, {n, od, o, oh, ow});
  c.Bind(0, Permute(c, sum, {0, 2, 1, 3, 4}));
}

void Pool3dAs2d(C& c, bool is_max) {
  const std::string what = std::string("3-D ") + (is_max ? "MaxPool" : "AveragePool");
  if (is_max && c.HasOut(1)) c.Fail("the Indices output (argmax positions) has no MSC equivalent");
  const std::vector<int64_t> xs = StaticShape(c, 0, what);
  const std::vector<int64_t> kernel = c.attrs.Ints("kernel_shape");
  if (kernel.size() != 3) c.Fail("kernel_shape must have 3 values");
  const Window w = ReadWindow(c, kernel, {xs[2], xs[3], xs[4]}, c.opset >= (is_max ? 10 : 19));
  const bool ceil = c.opset >= 10 && c.attrs.Int("ceil_mode", 0) != 0;
  const bool include_pad = !is_max && c.opset >= 7 && c.attrs.Int("count_include_pad", 0) != 0;
  std::vector<int64_t> o(3);
  for (size_t i = 0; i < 3; ++i) {
    o[i] = WindowOut(xs[2 + i], kernel[i], w.strides[i], w.dilations[i], w.pads[i], w.pads[3 + i],
                     ceil);
    if (o[i] < 1) c.Fail("the pooling window is larger than the padded input");
    if (ceil && (o[i] - 1) * w.strides[i] >= xs[2 + i] + w.pads[i])
      c.Fail("with ceil_mode the last window of spatial dim " + std::to_string(i) +
             " starts in the end padding");
  }
  const OutSpec out = c.Out(0);
  if (out.shape != std::vector<int64_t>{xs[0], xs[1], o[0], o[1], o[2]})
    c.Fail("output shape " + weights::FormatShape(out.shape) + " differs from the window's " +
           weights::FormatShape({xs[0], xs[1], o[0], o[1], o[2]}));
  const std::string optype = is_max ? "nn.max_pool2d" : "nn.avg_pool2d";
  auto attrs = [&](std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d,
                   std::vector<int64_t> p) {
    return Attrs({{"dilation", ir::AttrInts(d)},
                  {"layout", "NCHW"},
                  {"padding", PaddingAttr(p)},
                  {"out_layout", "NCHW"},
                  {"ceil_mode", ir::AttrBool(ceil)},
                  {"pool_size", ir::AttrInts(k)},
                  {"count_include_pad", ir::AttrBool(include_pad)},
                  {"strides", ir::AttrInts(s)}});
  };
  const std::string dtype = out.dtype;
  std::string t = Reshape(c, c.T(0), {xs[0], xs[1] * xs[2], xs[3], xs[4]});
  t = Node(c, optype, {t},
           attrs({kernel[1], kernel[2]}, {w.strides[1], w.strides[2]},
                 {w.dilations[1], w.dilations[2]}, {w.pads[1], w.pads[2], w.pads[4], w.pads[5]}),
           {dtype, {xs[0], xs[1] * xs[2], o[1], o[2]}, {}});
  t = Reshape(c, t, {xs[0], xs[1], xs[2], o[1] * o[2]});
  t = Node(
      c, optype, {t},
      attrs({kernel[0], 1}, {w.strides[0], 1}, {w.dilations[0], 1}, {w.pads[0], 0, w.pads[3], 0}),
      {dtype, {xs[0], xs[1], o[0], o[1] * o[2]}, {}});
  c.Bind(0, Reshape(c, t, out.shape));
}

}  // namespace nn
}  // namespace msc::frontend::onnx_import
