// ONNX normalization ops -> MSC: BatchNormalization (nn.batch_norm + get_item, as MSC writes
// relax's batch_norm tuple), LayerNormalization (nn.layer_norm), GroupNormalization
// (nn.group_norm), RMSNormalization (nn.rms_norm), and compositions of MSC
// elementwise / reduction optypes following the formulas of the ONNX operator spec
// (onnx/docs/Operators.md, opsets 1-17) for InstanceNormalization (as relax's frontend composes
// it), MeanVarianceNormalization, LpNormalization and LRN.
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

/// An elementwise node shaped like `like`.
std::string Ew(C& c, const std::string& optype, const std::vector<std::string>& ins,
               const OutSpec& like) {
  return Node(c, optype, ins, {}, like);
}

/// mean / variance / sum / max of `x` over `axes` with keepdims.
std::string Reduce(C& c, const std::string& optype, const std::string& x, const OutSpec& like,
                   const std::vector<int64_t>& axes) {
  return Node(c, optype, {x}, Attrs({{"keepdims", "1"}, {"axis", ir::AttrInts(axes)}}),
              Reduced(like, axes, true));
}

/// [C, 1, ..., 1] with rank - 2 trailing ones: how per-channel parameters broadcast against
/// N x C x D1 x ... (input k must be 1-D [C]).
std::vector<int64_t> ChannelShape(const C& c, int k, int64_t channels, int64_t rank) {
  const Value& v = c.In(k);
  if (v.shape.size() != 1 || (v.shape[0] >= 0 && channels >= 0 && v.shape[0] != channels))
    c.Fail("input " + Str(k) + " ('" + c.InName(k) + "') has shape " +
           weights::FormatShape(v.shape) + ", expected [" + Str(channels) + "]");
  if (channels < 0) c.Fail("the channel dim must be static");
  std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
  shape[0] = channels;
  return shape;
}

/// (x - mean) / sqrt(var + epsilon) * scale + bias, the per-channel parameters given as
/// tensors already shaped to broadcast.
std::string Normalize(C& c, const std::string& x, const std::string& mean, const std::string& var,
                      const std::string& scale, const std::string& bias, double epsilon,
                      const OutSpec& like) {
  const ir::MSCTensor& vt = c.Info(var);
  const OutSpec var_spec{vt.dtype, vt.shape, vt.prims};
  std::string d = Ew(c, "add", {var, Scalar(c, like.dtype, epsilon)}, var_spec);
  d = Ew(c, "sqrt", {d}, var_spec);
  std::string y = Ew(c, "subtract", {x, mean}, like);
  y = Ew(c, "divide", {y, d}, like);
  if (!scale.empty()) y = Ew(c, "multiply", {y, scale}, like);
  if (!bias.empty()) y = Ew(c, "add", {y, bias}, like);
  return y;
}

std::vector<int64_t> AxesFrom(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = first; d < rank; ++d) axes.push_back(d);
  return axes;
}

/// BatchNormalization (1, 6, 7, 9, 14, 15). Inference (the default; opset < 14 with only Y):
/// with constant scale / B / mean / var, nn.batch_norm (weights gamma, beta, mean, var; MSC's
/// attrs as relax's frontend leaves them: axis 1, training "1", momentum 0.1) + get_item 0;
/// otherwise composed as Y = (X - mean) / sqrt(var + epsilon) * scale + B. training_mode = 1
/// (opset 14+) is composed from the batch statistics (ONNX reference: population variance over
/// all axes but 1; running_mean = input_mean * momentum + mean * (1 - momentum), same for var).
/// spatial = 0 (opset < 9) and the training outputs of opset < 14 Fail.
/// The `epsilon` attribute of a node that becomes an MSC normalization op, whose opdef requires a
/// finite epsilon >= 0 (found by tests/fuzz/fuzz_onnx: a negative one made an invalid MSCGraph).
double NormEpsilon(C& c) {
  const double eps = c.attrs.Float("epsilon", 1e-5f);
  if (!(eps >= 0) || !std::isfinite(eps))
    c.Fail("epsilon must be a finite number >= 0, got " + ir::AttrDouble(eps));
  return eps;
}

void BatchNorm(C& c) {
  const int64_t rank = c.Rank(0);
  if (rank < 2) c.Fail("input rank " + Str(rank) + " has no channel dim");
  const double eps = NormEpsilon(c);
  if (c.opset < 9 && c.attrs.Int("spatial", 1) == 0)
    c.Fail("spatial = 0 (statistics per channel and position) is not supported");
  bool training = false;
  if (c.opset >= 14) {
    training = c.attrs.Int("training_mode", 0) != 0;
  } else {
    for (int k = 1; k < c.NumOutputs(); ++k)
      if (c.HasOut(k))
        c.Fail(
            "the training outputs (mean, var, saved_mean, saved_var) of BatchNormalization "
            "before opset 14 are not supported");
  }
  const OutSpec like = InSpec(c, 0);
  const int64_t channels = like.shape[1];
  std::vector<int64_t> cshape = ChannelShape(c, 1, channels, rank);
  for (int k = 2; k <= 4; ++k) ChannelShape(c, k, channels, rank);
  if (!training && c.IsConst(1) && c.IsConst(2) && c.IsConst(3) && c.IsConst(4)) {
    std::vector<WeightSpec> ws;
    const char* roles[] = {"gamma", "beta", "mean", "var"};
    for (int k = 1; k <= 4; ++k) ws.push_back({roles[k - 1], c.Const(k), c.InName(k), "O"});
    const OutSpec out = c.Out(0);
    const std::string bn = c.Emit("nn.batch_norm", {c.T(0)},
                                  Attrs({{"scale", "1"},
                                         {"center", "1"},
                                         {"training", "1"},
                                         {"axis", "1"},
                                         {"epsilon", ir::AttrFloat(static_cast<float>(eps))},
                                         {"momentum", ir::AttrFloat(0.1f)}}),
                                  {out}, ws)[0];
    const std::string producer = bn.substr(0, bn.rfind(':'));
    c.Bind(0, c.Emit("get_item", {bn}, Attrs({{"index", "0"}}), {out}, {}, producer + ".0")[0]);
    return;
  }
  const std::string x = c.T(0);
  const std::string scale = InputAs(c, 1, cshape), bias = InputAs(c, 2, cshape);
  if (!training) {
    // One statement each: InputAs may emit nodes, and the order of function arguments is
    // unspecified (gcc and clang named the nodes differently).
    const std::string mean = InputAs(c, 3, cshape);
    const std::string var = InputAs(c, 4, cshape);
    c.Bind(0, Normalize(c, x, mean, var, scale, bias, eps, like));
    return;
  }
  std::vector<int64_t> axes{0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  const std::string mean = Reduce(c, "mean", x, like, axes);
  const std::string var = Reduce(c, "variance", x, like, axes);
  c.Bind(0, Normalize(c, x, mean, var, scale, bias, eps, like));
  const double momentum = c.attrs.Float("momentum", 0.9f);
  for (int k = 1; k <= 2; ++k) {
    if (!c.HasOut(k)) continue;
    const OutSpec o = c.Out(k);
    const std::string stat = Reshape(c, k == 1 ? mean : var, {channels});
    const std::string run = Ew(c, "multiply", {c.T(k + 2), Scalar(c, like.dtype, momentum)}, o);
    const std::string cur = Ew(c, "multiply", {stat, Scalar(c, like.dtype, 1 - momentum)}, o);
    c.Bind(k, Ew(c, "add", {run, cur}, o));
  }
}

/// InstanceNormalization (1, 6): per sample and channel over the spatial dims, composed as
/// relax's frontend does: (x - mean) / sqrt(variance + epsilon) * scale + B (scale, B [C]).
void InstanceNorm(C& c) {
  const int64_t rank = c.Rank(0);
  if (rank < 3) c.Fail("input rank " + Str(rank) + " has no spatial dims");
  const OutSpec like = InSpec(c, 0);
  const std::vector<int64_t> cshape = ChannelShape(c, 1, like.shape[1], rank);
  ChannelShape(c, 2, like.shape[1], rank);
  const std::vector<int64_t> axes = AxesFrom(2, rank);
  const std::string x = c.T(0);
  const std::string mean = Reduce(c, "mean", x, like, axes);
  const std::string var = Reduce(c, "variance", x, like, axes);
  const std::string scale = InputAs(c, 1, cshape);  // in order (see BatchNorm)
  const std::string bias = InputAs(c, 2, cshape);
  c.Bind(0, Normalize(c, x, mean, var, scale, bias, c.attrs.Float("epsilon", 1e-5f), like));
}

/// LayerNormalization (17) over dims [axis, rank): nn.layer_norm (axes as negative indices, as
/// MSC writes torch's layer norms) with constant Scale / B of the normalized shape as gamma /
/// beta; otherwise nn.layer_norm without them followed by multiply / add (numpy broadcasting, as
/// the ONNX function body). The optional outputs Mean and InvStdDev are computed as the ONNX
/// function body does: mean over the axes, 1 / sqrt(mean((x - mean)^2) + epsilon) = rsqrt of
/// variance + epsilon (keepdims), in the output's (stash) type.
void LayerNorm(C& c) {
  const int64_t rank = c.Rank(0);
  const int64_t axis = NormAxis(c, c.attrs.Int("axis", -1), rank);
  const double eps = NormEpsilon(c);
  const OutSpec like = InSpec(c, 0);
  std::vector<int64_t> axes, neg_axes, norm_shape;
  for (int64_t d = axis; d < rank; ++d) {
    axes.push_back(d);
    neg_axes.push_back(d - rank);
    norm_shape.push_back(like.shape[static_cast<size_t>(d)]);
  }
  const std::string x = c.T(0);
  std::vector<WeightSpec> ws;
  const bool gamma = c.IsConst(1) && c.In(1).shape == norm_shape;
  const bool beta = c.Has(2) && c.IsConst(2) && c.In(2).shape == norm_shape;
  if (gamma) ws.push_back({"gamma", c.Const(1), c.InName(1), ""});
  if (beta && gamma) ws.push_back({"beta", c.Const(2), c.InName(2), ""});
  std::string y = Node(c, "nn.layer_norm", {x},
                       Attrs({{"scale", "1"},
                              {"center", "1"},
                              {"epsilon", ir::AttrFloat(static_cast<float>(eps))},
                              {"axes", ir::AttrInts(neg_axes)}}),
                       like, ws);
  if (!gamma) y = Ew(c, "multiply", {y, c.T(1)}, like);
  if (c.Has(2) && !(beta && gamma)) y = Ew(c, "add", {y, c.T(2)}, like);
  c.Bind(0, y);
  if (!c.HasOut(1) && !c.HasOut(2)) return;
  const std::string stash = c.HasOut(1) ? c.Out(1).dtype : c.Out(2).dtype;
  std::string xs = x;
  OutSpec xlike = like;
  if (stash != like.dtype) {
    xlike.dtype = stash;
    xs = Node(c, "astype", {x}, Attrs({{"dtype", stash}}), xlike);
  }
  if (c.HasOut(1)) c.Bind(1, Reduce(c, "mean", xs, xlike, axes));
  if (c.HasOut(2)) {
    const std::string var = Reduce(c, "variance", xs, xlike, axes);
    const OutSpec vs = Reduced(xlike, axes, true);
    const std::string v = Ew(c, "add", {var, Scalar(c, stash, eps)}, vs);
    c.Bind(2, Ew(c, "rsqrt", {v}, vs));
  }
}

/// GroupNormalization (21; opset 18's per-group scale and bias take ONNX's function body, see
/// PartialConverters) on N x C x D1 ... -> nn.group_norm over the spatial dims, channel axis 1,
/// with constant Scale / B [C] as gamma / beta (else multiply / add after it; stash_type is the
/// computation's precision, which nn.group_norm takes from the input).
void GroupNorm(C& c) {
  const int64_t rank = c.Rank(0);
  if (rank < 3) c.Fail("input rank " + Str(rank) + " has no spatial dims (needs N x C x D1 ...)");
  const OutSpec like = InSpec(c, 0);
  const int64_t channels = like.shape[1];
  const int64_t groups = c.attrs.Int("num_groups", 0);
  if (channels < 0) c.Fail("the channel dim must be static");
  if (groups < 1 || channels % groups != 0)
    c.Fail("num_groups " + Str(groups) + " does not divide the " + Str(channels) + " channels");
  const std::vector<int64_t> cshape = ChannelShape(c, 1, channels, rank);
  ChannelShape(c, 2, channels, rank);
  const bool affine = c.IsConst(1) && c.IsConst(2);
  std::vector<WeightSpec> ws;
  if (affine) ws = {{"gamma", c.Const(1), c.InName(1), ""}, {"beta", c.Const(2), c.InName(2), ""}};
  std::string y = Node(c, "nn.group_norm", {c.T(0)},
                       Attrs({{"num_groups", Str(groups)},
                              {"channel_axis", "1"},
                              {"axes", ir::AttrInts(AxesFrom(2, rank))},
                              {"epsilon", ir::AttrFloat(static_cast<float>(NormEpsilon(c)))},
                              {"center", ir::AttrBool(affine)},
                              {"scale", ir::AttrBool(affine)}}),
                       like, ws);
  if (!affine) {  // Scale / B computed at run time: applied per channel after the norm
    const std::string scale = InputAs(c, 1, cshape);
    y = Ew(c, "multiply", {y, scale}, like);
    const std::string bias = InputAs(c, 2, cshape);
    y = Ew(c, "add", {y, bias}, like);
  }
  c.Bind(0, y);
}

/// RMSNormalization (23) over dims [axis, rank): nn.rms_norm (axes as negative indices) with a
/// constant Scale of the normalized shape as its weight, else followed by a multiply (Scale
/// broadcasts unidirectionally, as in the ONNX function body).
void RmsNorm(C& c) {
  const int64_t rank = c.Rank(0);
  const int64_t axis = NormAxis(c, c.attrs.Int("axis", -1), rank);
  const OutSpec like = InSpec(c, 0);
  std::vector<int64_t> neg_axes, norm_shape;
  for (int64_t d = axis; d < rank; ++d) {
    neg_axes.push_back(d - rank);
    norm_shape.push_back(like.shape[static_cast<size_t>(d)]);
  }
  const bool weight = c.IsConst(1) && c.In(1).shape == norm_shape;
  std::vector<WeightSpec> ws;
  if (weight) ws.push_back({"weight", c.Const(1), c.InName(1), ""});
  std::string y = Node(c, "nn.rms_norm", {c.T(0)},
                       Attrs({{"axes", ir::AttrInts(neg_axes)},
                              {"epsilon", ir::AttrFloat(static_cast<float>(NormEpsilon(c)))}}),
                       like, ws);
  if (!weight) y = Ew(c, "multiply", {y, c.T(1)}, like);
  c.Bind(0, y);
}

/// MeanVarianceNormalization (9, 13) over `axes` (default [0, 2, 3]), the ONNX function body:
/// (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
void MeanVarianceNorm(C& c) {
  const int64_t rank = c.Rank(0);
  std::vector<int64_t> axes;
  for (int64_t a : c.attrs.Ints("axes", {0, 2, 3})) axes.push_back(NormAxis(c, a, rank));
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const OutSpec like = InSpec(c, 0);
  const OutSpec rs = Reduced(like, axes, true);
  const std::string x = c.T(0);
  const std::string mean = Reduce(c, "mean", x, like, axes);
  const std::string sq = Ew(c, "multiply", {x, x}, like);
  const std::string mean_sq = Reduce(c, "mean", sq, like, axes);
  const std::string sq_mean = Ew(c, "multiply", {mean, mean}, rs);
  std::string std_dev = Ew(c, "sqrt", {Ew(c, "subtract", {mean_sq, sq_mean}, rs)}, rs);
  std_dev = Ew(c, "add", {std_dev, Scalar(c, like.dtype, 1e-9)}, rs);
  c.Bind(0, Ew(c, "divide", {Ew(c, "subtract", {x, mean}, like), std_dev}, like));
}

/// LpNormalization (1, 22): x / ||x||_p along `axis` (default -1), p = 1 (sum of |x|) or 2
/// (sqrt of the sum of squares), keepdims; no epsilon, 0 where the norm is 0 (ONNX reference).
void LpNorm(C& c) {
  const int64_t rank = c.Rank(0);
  const int64_t axis = NormAxis(c, c.attrs.Int("axis", -1), rank);
  const int64_t p = c.attrs.Int("p", 2);
  if (p != 1 && p != 2) c.Fail("p = " + Str(p) + " is not supported (1 or 2)");
  const OutSpec like = InSpec(c, 0);
  const std::string x = c.T(0);
  std::string norm;
  if (p == 1) {
    norm = Reduce(c, "sum", Ew(c, "abs", {x}, like), like, {axis});
  } else {
    norm = Reduce(c, "sum", Ew(c, "multiply", {x, x}, like), like, {axis});
    norm = Ew(c, "sqrt", {norm}, Reduced(like, {axis}, true));
  }
  // A zero norm gives 0, not 0 / 0 (the ONNX reference, op_lp_normalization.py, and the spec's
  // tests from onnx 1.20: test_l2normalization_axis_0).
  const OutSpec rs = Reduced(like, {axis}, true);
  const std::string zero = Scalar(c, like.dtype, 0);
  const std::string is_zero = Ew(c, "equal", {norm, zero}, {"bool", rs.shape, rs.prims});
  c.Bind(0, Ew(c, "where", {is_zero, zero, Ew(c, "divide", {x, norm}, like)}, like));
}

/// LRN (1, 13) across channels: Y = X / (bias + alpha / size * square_sum)^beta with
/// square_sum[c] = sum of X^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
/// (ONNX spec). The window sum is an nn.avg_pool2d with count_include_pad over X^2 reshaped to
/// [N, 1, C, prod(spatial)] (zero-padded channels), which gives square_sum / size directly.
void Lrn(C& c) {
  const int64_t size = c.attrs.Int("size", 0);
  if (size < 1) c.Fail("size must be >= 1");
  const double alpha = c.attrs.Float("alpha", 1e-4f), beta = c.attrs.Float("beta", 0.75f);
  const double bias = c.attrs.Float("bias", 1.0f);
  std::string batch;
  const std::vector<int64_t> shape = BatchSymbolicShape(c, 0, "LRN", &batch);
  if (shape.size() < 2) c.Fail("input must be N x C x ...");
  const OutSpec like = InSpec(c, 0);
  const std::string x = c.T(0);
  const std::vector<int64_t> flat{shape[0], 1, shape[1], Prod(shape, 2, shape.size())};
  const std::vector<std::string> flat_prims = PrimsOf(flat, batch);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::string s = Reshape(c, Ew(c, "multiply", {x, x}, like), flat, flat_prims);
  s = Node(c, "nn.avg_pool2d", {s},
           Attrs({{"dilation", "1,1"},
                  {"layout", "NCHW"},
                  {"padding", ir::AttrInts({before, 0, after, 0})},
                  {"out_layout", "NCHW"},
                  {"ceil_mode", "0"},
                  {"pool_size", ir::AttrInts({size, 1})},
                  {"count_include_pad", "1"},
                  {"strides", "1,1"}}),
           {like.dtype, flat, flat_prims});
  s = Reshape(c, s, like.shape, like.prims);
  s = Ew(c, "multiply", {s, Scalar(c, like.dtype, alpha)}, like);
  s = Ew(c, "add", {s, Scalar(c, like.dtype, bias)}, like);
  s = Ew(c, "power", {s, Scalar(c, like.dtype, beta)}, like);
  c.Bind(0, Ew(c, "divide", {x, s}, like));
}

}  // namespace

void RegisterNnNormOps(ConverterMap& m) {
  m["BatchNormalization"] = BatchNorm;
  m["InstanceNormalization"] = InstanceNorm;
  m["LayerNormalization"] = LayerNorm;
  m["GroupNormalization"] = GroupNorm;
  m["RMSNormalization"] = RmsNorm;
  m["MeanVarianceNormalization"] = MeanVarianceNorm;
  m["LpNormalization"] = LpNorm;
  m["LRN"] = Lrn;
}

}  // namespace msc::frontend::onnx_import
