// msc_vk::ops: one function per optype; each checks shapes, picks the shader variant
// (specialization constants, texel views), fills the push constants, adds one kernel to the
// Program and dispatches it on a grid within the device limits. Generated model.cc calls these.
//
// Tensors are row-major. Conv/GEMM/pool/normalization/attention ops take float32 or float16 for
// every tensor, in any mix (layouts NCHW (X, Y) and OIHW (W); float16 is read through R16 texel
// views that widen it, and a float16 output is written by the shader's "+f16" variant, which needs
// storageBuffer16BitAccess: generate --precision fp16); the elementwise, creation, data-movement
// and indexing ops take float32, float16, int32, int64 and bool (see "dtypes" below). Attributes
// use MSC's meaning and order: padding = {top, left, bottom, right}; strides/dilation = {h, w}.
// Every shape or dtype mismatch throws msc_vk::Error("<optype> '<output name>': ...").
//
// dtypes: float16 is storage only (kernels compute in float32 and round to nearest even on
// store); integers compute in their own width (int64 as 64-bit integers); bool is one byte 0/1.
// Kernels whose tensors are all float32/int32 need no optional device feature; int64, float16
// and bool tensors select the "+ext" shader variant, which needs shaderInt64 and 8/16-bit
// storage (Context::features(); a device without them gets an Error naming the kernel).
// Index tensors (take, gather, scatter, one_hot) are int32 or int64 with |index| < 2^31.
//
// Aliasing: an output must not share bytes with an input unless its comment (or
// runtime/vulkan/README.md, "Aliasing") says it may. Where a comment counts dispatches, that is
// what one call records (none for an empty output).
//
// Kernel names (for errors) are the output tensor's name.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "program.h"

namespace msc_vk {
namespace ops {

// Fused epilogue of the conv / GEMM ops: y = clamp(y, min, max) when enabled (relu = clamp(y,
// 0, +inf)), or a unary op (Unary(); the kernels' "+act" shader variants, msc_vk_embed_shaders
// ACT).
struct Activation {
  bool enabled = false;
  float min = -std::numeric_limits<float>::infinity();  // clip bounds; a unary op's p0
  float max = std::numeric_limits<float>::infinity();   // a unary op's p1
  int32_t unary = -1;  // >= 0: this float unary op (its U_* code) instead of the clamp
  static Activation None() { return {}; }
  static Activation Relu() { return {true, 0.0f, std::numeric_limits<float>::infinity()}; }
  static Activation Clip(float lo, float hi) { return {true, lo, hi}; }
  // Any float-valued unary op of ops::Unary as the epilogue (nn.gelu, nn.gelu_tanh, nn.silu,
  // sigmoid, tanh, nn.leakyrelu (p0 alpha), nn.softplus (p0 beta, p1 threshold), ...), with
  // ops::Unary's float32 semantics (shaders/common/unary_ops.glsl UnaryF). Throws msc_vk::Error
  // for an optype that is no unary op or not float-valued (predicates, logical / bitwise not);
  // the op using it throws msc_vk::Error naming its output when the "+act" variant it needs is
  // not embedded.
  static Activation Unary(const std::string& optype, float p0 = 0.0f, float p1 = 0.0f);
  // The kernels' ACT specialization constant: 0 none, 1 clamp(v, min, max), 16 + code: the
  // unary op `code` with parameters (min, max).
  uint32_t Spec() const {
    return !enabled ? 0u : unary < 0 ? 1u : 16u + static_cast<uint32_t>(unary);
  }
};

// ---- convolution / GEMM ------------------------------------------------------------------
//
// Fused residual (issue 9: resnet's skip connection, a transformer's linear + residual add): with
// `residual` non-null, y = act(op(...) + *residual) in the same dispatch, the residual added
// after the bias and before the activation (the unfused graph's add + relu/clip, same float32
// operations). The residual is float32 or float16 with y's shape exactly (no broadcasting) and must
// not share bytes with y (the kernel reads it while writing y); else Error. It only has to stay
// valid during the call (the kernel binds it).

struct Conv2dAttrs {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  Activation act{};
  const Tensor* residual = nullptr;  // y = act(conv + bias + *residual); nullptr: none
};
// nn.conv2d: x [N, C, H, W], w [O, C/groups, KH, KW] -> y [N, O, OH, OW].
void Conv2d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a);
// msc.conv2d_bias: the same plus bias [O].
void Conv2dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv2dAttrs& a);

// Fused layer_norm (backend.yaml fuse_epilogues.norms: a transformer's linear + residual +
// layer_norm): with a NormEpilogue whose `out` is set, the GEMM ops below also compute
//   *out = layer_norm(y) over `axes` (gamma / beta: nullptr for none; epsilon)
// with ops::LayerNorm's semantics and checks, from the y they computed (after bias, residual and
// activation). keep_y = false: nothing else reads y, so it need not be stored. When the register
// kernel holds whole rows (no tiled kernels, axes the last one only, N <= 2048, *out of y's shape
// and dtype) it is the same dispatch: y's rows are normalized in registers, summed through shared
// memory (mean, then the population variance of the deviations, in float32 as nn/layer_norm);
// otherwise y is stored and ops::LayerNorm(y -> *out) is a second dispatch. *out must not share
// bytes with y or the residual.
struct NormEpilogue {
  const Tensor* out = nullptr;  // nullptr: no norm
  const Tensor* gamma = nullptr;
  const Tensor* beta = nullptr;
  std::vector<int64_t> axes = {-1};
  double epsilon = 1e-5;
  bool keep_y = true;
};

// msc.linear: x [..., K], w [N, K] -> y [..., N] = act(x @ w^T (+ *residual)).
void Linear(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act = {},
            const Tensor* residual = nullptr, const NormEpilogue& norm = {});
// msc.linear_bias: y = act(x @ w^T + bias[N] (+ *residual)).
void LinearBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                Activation act = {}, const Tensor* residual = nullptr,
                const NormEpilogue& norm = {});
// nn.dense: as msc.linear (w [N, K]).
void Dense(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act = {},
           const Tensor* residual = nullptr, const NormEpilogue& norm = {});
// matmul: a [..., M, K] @ b [..., K, N] (b [..., N, K] when transpose_b) with numpy batch
// broadcasting; a 1-D operand gets (and y loses) the M (for a) or N (for b) dimension.
// y = act(a @ b (+ *residual)).
void Matmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_b = false,
            Activation act = {}, const Tensor* residual = nullptr, const NormEpilogue& norm = {});
// nn.batch_matmul: a [B, M, K] @ b [B, K, N] (b [B, N, K] when transpose_b).
void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y,
                 bool transpose_b = false);
// nn.batch_matmul with both flags: a [B, M, K] (transpose_a: [B, K, M]) @ b [B, K, N]
// (transpose_b: [B, N, K]) -> y [B, M, N]. One GEMM dispatch.
void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_a,
                 bool transpose_b);
// msc.matmul: as ops::Matmul (numpy matmul semantics), shader msc/matmul. One dispatch.
void MscMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, Activation act = {});

// ---- 1-D and transposed convolution (no fused residual) ----------------------------------

struct Conv1dAttrs {
  int64_t stride = 1;
  std::array<int64_t, 2> padding{0, 0};  // left, right
  int64_t dilation = 1;
  int64_t groups = 1;
  Activation act{};
};
// nn.conv1d: x [N, C, W], w [O, C/groups, KW] -> y [N, O, OW]. One dispatch.
void Conv1d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv1dAttrs& a);
// msc.conv1d_bias: the same plus bias [O]. One dispatch.
void Conv1dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv1dAttrs& a);

struct ConvTranspose2dAttrs {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int64_t, 2> output_padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};
// nn.conv2d_transpose: x [N, C, H, W], w IOHW [C, O/groups, KH, KW] -> y [N, O, OH, OW],
// OH = (H - 1) * sh - pt - pb + dh * (KH - 1) + output_padding_h + 1 (same for W):
//   y[n, o, oh, ow] = sum_{c in group(o), kh, kw} x[n, c, ih, iw] * w[c, o % (O/groups), kh, kw]
//   where oh + pt - kh*dh = ih*sh (exactly) and iw likewise. One dispatch (gather, one output
//   element per invocation).
void Conv2dTranspose(Program& p, const Tensor& x, const Tensor& w, const Tensor& y,
                     const ConvTranspose2dAttrs& a);
struct ConvTranspose1dAttrs {
  int64_t stride = 1;
  std::array<int64_t, 2> padding{0, 0};  // left, right
  int64_t output_padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
};
// nn.conv1d_transpose: x [N, C, W], w IOW [C, O/groups, KW] -> y [N, O, OW]. One dispatch.
void Conv1dTranspose(Program& p, const Tensor& x, const Tensor& w, const Tensor& y,
                     const ConvTranspose1dAttrs& a);

// ---- normalization / pooling / reductions -------------------------------------------------

// nn.batch_norm (inference): y = (x - mean) / sqrt(var + epsilon) * gamma + beta along `axis`.
void BatchNorm(Program& p, const Tensor& x, const Tensor& gamma, const Tensor& beta,
               const Tensor& mean, const Tensor& var, const Tensor& y, int64_t axis = 1,
               double epsilon = 1e-5);

struct Pool2dAttrs {
  std::array<int64_t, 2> pool_size{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};       // max and avg pooling (TOPI)
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg pooling only (torch default)
};
// nn.max_pool2d / nn.avg_pool2d: x [N, C, H, W] -> y [N, C, OH, OW] (OH/OW checked, incl.
// ceil_mode).
void MaxPool2d(Program& p, const Tensor& x, const Tensor& y, const Pool2dAttrs& a);
void AvgPool2d(Program& p, const Tensor& x, const Tensor& y, const Pool2dAttrs& a);
// nn.adaptive_avg_pool2d: x [N, C, H, W] -> y [N, C, OH, OW] (output_size = y's last two dims).
void AdaptiveAvgPool2d(Program& p, const Tensor& x, const Tensor& y);

struct Pool1dAttrs {
  int64_t pool_size = 1;
  int64_t stride = 1;
  std::array<int64_t, 2> padding{0, 0};  // left, right
  int64_t dilation = 1;                  // max and avg pooling (TOPI)
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg pooling only
};
// nn.max_pool1d / nn.avg_pool1d: x [N, C, W] -> y [N, C, OW] (torch output size rule, ceil_mode).
// One dispatch.
void MaxPool1d(Program& p, const Tensor& x, const Tensor& y, const Pool1dAttrs& a);
void AvgPool1d(Program& p, const Tensor& x, const Tensor& y, const Pool1dAttrs& a);
// nn.adaptive_avg_pool1d: x [N, C, W] -> y [N, C, OW] (output_size = y's last dim). One dispatch.
void AdaptiveAvgPool1d(Program& p, const Tensor& x, const Tensor& y);

// nn.softmax along `axis` (negative counts from the end).
void Softmax(Program& p, const Tensor& x, const Tensor& y, int64_t axis = -1);
// nn.layer_norm: y = (x - mean) / sqrt(var + epsilon) * gamma + beta, mean and population
// variance over `axes`; gamma / beta (null: not applied) have the shape of the normalized dims
// in `axes` order. One dispatch (one workgroup, or invocation, per normalized group).
void LayerNorm(Program& p, const Tensor& x, const Tensor* gamma, const Tensor* beta,
               const Tensor& y, const std::vector<int64_t>& axes, double epsilon);
// nn.group_norm (TOPI include/tvm/topi/nn/group_norm.h): channel_axis split into num_groups
// groups; each (group, other kept coords) normalized over its channels and `axes`; gamma / beta
// [C] (null: not applied). One dispatch.
void GroupNorm(Program& p, const Tensor& x, const Tensor* gamma, const Tensor* beta,
               const Tensor& y, int64_t num_groups, int64_t channel_axis,
               const std::vector<int64_t>& axes, double epsilon);
// nn.rms_norm (Zhang & Sennrich 2019; TOPI rms_norm): y = x / sqrt(mean(x^2 over axes) +
// epsilon) * weight; weight (null: not applied) has the shape of the normalized dims. One
// dispatch.
void RmsNorm(Program& p, const Tensor& x, const Tensor* weight, const Tensor& y,
             const std::vector<int64_t>& axes, double epsilon);
// nn.log_softmax along `axis`: y = x - max - log(sum(exp(x - max))). One dispatch.
void LogSoftmax(Program& p, const Tensor& x, const Tensor& y, int64_t axis = -1);

// mean over `axes` (empty: all; negative allowed); y's shape must match keepdims. float32 or
// float16 (computed in float32); y's dtype must be x's.
void Mean(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
          bool keepdims);
// sum / prod / max / min / std / variance over `axes` (empty: all; negative allowed), y's
// shape must match keepdims. std and variance are population statistics (divide by N, relax /
// TOPI; torch unbiased=False), computed in two passes (mean, then squared deviations). Any
// rank whose reduced/kept pattern collapses to <= 4 kept and <= 4 reduced runs (every rank <= 8).
// One dispatch (one invocation per output, or one workgroup per output for long contiguous rows).
// dtypes: y's dtype must be x's (relax). sum / prod / max / min: float32, float16 (computed in
// float32), int32, int64 (exact; sum / prod wrap as two's complement, as numpy / TVM) and bool
// (sum = any, prod = all, max = any, min = all); std / variance: float32 and float16.
void Sum(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims);
void Prod(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
          bool keepdims);
void Max(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims);
void Min(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims);
void Std(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims);
void Variance(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
              bool keepdims);

// ---- attention and einsum ----------------------------------------------------------------

// A strided view of a tensor's elements, read in place by the ops that take one (Attention's
// q, k and v): element (i_0, ..., i_{r-1}) of the view is element
// offset + sum_d i_d * strides[d] of `base` (its row-major elements). The generator passes a
// qkv split's pieces this way (backend.yaml fuse_views), so the split is never computed. A
// Tensor converts to the view of all of it (contiguous strides, offset 0). The op checks that
// the view stays inside `base` (strides >= 0) and throws msc_vk::Error naming the node if not.
struct StridedView {
  StridedView(const Tensor& whole);  // NOLINT(google-explicit-constructor): any Tensor is one
  StridedView(const Tensor& base, Shape shape, std::vector<int64_t> strides, int64_t offset);
  Tensor base;
  Shape shape;
  std::vector<int64_t> strides;  // elements
  int64_t offset = 0;            // elements
  // "'matmul' float32 [1, 16, 192] viewed as [1, 16, 4, 16] strides [3072, 192, 16, 1] from
  // element 64"; base.Describe() for a whole tensor.
  std::string Describe() const;
};

struct AttentionAttrs {
  // relax.permute_dims axes taking q / k / v to relax's [B, S, N, H] (axes, axes_1, axes_2) and
  // the attention result [B, Sq, N, Hv] to the output (axes_3). MSC's default: torch's
  // [B, N, S, H] <-> [B, S, N, H].
  std::array<int64_t, 4> q_axes{0, 2, 1, 3};
  std::array<int64_t, 4> k_axes{0, 2, 1, 3};
  std::array<int64_t, 4> v_axes{0, 2, 1, 3};
  std::array<int64_t, 4> out_axes{0, 2, 1, 3};
  bool has_scale = false;  // false: scale = 1 / sqrt(H)
  float scale = 1.0f;
  std::string causal_mask;  // "", "TopLeft" or "BottomRight"
};
// msc.attention (relax.nn.attention / attention_bias, legalized as TOPI does in
// python/tvm/relax/transform/legalize_ops/nn.py _te_attention):
//   S[b, n, i, j] = scale * sum_h q[b, i, n, h] * k[b, j, n, h] + mask[b, n, i, j]
//   causal_mask: keys j > i + offset are dropped (offset 0 for TopLeft, |Sq - Skv| for
//   BottomRight), i.e. np.tril(S, offset)
//   out[b, i, n, :] = softmax_j(S[b, n, i, :]) @ v[b, :, n, :]
// q [B, Sq, N, H], k [B, Skv, N, H], v [B, Skv, N, Hv] after their permutations (each a
// tensor or a StridedView of one); `mask` (null: none) is additive and numpy-broadcastable to
// [B, N, Sq, Skv]. One fused dispatch with an online softmax: on GPUs
// (Context::use_tiled_kernels()) one workgroup per query row, on CPU devices one invocation per
// (query row, 64 output dims).
void Attention(Program& p, const StridedView& q, const StridedView& k, const StridedView& v,
               const Tensor* mask, const Tensor& y, const AttentionAttrs& a = {});

// einsum (numpy.einsum / relax.op.einsum): 1-3 operands, explicit ("ij,jk->ik") or implicit
// output (labels that occur once, sorted, "..." first), repeated labels within an operand
// (diagonals / traces), "..." broadcast dims, size-1 label extents broadcast. At most 8 distinct
// labels (ellipsis dims included). One dispatch: one output element per invocation.
void Einsum(Program& p, const std::string& subscripts, const std::vector<Tensor>& operands,
            const Tensor& y);

// ---- resize and padding ------------------------------------------------------------------

struct Resize2dAttrs {
  std::string method = "linear";  // nearest_neighbor, linear, cubic
  // half_pixel, align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn
  std::string coordinate_transformation_mode = "half_pixel";
  // nearest_neighbor: round, floor, ceil, round_prefer_floor, round_prefer_ceil, "" (TOPI's
  // default: round for align_corners, else floor)
  std::string rounding_method = "round";
  float cubic_alpha = -0.5f;
  bool cubic_exclude = false;
};
// image.resize2d on NCHW: x [N, C, H, W] -> y [N, C, OH, OW] (size = y's H, W), exactly TOPI's
// formulas (python/tvm/topi/image/resize.py _resize_2d: coordinate transform in float32, pixels
// clamped to the image, round = half away from zero, the integer path of nearest + asymmetric for
// integer upscales). One dispatch.
void Resize2d(Program& p, const Tensor& x, const Tensor& y, const Resize2dAttrs& a);

// nn.pad: pad_width = {before_0, after_0, before_1, after_1, ...} (one pair per dim of x);
// pad_mode "constant" (pad_value), "edge" (replicate) or "reflect" (mirror without repeating the
// edge, like torch/numpy; each pad < that dim's size). At most 8 dims after merging unpadded
// ones. One dispatch.
void Pad(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& pad_width,
         const std::string& pad_mode = "constant", float pad_value = 0.0f);

// ---- elementwise ---------------------------------------------------------------------------

// Binary ops with numpy broadcasting: y.shape == broadcast(a, b). Mixed dtypes compute as torch
// promotes: arithmetic/bitwise in y's dtype (inputs converted), comparisons in float32 when a or
// b is a float (else integers), logical ops on `!= 0`.
// `optype`: an op of the binary table, shaders/common/binary_ops.glsl (`msc_vk:binary` lines:
// the arithmetic ops, y of the promoted dtype; comparisons, y bool; logical ops, bool; bitwise
// ops, integers and bool); semantics (NaN, integer rounding) there and in common/binary.glsl.
// One dispatch of shaders/binary.comp.
void Binary(Program& p, const std::string& optype, const Tensor& a, const Tensor& b,
            const Tensor& y);
void Add(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
void Subtract(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
void Multiply(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
void Divide(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
// nn.bias_add: y = x + bias broadcast along `axis` (bias [x.shape[axis]]).
void BiasAdd(Program& p, const Tensor& x, const Tensor& bias, const Tensor& y, int64_t axis = 1);

// Unary ops: x and y have the same number of elements. `optype`: an op of the unary table,
// shaders/common/unary_ops.glsl (`msc_vk:unary` lines, with each op's domain); float params:
// nn.leakyrelu p0 = alpha, nn.softplus p0 = beta / p1 = threshold, clip p0 = min / p1 = max.
// y's dtype is x's (bool for the predicates); a different y dtype converts as astype. Integer
// x: the `int`-domain ops compute exactly, the `float` ones on float32. One dispatch of
// shaders/unary.comp.
void Unary(Program& p, const std::string& optype, const Tensor& x, const Tensor& y, float p0 = 0,
           float p1 = 0);
void Relu(Program& p, const Tensor& x, const Tensor& y);
void Sigmoid(Program& p, const Tensor& x, const Tensor& y);
void Tanh(Program& p, const Tensor& x, const Tensor& y);
void Gelu(Program& p, const Tensor& x, const Tensor& y);
// clip: y = min(max(x, a_min), a_max); use +-infinity for a missing bound (integer x: bounds
// rounded inward, infinite ones = the dtype's range).
void Clip(Program& p, const Tensor& x, const Tensor& y, float a_min, float a_max);
// astype / cast: y = x converted to y's dtype (float -> int truncates toward zero, nonzero and
// NaN -> true, bool -> 0/1, float32 -> float16 rounds to nearest even).
void Astype(Program& p, const Tensor& x, const Tensor& y);
void Cast(Program& p, const Tensor& x, const Tensor& y);

// where: y = cond ? x1 : x2, the three broadcast together (numpy); x1, x2, y the same dtype;
// cond bool (any dtype: nonzero is true).
void Where(Program& p, const Tensor& cond, const Tensor& x1, const Tensor& x2, const Tensor& y);
// masked_fill: y = mask ? value : x, mask broadcast to x, value a one-element tensor of x's
// dtype.
void MaskedFill(Program& p, const Tensor& x, const Tensor& mask, const Tensor& value,
                const Tensor& y);

// ---- fused elementwise chains (issue 9) ----------------------------------------------------
//
// A chain of float32 elementwise ops run as ONE dispatch (shaders/ew_chain.comp), the
// intermediates never stored: the generator fuses a graph's elementwise chains/trees into it
// (templates/vulkan/backend.yaml fuse_elementwise). Each step is an op of Unary / Binary /
// Where above, with the same float32 semantics (shaders/common/unary_ops.glsl, binary_ops.glsl)
// and numpy broadcasting, so the chain computes what the unfused ops compute; the last step's
// value is y.
//
//   ops::ElementwiseChain(prog, {x, bias, scale},
//                         {ops::ChainUnary("nn.gelu", ops::ChainInput(0)),
//                          ops::ChainBinary("add", ops::ChainResult(0), ops::ChainInput(1)),
//                          ops::ChainBinary("multiply", ops::ChainResult(1), ops::ChainInput(2))},
//                         y);   // y = (gelu(x) + bias) * scale
//
// Operands: ChainInput(k) = inputs[k] (k < kChainMaxInputs), ChainResult(j) = the value of
// step j < the current step. Steps (<= kChainMaxSteps): ChainUnary with a float-valued op of
// Unary (domain float or int: nn.leakyrelu p0 alpha, nn.softplus p0 beta / p1 threshold, clip
// p0 min / p1 max); ChainBinary with an arithmetic op of Binary (kind arith: add subtract ...
// minimum floor_divide floor_mod); ChainWhere(cond, a, b) = cond != 0 ? a : b (NaN is true).
// Shapes: each step's shape is the numpy broadcast of its operands' (as the unfused op's output);
// the last step's must be y's. dtypes: y and every input float32 or float16 (computed in
// float32; a float16 y from the "+f16" variant), except inputs used only as a where condition
// (any dtype: int32, int64, bool too). y must not share bytes with an input. Errors
// (msc_vk::Error "elementwise chain '<y.name>': ...") name the step.
// One dispatch, except for 4 broadcast inputs (neither y's size nor one element: the kernel has
// stride slots for 3) or more than 6 dims left after merging: then one dispatch per step through
// program-owned temporaries (Program::AddBuffer), the same values.
constexpr size_t kChainMaxInputs = 4;
constexpr size_t kChainMaxSteps = 8;
struct ChainRef {
  bool step = false;  // false: inputs[index]; true: the result of step `index`
  uint32_t index = 0;
};
inline ChainRef ChainInput(uint32_t k) { return {false, k}; }
inline ChainRef ChainResult(uint32_t j) { return {true, j}; }
struct ChainStep {
  std::string optype;              // Unary / Binary optype, or "where"
  std::vector<ChainRef> operands;  // 1 (unary), 2 (binary), 3 (where: cond, a, b)
  float p0 = 0, p1 = 0;            // the unary op's parameters (as Unary)
};
inline ChainStep ChainUnary(std::string optype, ChainRef x, float p0 = 0, float p1 = 0) {
  return {std::move(optype), {x}, p0, p1};
}
inline ChainStep ChainBinary(std::string optype, ChainRef a, ChainRef b) {
  return {std::move(optype), {a, b}};
}
inline ChainStep ChainWhere(ChainRef cond, ChainRef a, ChainRef b) {
  return {"where", {cond, a, b}};
}
void ElementwiseChain(Program& p, const std::vector<Tensor>& inputs,
                      const std::vector<ChainStep>& steps, const Tensor& y);

// ---- creation ------------------------------------------------------------------------------

// full: y filled with the one element of fill_value, converted to y's dtype.
void Full(Program& p, const Tensor& fill_value, const Tensor& y);
// ones / zeros / ones_like / zeros_like (`optype`, also the stem): y filled with `value`.
void Fill(Program& p, const std::string& optype, const Tensor& y, double value);
// arange: y[i] = start + i * step (y 1-D with ceil((end - start) / step) elements); float y
// computes in float32, integer y from start and step truncated to integers.
void Arange(Program& p, const Tensor& y, double start, double end, double step);
// one_hot: indices (int32/int64, any shape) -> y with a new dim of `depth` at `axis`:
// on_value where the index equals the position, else off_value (y's dtype).
void OneHot(Program& p, const Tensor& indices, const Tensor& y, int64_t depth, int64_t axis,
            double on_value, double off_value);
// shape (MSC ShapeExpr): y [n] (int64 or int32) = `values` (n <= 12).
void ShapeOf(Program& p, const Tensor& y, const std::vector<int64_t>& values);

// ---- data movement (any dtype; x and y the same dtype) --------------------------------------

// reshape / squeeze / expand_dims: same element count; no kernel at all when x and y are the
// same bytes (the generator may alias them), else a contiguous copy.
void Reshape(Program& p, const Tensor& x, const Tensor& y);
void Squeeze(Program& p, const Tensor& x, const Tensor& y);
void ExpandDims(Program& p, const Tensor& x, const Tensor& y);
// permute_dims / transpose: y.shape[i] == x.shape[axes[i]]; empty axes reverse the dims.
void PermuteDims(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes);
void Transpose(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes);
// concat / concatenate along `axis`: one copy dispatch per (non-empty) input.
void Concat(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis);
void Concatenate(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis);
// stack: inputs of one shape stacked along a new dim `axis` of y (negative: counts from the end
// of y's dims). One copy dispatch per input.
void Stack(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis);
// split x along `axis` into `outputs`: sections > 0 = that many equal pieces (numpy
// array_split rule as relax: ceil-sized pieces, the last smaller); else split before each of
// `indices` (clamped). One copy dispatch per non-empty piece; one in all when the pieces are
// equal and their outputs evenly spaced in one buffer (an arena's side-by-side qkv split).
void Split(Program& p, const Tensor& x, const std::vector<Tensor>& outputs, int64_t sections,
           const std::vector<int64_t>& indices, int64_t axis);
// strided_slice (numpy/relax semantics): for each axes[i]: begin[i], end[i], strides[i] (empty
// strides: 1). Negative indices count from the end; out-of-range ones are clamped.
void StridedSlice(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& begin,
                  const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& axes);
// broadcast_to: y.shape is a numpy broadcast of x.shape.
void BroadcastTo(Program& p, const Tensor& x, const Tensor& y);
// tile (numpy.tile): y.shape[i] = x.shape[i] * repeats[i], shorter repeats / rank left-padded
// with 1s.
void Tile(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& repeats);
// repeat (numpy.repeat): every element repeated `repeats` times along `axis` (nullopt: of the
// flattened x, y 1-D).
void Repeat(Program& p, const Tensor& x, const Tensor& y, int64_t repeats,
            std::optional<int64_t> axis);
// flip: y = x reversed along `axis`.
void Flip(Program& p, const Tensor& x, const Tensor& y, int64_t axis);
// tril / triu / trilu: x with the elements above (tril) / below (triu) the k-th diagonal of
// the last two dims zeroed; `optype` names the node's op for errors and the shader stem.
void Trilu(Program& p, const std::string& optype, const Tensor& x, const Tensor& y, int64_t k,
           bool upper);

// ---- indexing ------------------------------------------------------------------------------

enum class TakeMode { kFast, kClip, kWrap };
// take: y = x indexed by `indices` (int32/int64, any shape) along `axis` (nullopt: of the
// flattened x); y.shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]. kFast: negative
// indices count from the end (torch); kClip: clamped (TVM); kWrap: python modulo. Indices still
// out of range are clamped (never read outside x).
void Take(Program& p, const Tensor& x, const Tensor& indices, const Tensor& y,
          std::optional<int64_t> axis, TakeMode mode = TakeMode::kFast);
// msc.embedding: y = weight[ids] (weight [num, dim], ids of any shape: int32/int64, or float
// truncated toward zero as the MSC pattern's astype(int32)) -> ids.shape + [dim] (y may have
// another shape of as many elements ending in dim: the pattern's trailing reshape); as
// Take(weight, ids, axis 0).
void Embedding(Program& p, const Tensor& ids, const Tensor& weight, const Tensor& y);
// gather_elements (torch.gather): y[c] = x[c with c[axis] = indices[c]]; y.shape ==
// indices.shape, indices.shape[d] <= x.shape[d] off the axis. Negative indices count from the
// end.
void GatherElements(Program& p, const Tensor& x, const Tensor& indices, const Tensor& y,
                    int64_t axis);
// gather_nd (ONNX GatherND / relax): indices [..., M]; y = x at the index tuples, after
// `batch_dims` leading batch dims: y.shape = indices.shape[:-1] + x.shape[batch_dims + M:].
void GatherND(Program& p, const Tensor& x, const Tensor& indices, const Tensor& y,
              int64_t batch_dims);
// scatter_elements: y = x with, for each index position c of `indices` (and `updates`, the
// same shape), y[c with c[axis] = indices[c]] = (or combined by `reduction`: update, add, mul,
// mean, max, min) updates[c], applied in index order (TVM). Two dispatches (copy, scatter).
void ScatterElements(Program& p, const Tensor& x, const Tensor& indices, const Tensor& updates,
                     const Tensor& y, int64_t axis, const std::string& reduction = "update");
// scatter_nd (ONNX ScatterND / relax): indices [..., M], updates indices.shape[:-1] +
// x.shape[M:]; reduction update, add, mul, max, min. Two dispatches.
void ScatterND(Program& p, const Tensor& x, const Tensor& indices, const Tensor& updates,
               const Tensor& y, const std::string& reduction = "update");
// argmax / argmin along `axis` (nullopt: of the flattened x) -> y int64 (or int32), first
// occurrence of the extreme; NaN counts as the extreme (torch). keepdims selects y's rank.
void ArgMax(Program& p, const Tensor& x, const Tensor& y, std::optional<int64_t> axis,
            bool keepdims);
void ArgMin(Program& p, const Tensor& x, const Tensor& y, std::optional<int64_t> axis,
            bool keepdims);
// cumsum along `axis` (nullopt: of the flattened x, y 1-D); exclusive: the sum of the elements
// before. y's dtype may differ from x's (the sum is computed in y's dtype).
void Cumsum(Program& p, const Tensor& x, const Tensor& y, std::optional<int64_t> axis,
            bool exclusive = false);
// topk: the k largest (smallest) elements along `axis`, sorted (ties: lower index first);
// values (x's dtype) and/or indices (int32/int64; null: not produced), both x.shape with the
// axis dim = k. One dispatch, O(L) work per element (L = x.shape[axis]).
void TopK(Program& p, const Tensor& x, const Tensor* values, const Tensor* indices, int64_t k,
          int64_t axis, bool largest = true);

// ---- helpers shared by the implementation (exposed for tests and custom ops) ---------------

// Workgroup counts covering `invocations` 1-D invocations of `local_size` lanes with a 2-D grid
// folded as in shaders/common/util.glsl LinearId(); x <= min(65535, device limit).
std::array<uint32_t, 3> Grid1D(const Context& ctx, uint64_t invocations, uint32_t local_size);

}  // namespace ops
}  // namespace msc_vk
