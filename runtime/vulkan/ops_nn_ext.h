// msc_vk::ops, part 2: transformer, normalization, reduction, 1-D conv/pool, transposed conv,
// resize and pad ops. Same conventions as ops.h: row-major tensors (float32, or float16 where
// ops.h's float kernels take it: attention, norms, 1-D conv / pool), MSC/relax attribute
// meaning and order, one function per optype that checks shapes, records its kernel(s) and throws
// msc_vk::Error("<optype> '<output name>': ...") on any mismatch. Outputs must not share bytes
// with inputs. Dispatches recorded per call are given in each comment.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ops.h"

namespace msc_vk {
namespace ops {

// ---- transformer ---------------------------------------------------------------------------

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
// q [B, Sq, N, H], k [B, Skv, N, H], v [B, Skv, N, Hv] after their permutations; `mask` (null:
// none) is additive and numpy-broadcastable to [B, N, Sq, Skv]. One fused dispatch with an
// online softmax: on GPUs (Context::use_tiled_kernels()) one workgroup per query row, on CPU
// devices one invocation per (query row, 64 output dims).
void Attention(Program& p, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
               const Tensor& y, const AttentionAttrs& a = {});

// einsum (numpy.einsum / relax.op.einsum): 1-3 operands, explicit ("ij,jk->ik") or implicit
// output (labels that occur once, sorted, "..." first), repeated labels within an operand
// (diagonals / traces), "..." broadcast dims, size-1 label extents broadcast. At most 8 distinct
// labels (ellipsis dims included). One dispatch: one output element per invocation.
void Einsum(Program& p, const std::string& subscripts, const std::vector<Tensor>& operands,
            const Tensor& y);

// nn.batch_matmul with both flags: a [B, M, K] (transpose_a: [B, K, M]) @ b [B, K, N]
// (transpose_b: [B, N, K]) -> y [B, M, N]. One GEMM dispatch.
void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_a,
                 bool transpose_b);
// msc.matmul: as ops::Matmul (numpy matmul semantics), shader msc/matmul. One dispatch.
void MscMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, Activation act = {});

// ---- normalization -------------------------------------------------------------------------

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

// ---- reductions ----------------------------------------------------------------------------

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

// ---- 1-D convolution and pooling (the 2-D kernels with H = 1) ------------------------------

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

// ---- transposed convolution ----------------------------------------------------------------

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

// ---- image / padding -----------------------------------------------------------------------

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

}  // namespace ops
}  // namespace msc_vk
