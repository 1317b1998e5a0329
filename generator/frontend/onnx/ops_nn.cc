// ONNX neural-network ops -> MSC nn.* / msc.* optypes (opdefs/nn.yaml, msc.yaml), mapped as TVM
// v0.20's relax ONNX frontend (python/tvm/relax/frontend/onnx/onnx_frontend.py) followed by MSC's
// fusion would map them: Conv with constant weight and bias -> msc.conv{1,2}d_bias, Gemm with a
// constant B -> msc.linear[_bias] (weight [O, I]), BatchNormalization -> nn.batch_norm + get_item.
// Where relax's frontend is wrong or missing (Softmax before opset 13 coerces to 2-D, auto_pad
// SAME as explicit padding, Hardmax before 13, Dropout, ConvTranspose output_shape) the ONNX
// operator spec (onnx/docs/Operators.md, opsets 1-17) decides. Normalizations and Resize are in
// ops_nn_norm.cc and ops_nn_resize.cc.
#include <algorithm>
#include <cmath>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/convert.h"
#include "generator/frontend/onnx/ops_nn_util.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {

namespace {

using namespace nn;  // NOLINT(build/namespaces): the helpers of ops_nn_util.h

std::string Str(int64_t v) { return std::to_string(v); }

/// Checks that ONNX shape inference's output spatial dims equal what the MSC op computes
/// (`expect`, per spatial dim); a mismatch means the converter would change the model.
void CheckSpatial(const C& c, const OutSpec& out, const std::vector<int64_t>& expect) {
  if (out.shape.size() != expect.size() + 2)
    c.Fail("ONNX shape inference gives the output rank " +
           Str(static_cast<int64_t>(out.shape.size())) + ", expected " +
           Str(static_cast<int64_t>(expect.size() + 2)));
  for (size_t i = 0; i < expect.size(); ++i) {
    const int64_t got = out.shape.at(2 + i);
    if (got >= 0 && expect[i] >= 0 && got != expect[i])
      c.Fail("output spatial dim " + Str(static_cast<int64_t>(i)) + " would be " + Str(expect[i]) +
             " but ONNX shape inference gives " + Str(got));
  }
}

std::vector<int64_t> Spatial(const std::vector<int64_t>& shape) {
  return {shape.begin() + 2, shape.end()};
}

/// Conv / ConvTranspose / pool: rank 3 (1-D) or 4 (2-D); anything else Fail()s.
size_t SpatialDims(const C& c, const std::string& what) {
  const int64_t rank = c.Rank(0);
  if (rank == 3 || rank == 4) return static_cast<size_t>(rank - 2);
  if (rank == 5) c.Fail("3-D " + what + " has no MSC optype (MSC supports 1-D and 2-D)");
  c.Fail("input rank " + Str(rank) + " is not supported (" + what + " on 3-D NCW or 4-D NCHW)");
}

/// The bias of a conv-like node: input 2 shaped [1, O, 1(, 1)] for an `add`.
std::string ChannelBias(C& c, int64_t channels, size_t nd) {
  const Value& b = c.In(2);
  if (b.shape.size() != 1 || (b.shape[0] >= 0 && b.shape[0] != channels))
    c.Fail("bias has shape " + weights::FormatShape(b.shape) + ", expected [" + Str(channels) +
           "]");
  std::vector<int64_t> shape(nd + 2, 1);
  shape[1] = channels;
  return InputAs(c, 2, shape);
}

ir::OrderedMap<std::string> ConvAttrs(size_t nd, const Window& w, int64_t group, bool transpose) {
  const std::string data = nd == 2 ? "NCHW" : "NCW";
  const std::string kernel = transpose ? (nd == 2 ? "IOHW" : "IOW") : (nd == 2 ? "OIHW" : "OIW");
  return Attrs({{"out_layout", data},
                {"data_layout", data},
                {"padding", PaddingAttr(w.pads)},
                {"groups", ir::AttrInt(group)},
                {"kernel_layout", kernel},
                {"strides", ir::AttrInts(w.strides)},
                {"dilation", ir::AttrInts(w.dilations)},
                {"out_dtype", ""}});
}

/// A 2-D convolution whose weight is computed at run time (nn.conv2d takes its weight as a
/// weight only): im2col written in MSC ops. x [N, C, H, W] is padded (nn.pad), each of the kH*kW
/// taps is a strided_slice [N, C, oH, oW], stacked to [N, C, kH*kW, oH, oW] and reshaped to
/// [N, G, C/G*kH*kW, oH*oW]; W [O, C/G, kH, kW] reshaped to [G, O/G, C/G*kH*kW]; matmul gives
/// [N, G, O/G, oH*oW] -> [N, O, oH, oW]. Same sums as the convolution (cross-correlation).
std::string Im2colConv2d(C& c, const Window& w, int64_t group, const OutSpec& out) {
  const std::string what = "Conv with a run-time weight (computed as im2col + matmul)";
  const std::vector<int64_t> xs = StaticShape(c, 0, what), ws = StaticShape(c, 1, what);
  const int64_t n = xs[0], ch = xs[1], o = ws[0], kh = ws[2], kw = ws[3];
  const int64_t oh = out.shape[2], ow = out.shape[3];
  if (oh < 1 || ow < 1)
    c.Fail(what + ": empty or symbolic output " + weights::FormatShape(out.shape));
  const std::string dtype = c.In(0).dtype;
  std::string x = c.T(0);
  const std::vector<int64_t>& p = w.pads;  // top, left, bottom, right
  std::vector<int64_t> ps = xs;
  if (std::any_of(p.begin(), p.end(), [](int64_t v) { return v != 0; })) {
    ps = {n, ch, xs[2] + p[0] + p[2], xs[3] + p[1] + p[3]};
    x = Node(c, "nn.pad", {x},
             Attrs({{"pad_mode", "constant"},
                    {"pad_value", ir::AttrFloat(0)},
                    {"pad_width", ir::AttrInts({0, 0, 0, 0, p[0], p[2], p[1], p[3]})}}),
             {dtype, ps, {}});
  }
  std::vector<std::string> taps;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      const int64_t b0 = i * w.dilations[0], b1 = j * w.dilations[1];
      taps.push_back(Node(c, "strided_slice", {x},
                          Attrs({{"assume_inbound", "0"},
                                 {"end", ir::AttrInts({b0 + (oh - 1) * w.strides[0] + 1,
                                                       b1 + (ow - 1) * w.strides[1] + 1})},
                                 {"begin", ir::AttrInts({b0, b1})},
                                 {"axes", ir::AttrInts({2, 3})},
                                 {"strides", ir::AttrInts(w.strides)}}),
                          {dtype, {n, ch, oh, ow}, {}}));
    }
  const int64_t k = kh * kw, cg = ch / group * k;
  std::string cols = taps.size() == 1 ? taps[0]
                                      : Node(c, "stack", taps, Attrs({{"axis", "2"}}),
                                             {dtype, {n, ch, k, oh, ow}, {}});
  cols = Reshape(c, cols, {n, group, cg, oh * ow});
  const std::string wt = InputAs(c, 1, {group, o / group, cg});
  const std::string mm = Node(c, "matmul", {wt, cols}, Attrs({{"out_dtype", ""}}),
                              {out.dtype, {n, group, o / group, oh * ow}, {}});
  return Reshape(c, mm, {n, o, oh, ow});
}

/// Conv (opsets 1, 11) on 1-D / 2-D data (3-D: Conv3dAsConv2d). Constant weight: nn.conv{1,2}d with
/// weight OI[H]W, with a constant bias msc.conv{1,2}d_bias (bias [O]); a run-time bias is an `add`
/// of it reshaped to [1, O, 1(, 1)] (relax's frontend). A run-time weight: nn.conv1d takes it as
/// its second input; 2-D uses Im2colConv2d. auto_pad SAME_* / VALID become explicit padding.
void Conv(C& c) {
  if (c.Rank(0) == 5) return Conv3dAsConv2d(c);
  const size_t nd = SpatialDims(c, "convolution");
  const Value& x = c.In(0);
  const Value& wv = c.In(1);
  if (wv.shape.size() != nd + 2) c.Fail("weight rank " + Str(c.Rank(1)) + " != input rank");
  const std::vector<int64_t> kernel = Spatial(wv.shape);
  for (int64_t k : kernel)
    if (k < 0) c.Fail("the kernel size (dims of the weight) must be static");
  if (c.attrs.Has("kernel_shape") && c.attrs.Ints("kernel_shape") != kernel)
    c.Fail("kernel_shape does not match the weight's shape " + weights::FormatShape(wv.shape));
  const Window w = ReadWindow(c, kernel, Spatial(x.shape), true);
  const int64_t group = c.attrs.Int("group", 1), o = wv.shape[0];
  if (group < 1 || o < 0 || o % group != 0)
    c.Fail("group " + Str(group) + " does not divide the " + Str(o) + " output channels");
  if (x.shape[1] >= 0 && wv.shape[1] >= 0 && x.shape[1] != wv.shape[1] * group)
    c.Fail("input has " + Str(x.shape[1]) + " channels, the weight expects " +
           Str(wv.shape[1] * group) + " (" + Str(wv.shape[1]) + " x group " + Str(group) + ")");
  const OutSpec out = c.Out(0);
  std::vector<int64_t> expect;
  for (size_t i = 0; i < nd; ++i)
    expect.push_back(x.shape[2 + i] < 0
                         ? -1
                         : WindowOut(x.shape[2 + i], kernel[i], w.strides[i], w.dilations[i],
                                     w.pads[i], w.pads[nd + i], false));
  CheckSpatial(c, out, expect);
  const auto attrs = ConvAttrs(nd, w, group, false);
  const std::string conv = nd == 2 ? "nn.conv2d" : "nn.conv1d";
  std::string y;
  if (c.IsConst(1)) {
    std::vector<WeightSpec> ws{{"weight", c.Const(1), c.InName(1), nd == 2 ? "OIHW" : "OIW"}};
    if (c.IsConst(2)) {
      const weights::Tensor& b = c.Const(2);
      if (b.shape != std::vector<int64_t>{o})
        c.Fail("bias has shape " + weights::FormatShape(b.shape) + ", expected [" + Str(o) + "]");
      ws.push_back({"bias", b, c.InName(2), "O"});
      c.EmitOut(nd == 2 ? "msc.conv2d_bias" : "msc.conv1d_bias", {c.T(0)}, attrs, ws);
      return;
    }
    y = Node(c, conv, {c.T(0)}, attrs, out, ws);
  } else if (nd == 1) {
    y = Node(c, conv, {c.T(0), c.T(1)}, attrs, out);
  } else {
    y = Im2colConv2d(c, w, group, out);
  }
  if (c.Has(2)) y = Node(c, "add", {y, ChannelBias(c, o, nd)}, {}, out);
  c.Bind(0, y);
}

/// ConvTranspose (opsets 1, 11) on 1-D / 2-D data -> nn.conv{1,2}d_transpose with the weight
/// IO[H]W [C, O/group, k..] as its second input (MSC keeps it a `constant` node) and a bias as
/// an `add` of [1, O, 1(, 1)]. Padding per the ONNX spec: explicit `pads`; or, with output_shape
/// or auto_pad SAME_* (output = input * stride), total = stride * (in - 1) + output_padding +
/// (k - 1) * dilation + 1 - output, split begin = total - total / 2 (SAME_UPPER: total / 2); a
/// negative total (output larger than the full result) becomes extra output_padding (zeros).
void ConvTranspose(C& c) {
  const size_t nd = SpatialDims(c, "transposed convolution");
  const Value& x = c.In(0);
  const Value& wv = c.In(1);
  if (wv.shape.size() != nd + 2) c.Fail("weight rank " + Str(c.Rank(1)) + " != input rank");
  const std::vector<int64_t> kernel = Spatial(wv.shape);
  for (int64_t k : kernel)
    if (k < 0) c.Fail("the kernel size (dims of the weight) must be static");
  if (c.attrs.Has("kernel_shape") && c.attrs.Ints("kernel_shape") != kernel)
    c.Fail("kernel_shape does not match the weight's shape " + weights::FormatShape(wv.shape));
  const std::string auto_pad = AutoPad(c);
  Window w = ReadWindow(c, kernel, Spatial(x.shape), true);  // SAME_* pads recomputed below
  const int64_t group = c.attrs.Int("group", 1);
  if (group < 1) c.Fail("group " + Str(group) + " is below 1");
  if (x.shape[1] >= 0 && wv.shape[0] >= 0 && x.shape[1] != wv.shape[0])
    c.Fail("input has " + Str(x.shape[1]) + " channels, the weight " + Str(wv.shape[0]));
  const int64_t o = wv.shape[1] * group;
  std::vector<int64_t> op = c.attrs.Ints("output_padding", std::vector<int64_t>(nd, 0));
  if (op.size() != nd) c.Fail("output_padding needs " + Str(static_cast<int64_t>(nd)) + " values");
  std::vector<int64_t> target = c.attrs.Ints("output_shape");
  if (target.size() == nd + 2) target = Spatial(target);
  if (!target.empty() && target.size() != nd)
    c.Fail("output_shape needs " + Str(static_cast<int64_t>(nd)) + " (spatial) values");
  if (target.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"))
    for (size_t i = 0; i < nd; ++i) target.push_back(x.shape[2 + i] * w.strides[i]);
  if (!target.empty()) {
    for (size_t i = 0; i < nd; ++i) {
      const int64_t in = x.shape[2 + i];
      if (in < 0) c.Fail("output_shape / auto_pad need static spatial input dims");
      const int64_t total =
          w.strides[i] * (in - 1) + op[i] + (kernel[i] - 1) * w.dilations[i] + 1 - target[i];
      if (total < 0) {
        op[i] -= total;
        w.pads[i] = w.pads[nd + i] = 0;
      } else {
        w.pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        w.pads[nd + i] = total - w.pads[i];
      }
    }
  }
  for (size_t i = 0; i < nd; ++i)
    if (op[i] < 0 || (op[i] >= w.strides[i] && op[i] >= w.dilations[i]))
      c.Fail("output_padding " + Str(op[i]) + " must be smaller than the stride (" +
             Str(w.strides[i]) + ") or the dilation (" + Str(w.dilations[i]) + ")");
  const OutSpec out = c.Out(0);
  std::vector<int64_t> expect;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t in = x.shape[2 + i];
    expect.push_back(in < 0 ? -1
                            : w.strides[i] * (in - 1) + op[i] + (kernel[i] - 1) * w.dilations[i] +
                                  1 - w.pads[i] - w.pads[nd + i]);
  }
  CheckSpatial(c, out, expect);
  auto attrs = ConvAttrs(nd, w, group, true);
  attrs.emplace_back("output_padding", ir::AttrInts(op));
  std::string y = Node(c, nd == 2 ? "nn.conv2d_transpose" : "nn.conv1d_transpose", {c.T(0), c.T(1)},
                       attrs, out);
  if (c.Has(2)) y = Node(c, "add", {y, ChannelBias(c, o, nd)}, {}, out);
  c.Bind(0, y);
}

/// Gemm (opsets 1-13): Y = alpha * A' B' + beta * C (A' = A or A^T by transA, same for B).
/// As relax's frontend: A is multiplied by alpha, transposed by permute_dims; a constant B becomes
/// msc.linear's weight [O, I] (transposed at import when transB = 0), with a constant C that
/// broadcasts as a vector [O] folded into msc.linear_bias's bias (times beta); otherwise matmul
/// and an `add` of beta * C (numpy broadcasting covers Gemm-6's broadcast=1).
void Gemm(C& c) {
  if (c.Rank(0) != 2 || c.Rank(1) != 2) c.Fail("A and B must be 2-D");
  const double alpha = c.attrs.Float("alpha", 1.0f), beta = c.attrs.Float("beta", 1.0f);
  const bool trans_a = c.attrs.Int("transA", 0) != 0, trans_b = c.attrs.Int("transB", 0) != 0;
  const OutSpec out = c.Out(0);
  if (out.shape.size() != 2) c.Fail("ONNX shape inference gives a non-2-D output");
  const std::string dtype = out.dtype;
  const bool is_float = dtype.rfind("float", 0) == 0 || dtype == "bfloat16";
  if (!is_float && (alpha != std::floor(alpha) || beta != std::floor(beta)))
    c.Fail("alpha / beta must be integers for " + dtype + " operands");
  std::string a = c.T(0);
  if (alpha != 1) a = Node(c, "multiply", {a, Scalar(c, dtype, alpha)}, {}, InSpec(c, 0));
  if (trans_a) a = Permute(c, a, {1, 0});
  const bool has_c = c.Has(2) && beta != 0;
  const int64_t o = out.shape[1];
  std::string y;
  if (c.IsConst(1)) {
    const weights::Tensor& b = c.Const(1);
    WeightSpec weight{"weight", trans_b ? b : Transposed2D(b), trans_b ? c.InName(1) : "", "OI"};
    if (has_c && c.IsConst(2) && o >= 0) {
      const weights::Tensor& cv = c.Const(2);
      const int64_t n = Numel(cv.shape);
      const bool vector =
          n == 1 || cv.shape == std::vector<int64_t>{o} || cv.shape == std::vector<int64_t>{1, o};
      if (vector) {
        std::vector<double> v = TensorDoubles(cv);
        if (n == 1) v.assign(static_cast<size_t>(o), v.at(0));
        for (double& e : v) e *= beta;
        WeightSpec bias{"bias", MakeTensor(cv.dtype, {o}, v),
                        beta == 1 && cv.shape.size() == 1 && n == o ? c.InName(2) : "", "O"};
        c.EmitOut("msc.linear_bias", {a}, Attrs({{"out_dtype", ""}}), {weight, bias});
        return;
      }
    }
    y = Node(c, "msc.linear", {a}, Attrs({{"out_dtype", ""}}), out, {weight});
  } else {
    std::string b = c.T(1);
    if (trans_b) b = Permute(c, b, {1, 0});
    y = Node(c, "matmul", {a, b}, Attrs({{"out_dtype", ""}}), out);
  }
  if (has_c) {
    std::string cc;
    if (c.IsConst(2) && beta != 1) {
      std::vector<double> v = TensorDoubles(c.Const(2));
      for (double& e : v) e *= beta;
      cc = c.ConstTensor(MakeTensor(c.Const(2).dtype, c.Const(2).shape, v));
    } else {
      cc = c.T(2);
      if (beta != 1) cc = Node(c, "multiply", {cc, Scalar(c, dtype, beta)}, {}, InSpec(c, 2));
    }
    y = Node(c, "add", {y, cc}, {}, out);
  }
  c.Bind(0, y);
}

/// MatMul (opsets 1-13): matmul with numpy semantics; a constant B stays a `constant` node
/// input (relax's frontend emits matmul(A, B); MSC's linear patterns need a permute_dims).
void MatMul(C& c) { c.EmitOut("matmul", {c.T(0), c.T(1)}, Attrs({{"out_dtype", ""}})); }

/// MaxPool (1, 8, 10, 11, 12, 22) / AveragePool (1, 7, 10, 11, 19, 22) on 1-D / 2-D data ->
/// nn.{max,avg}_pool{1,2}d. dilations from MaxPool-10 and AveragePool-19, ceil_mode from opset 10,
/// count_include_pad from AveragePool-7; auto_pad as explicit padding. MaxPool's Indices output
/// has no MSC equivalent.
void Pool(C& c, bool is_max, bool is_lp = false) {
  if (c.Rank(0) == 5 && !is_lp) return Pool3dAs2d(c, is_max);
  const size_t nd = SpatialDims(c, "pooling");
  if (is_max && c.HasOut(1)) c.Fail("the Indices output (argmax positions) has no MSC equivalent");
  const std::vector<int64_t> kernel = c.attrs.Ints("kernel_shape");
  if (kernel.size() != nd)
    c.Fail("kernel_shape must have " + Str(static_cast<int64_t>(nd)) + " values");
  const Value& x = c.In(0);
  Window w = ReadWindow(c, kernel, Spatial(x.shape), c.opset >= (is_max ? 10 : is_lp ? 18 : 19));
  bool ceil = c.opset >= 10 && c.attrs.Int("ceil_mode", 0) != 0;
  if (is_lp && ceil) c.Fail("ceil_mode is not supported for LpPool");
  const bool include_pad =
      is_lp || (!is_max && c.opset >= 7 && c.attrs.Int("count_include_pad", 0) != 0);
  const OutSpec out = c.Out(0);
  std::vector<int64_t> expect;
  bool dropped = false;  // ceil_mode left a window that starts in the end padding
  for (size_t i = 0; i < nd; ++i) {
    const int64_t in = x.shape[2 + i];
    if (in < 0) {
      expect.push_back(-1);
      continue;
    }
    int64_t n =
        WindowOut(in, kernel[i], w.strides[i], w.dilations[i], w.pads[i], w.pads[nd + i], ceil);
    if (n < 1) c.Fail("the pooling window is larger than the padded input");
    // Such a window is dropped (ONNX's shape inference and reference since onnx 1.20, as torch).
    if (ceil && (n - 1) * w.strides[i] >= in + w.pads[i]) --n, dropped = true;
    expect.push_back(n);
  }
  CheckSpatial(c, out, expect);
  if (dropped) {
    // relax would keep the dropped window: floor mode instead, with the end padding that makes
    // floor count exactly the kept windows (the extra padding is only ever read by the last,
    // partial window, where max and average-without-padding ignore it).
    if (include_pad)
      c.Fail(
          "with ceil_mode and count_include_pad a window that starts in the end padding is "
          "dropped; its neighbour's divisor has no MSC expression");
    for (size_t i = 0; i < nd; ++i) {
      const int64_t in = x.shape[2 + i], eff = (kernel[i] - 1) * w.dilations[i] + 1;
      if (in < 0) c.Fail("with ceil_mode dropping a window, the spatial dims must be static");
      if (WindowOut(in, kernel[i], w.strides[i], w.dilations[i], w.pads[i], w.pads[nd + i],
                    false) != expect[i])
        w.pads[nd + i] = (expect[i] - 1) * w.strides[i] + eff - in - w.pads[i];
    }
    ceil = false;
  }
  const std::string layout = nd == 2 ? "NCHW" : "NCW";
  const std::string optype =
      std::string(is_max ? "nn.max_pool" : "nn.avg_pool") + (nd == 2 ? "2d" : "1d");
  const auto attrs = Attrs({{"dilation", ir::AttrInts(w.dilations)},
                            {"layout", layout},
                            {"padding", PaddingAttr(w.pads)},
                            {"out_layout", layout},
                            {"ceil_mode", ir::AttrBool(ceil)},
                            {"pool_size", ir::AttrInts(kernel)},
                            {"count_include_pad", ir::AttrBool(include_pad)},
                            {"strides", ir::AttrInts(w.strides)}});
  if (!is_lp) {
    c.EmitOut(optype, {c.T(0)}, attrs);
    return;
  }
  // LpPool: (sum over the window of |x|^p)^(1/p), the zero padding included (ONNX reference,
  // op_lp_pool.py) = (avg_pool(|x|^p, count_include_pad) * window size)^(1/p).
  const int64_t p = c.attrs.Int("p", 2);
  if (p < 1) c.Fail("p = " + Str(p) + " must be >= 1");
  const OutSpec in = InSpec(c, 0);
  const std::string xt = c.T(0);
  std::string t = p == 2 ? Node(c, "multiply", {xt, xt}, {}, in) : Node(c, "abs", {xt}, {}, in);
  if (p > 2) t = Node(c, "power", {t, Scalar(c, in.dtype, static_cast<double>(p))}, {}, in);
  int64_t size = 1;
  for (int64_t k : kernel) size *= k;
  t = Node(c, optype, {t}, attrs, out);
  t = Node(c, "multiply", {t, Scalar(c, in.dtype, static_cast<double>(size))}, {}, out);
  if (p == 2) t = Node(c, "sqrt", {t}, {}, out);
  if (p > 2) t = Node(c, "power", {t, Scalar(c, in.dtype, 1.0 / static_cast<double>(p))}, {}, out);
  c.Bind(0, t);
}

/// GlobalAveragePool / GlobalMaxPool: mean / max over the spatial dims with keepdims, as relax's
/// frontend writes them (any rank >= 3).
void GlobalPool(C& c, const std::string& optype) {
  const int64_t rank = c.Rank(0);
  if (rank < 3) c.Fail("input rank " + Str(rank) + " has no spatial dims (needs N x C x D1 ...)");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  c.EmitOut(optype, {c.T(0)}, Attrs({{"keepdims", "1"}, {"axis", ir::AttrInts(axes)}}));
}

/// Flatten (1, 9, 11, 13): reshape to [prod(dims before axis), prod(dims from axis)]; axis in
/// [-rank, rank]. A symbolic dim (dynamic batch) stays symbolic when merged only with 1s.
void Flatten(C& c) {
  const int64_t rank = c.Rank(0);
  int64_t axis = c.attrs.Int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) c.Fail("axis " + Str(c.attrs.Int("axis", 1)) + " is out of range");
  const OutSpec flat = Coerce2D(c, InSpec(c, 0), static_cast<size_t>(axis));
  c.Bind(0, Reshape(c, c.T(0), flat.shape, flat.prims));
}

/// Softmax / LogSoftmax: opset >= 13 along `axis` (default -1); before 13 the input is coerced to
/// 2-D [prod(dims before axis), prod(rest)] (default axis 1), normalized along the second dim and
/// reshaped back - the same as one softmax along `axis` only when axis is the last dim.
void SoftmaxLike(C& c, const std::string& optype) {
  const int64_t rank = c.Rank(0);
  if (rank < 1) c.Fail("input must have at least one dim");
  const int64_t raw = c.attrs.Int("axis", c.opset >= 13 ? -1 : 1);
  const int64_t axis = NormAxis(c, raw, rank);
  if (c.opset >= 13 || axis == rank - 1) {
    c.EmitOut(optype, {c.T(0)}, Attrs({{"axis", ir::AttrInt(raw)}}));
    return;
  }
  const OutSpec spec = InSpec(c, 0);
  const OutSpec flat = Coerce2D(c, spec, static_cast<size_t>(axis));
  std::string t = Reshape(c, c.T(0), flat.shape, flat.prims);
  t = Node(c, optype, {t}, Attrs({{"axis", "-1"}}), flat);
  c.Bind(0, Reshape(c, t, spec.shape, spec.prims));
}

/// Hardmax: one_hot(argmax(x, axis), depth = dim of axis, axis) in x's dtype (relax's frontend);
/// before opset 13 on the 2-D coercion as in SoftmaxLike. Ties pick the first maximum (ONNX).
void Hardmax(C& c) {
  const int64_t rank = c.Rank(0);
  if (rank < 1) c.Fail("input must have at least one dim");
  int64_t axis = NormAxis(c, c.attrs.Int("axis", c.opset >= 13 ? -1 : 1), rank);
  const OutSpec spec = InSpec(c, 0);
  std::string x = c.T(0);
  OutSpec work = spec;
  if (c.opset < 13 && axis != rank - 1) {
    work = Coerce2D(c, spec, static_cast<size_t>(axis));
    x = Reshape(c, x, work.shape, work.prims);
    axis = 1;
  }
  const int64_t depth = work.shape[static_cast<size_t>(axis)];
  if (depth < 0) c.Fail("the size of the axis must be static (the one_hot depth)");
  OutSpec idx_spec = Reduced(work, {axis}, false);
  idx_spec.dtype = "int64";
  const std::string idx =
      Node(c, "argmax", {x}, Attrs({{"keepdims", "0"}, {"axis", ir::AttrInt(axis)}}), idx_spec);
  const std::string hot = Node(c, "one_hot", {idx},
                               Attrs({{"depth", ir::AttrInt(depth)},
                                      {"axis", ir::AttrInt(axis)},
                                      {"on_value", ir::AttrFloat(1)},
                                      {"off_value", ir::AttrFloat(0)}}),
                               work);
  c.Bind(0, Reshape(c, hot, spec.shape, spec.prims));
}

/// Dropout (1, 6, 7, 10, 12, 13) for inference: Y = X. training_mode (opset 12+) must be a
/// constant false, or true with a constant ratio 0 (random masks cannot be reproduced). Before
/// opset 7 `is_test` is ignored (an inference graph; ONNX Runtime does the same). The optional
/// mask output is all true (all ones before opset 10, where it has X's type).
void Dropout(C& c) {
  if (c.opset >= 12 && c.Has(2)) {
    if (!c.IsConst(2))
      c.Fail("training_mode must be a constant (dropout in training mode is random)");
    const std::vector<int64_t> training = c.ConstInts(2);
    if (training.size() != 1) c.Fail("training_mode must hold one value");
    if (training[0] != 0) {
      const std::vector<double> r = c.Has(1) ? c.ConstDoubles(1) : std::vector<double>{0.5};
      if (r.size() != 1) c.Fail("ratio must hold one value");
      const double ratio = r[0];
      if (ratio != 0)
        c.Fail("training_mode = true with ratio " + ir::AttrDouble(ratio) +
               " drops random elements; only inference (or ratio 0) is supported");
    }
  }
  if (c.IsConst(0))
    c.BindConst(0, c.Const(0));
  else
    c.Bind(0, c.T(0));
  if (c.HasOut(1)) {
    // Old exports leave the unused mask's type to inference, which some opsets do not give.
    const Value& x = c.In(0);
    OutSpec mask{c.opset < 10 ? x.dtype : "bool", x.shape, x.prims};
    try {
      mask = c.Out(1);
    } catch (const Unsupported&) {
    }
    if (!mask.prims.empty()) c.Fail("the mask output needs a static shape");
    c.Bind(1, Node(c, "ones", {},
                   Attrs({{"shape", ir::AttrInts(mask.shape)}, {"dtype", mask.dtype}}), mask));
  }
}

/// Einsum (12): einsum with the equation as `subscripts` (spaces removed).
void Einsum(C& c) {
  std::string eq;
  for (char ch : c.attrs.Str("equation", ""))
    if (ch != ' ') eq += ch;
  if (eq.empty()) c.Fail("equation is missing");
  std::vector<std::string> ins;
  for (int k = 0; k < c.NumInputs(); ++k) ins.push_back(c.T(k));
  c.EmitOut("einsum", ins, Attrs({{"subscripts", eq}}));
}

/// Pad (1: `paddings`, 2: `pads` / `value` attrs, 11 / 13: `pads` / `constant_value` inputs,
/// 18: optional `axes` input; all must be constants) -> nn.pad with pad_width [before_0, after_0,
/// ...] from ONNX's [begin_0, begin_1, ..., end_0, end_1, ...]; modes constant / reflect / edge.
void Pad(C& c) {
  const std::string mode = c.attrs.Str("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    c.Fail("mode '" + mode + "' is not supported (nn.pad: constant, reflect, edge)");
  std::vector<int64_t> pads;
  double value = 0;
  if (c.opset < 11) {
    pads = c.attrs.Ints(c.opset < 2 ? "paddings" : "pads");
    value = c.attrs.Float("value", 0);
  } else {
    pads = c.ConstInts(1);
    if (c.Has(2)) {
      const std::vector<double> v = c.ConstDoubles(2);
      if (v.size() != 1) c.Fail("constant_value must hold one value");
      value = v[0];
    }
  }
  const int64_t rank = c.Rank(0);
  if (c.opset >= 18 && c.Has(3)) {
    // Pad-18 `axes`: pads holds [begin, end] for those axes only; the others are not padded.
    const std::vector<int64_t> axes = c.ConstInts(3);
    const auto n = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads.size()) != 2 * n)
      c.Fail("pads has " + Str(static_cast<int64_t>(pads.size())) + " values, expected 2 x " +
             Str(n) + " axes");
    std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t a = NormAxis(c, axes[static_cast<size_t>(i)], rank);
      if (seen[static_cast<size_t>(a)]) c.Fail("axes repeat axis " + Str(a));
      seen[static_cast<size_t>(a)] = true;
      full[static_cast<size_t>(a)] = pads[static_cast<size_t>(i)];
      full[static_cast<size_t>(a + rank)] = pads[static_cast<size_t>(i + n)];
    }
    pads = full;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    c.Fail("pads has " + Str(static_cast<int64_t>(pads.size())) + " values, expected 2 x rank " +
           Str(rank));
  std::vector<int64_t> width;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t before = pads[static_cast<size_t>(d)],
                  after = pads[static_cast<size_t>(d + rank)];
    if (before < 0 || after < 0) c.Fail("negative pads (cropping) are not supported");
    if (mode == "reflect" && (before || after)) {
      const int64_t n = c.In(0).shape[static_cast<size_t>(d)];
      if (n >= 0 && (before > n - 1 || after > n - 1))
        c.Fail("reflect padding of dim " + Str(d) + " by " + Str(before) + ", " + Str(after) +
               " exceeds its size - 1 (" + Str(n - 1) + ")");
    }
    width.push_back(before);
    width.push_back(after);
  }
  c.EmitOut("nn.pad", {c.T(0)},
            Attrs({{"pad_mode", mode},
                   {"pad_value", ir::AttrDouble(value)},
                   {"pad_width", ir::AttrInts(width)}}));
}

/// DepthToSpace (1, 11, 13; mode DCR / CRD from 11) and SpaceToDepth (1, 13; mode from 28) on
/// static 4-D NCHW:
/// reshape + permute_dims + reshape, as relax's frontend (and the ONNX spec) writes them.
void DepthSpace(C& c, bool to_space) {
  const int64_t bs = c.attrs.Int("blocksize", 0);
  if (bs < 1) c.Fail("blocksize must be >= 1");
  int64_t bs2 = 0;  // blocksize^2 wrapped to 0 for multiples of 2^32: SIGFPE below
  if (__builtin_mul_overflow(bs, bs, &bs2)) c.Fail("blocksize " + Str(bs) + " is too large");
  std::string batch;
  const std::vector<int64_t> s = BatchSymbolicShape(c, 0, c.node.op_type(), &batch);
  if (s.size() != 4) c.Fail("input must be 4-D NCHW");
  const int64_t b = s[0], ch = s[1], h = s[2], w = s[3];
  std::vector<int64_t> split, perm, out;
  if (to_space) {
    const std::string mode = c.opset >= 11 ? c.attrs.Str("mode", "DCR") : "DCR";
    if (ch % bs2 != 0) c.Fail("channels " + Str(ch) + " are not a multiple of blocksize^2");
    const int64_t oc = ch / bs2;
    if (mode == "DCR") {
      split = {b, bs, bs, oc, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {b, oc, bs, bs, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      c.Fail("mode '" + mode + "' is not DCR or CRD");
    }
    int64_t oh = 0, ow = 0;
    if (__builtin_mul_overflow(h, bs, &oh) || __builtin_mul_overflow(w, bs, &ow))
      c.Fail("the output dims overflow int64");
    out = {b, oc, oh, ow};
  } else {
    if (h % bs != 0 || w % bs != 0)
      c.Fail("spatial dims " + Str(h) + "x" + Str(w) + " are not multiples of blocksize");
    // SpaceToDepth-28 added `mode`; before, DCR. CRD keeps the channel outermost.
    const std::string mode = c.opset >= 28 ? c.attrs.Str("mode", "DCR") : "DCR";
    split = {b, ch, h / bs, bs, w / bs, bs};
    if (mode == "DCR")
      perm = {0, 3, 5, 1, 2, 4};
    else if (mode == "CRD")
      perm = {0, 1, 3, 5, 2, 4};
    else
      c.Fail("mode '" + mode + "' is not DCR or CRD");
    int64_t oc = 0;
    if (__builtin_mul_overflow(ch, bs2, &oc)) c.Fail("the output channels overflow int64");
    out = {b, oc, h / bs, w / bs};
  }
  std::string t = Reshape(c, c.T(0), split, PrimsOf(split, batch));
  t = Permute(c, t, perm);
  c.Bind(0, Reshape(c, t, out, PrimsOf(out, batch)));
}

/// Attention (23-25) as AttentionTakes accepts it -> msc.attention: Q [B, N, S_q, H], K / V
/// [B, N, S_kv, H / H_v] permuted to relax's [B, S, N, H] (axes 0,2,1,3), softmax(Q K^T * scale
/// + mask) V with `scale` (default 1 / sqrt(H), msc.attention's default), a float attn_mask
/// reshaped to 4-D, is_causal as causal_mask TopLeft (ONNX aligns the causal frontier
/// bottom-right by the past length, which is 0 without past_key), Y permuted back.
void Attention(C& c) {
  std::vector<std::string> ins{c.T(0), c.T(1), c.T(2)};
  if (c.Has(3)) {
    const Value& m = c.In(3);
    if (m.shape.size() > 4) c.Fail("attn_mask has rank " + Str(c.Rank(3)) + " (at most 4)");
    std::vector<int64_t> shape(4 - m.shape.size(), 1);
    shape.insert(shape.end(), m.shape.begin(), m.shape.end());
    ins.push_back(m.shape.size() == 4 ? c.T(3) : Reshape(c, c.T(3), shape));
  }
  const std::string perm = "0,2,1,3";
  c.EmitOut("msc.attention", ins,
            Attrs({{"axes", perm},
                   {"axes_1", perm},
                   {"axes_2", perm},
                   {"axes_3", perm},
                   {"scale", c.attrs.Has("scale") ? ir::AttrFloat(c.attrs.Float("scale", 0)) : ""},
                   {"causal_mask", c.attrs.Int("is_causal", 0) ? "TopLeft" : ""},
                   {"window_size", ""}}));
}

}  // namespace

bool AttentionTakes(const onnx::NodeProto& node, const NodeAttrs& attrs, int64_t,
                    const TypeOf& type_of) {
  // Q, K, V and at most a float attn_mask; only Y; no softcap, windows or softmax precision.
  for (int k = 4; k < node.input_size(); ++k)
    if (!node.input(k).empty()) return false;
  for (int k = 1; k < node.output_size(); ++k)
    if (!node.output(k).empty()) return false;
  if (node.input_size() < 3 || attrs.Float("softcap", 0) != 0 ||
      attrs.Int("left_window_size", -1) != -1 || attrs.Int("right_window_size", -1) != -1 ||
      attrs.Has("softmax_precision"))
    return false;
  std::vector<const onnx::TypeProto*> t;
  for (int k = 0; k < node.input_size(); ++k)
    t.push_back(node.input(k).empty() ? nullptr : type_of(node.input(k)));
  auto dims = [&](int k) -> std::vector<int64_t> {
    std::vector<int64_t> d;
    if (k >= static_cast<int>(t.size()) || !t[k] || !t[k]->has_tensor_type() ||
        !t[k]->tensor_type().has_shape())
      return d;
    for (const auto& x : t[k]->tensor_type().shape().dim())
      d.push_back(x.has_dim_value() ? x.dim_value() : -1);
    return d;
  };
  const std::vector<int64_t> q = dims(0), kk = dims(1), v = dims(2);
  // 4-D with one head count (3-D inputs and grouped-query heads take the function body)
  if (q.size() != 4 || kk.size() != 4 || v.size() != 4 || q[1] < 0 || q[1] != kk[1] || q[1] != v[1])
    return false;
  if (node.input_size() > 3 && !node.input(3).empty()) {
    if (attrs.Int("is_causal", 0)) return false;
    const onnx::TypeProto* m = t[3];
    if (!m || !m->has_tensor_type() ||
        m->tensor_type().elem_type() != t[0]->tensor_type().elem_type())
      return false;  // a bool mask takes the body (fully masked rows give zeros, not NaN)
  }
  return true;
}

void RegisterNnOps(ConverterMap& m) {
  m["Attention"] = Attention;
  m["Conv"] = Conv;
  m["ConvTranspose"] = ConvTranspose;
  m["Gemm"] = Gemm;
  m["MatMul"] = MatMul;
  m["MaxPool"] = [](C& c) { Pool(c, true); };
  m["AveragePool"] = [](C& c) { Pool(c, false); };
  m["LpPool"] = [](C& c) {
    if (c.opset < 2) c.Fail("LpPool-1 (float p) is not supported");
    Pool(c, false, true);
  };
  m["GlobalAveragePool"] = [](C& c) { GlobalPool(c, "mean"); };
  m["GlobalMaxPool"] = [](C& c) { GlobalPool(c, "max"); };
  m["Flatten"] = Flatten;
  m["Softmax"] = [](C& c) { SoftmaxLike(c, "nn.softmax"); };
  m["LogSoftmax"] = [](C& c) { SoftmaxLike(c, "nn.log_softmax"); };
  m["Hardmax"] = Hardmax;
  m["Dropout"] = Dropout;
  m["Einsum"] = Einsum;
  m["Pad"] = Pad;
  m["DepthToSpace"] = [](C& c) { DepthSpace(c, true); };
  m["SpaceToDepth"] = [](C& c) { DepthSpace(c, false); };
  RegisterNnNormOps(m);
  RegisterNnResizeOps(m);
}

}  // namespace msc::frontend::onnx_import
