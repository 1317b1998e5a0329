// msc_vk::ops: one function per optype; each checks shapes, picks the shader variant
// (specialization constants, texel views), fills the push constants, adds one kernel to the
// Program and dispatches it on a grid within the device limits. Generated model.cc calls these.
//
// Tensors are float32, row-major; conv/pool layouts are NCHW (X, Y) and OIHW (W). Attributes use
// MSC's meaning and order: padding = {top, left, bottom, right}; strides/dilation = {h, w}.
// Every shape mismatch throws msc_vk::Error("<optype> '<output name>': ...").
//
// Kernel names (for errors) are the output tensor's name.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "program.h"

namespace msc_vk {
namespace ops {

// Fused epilogue: y = clamp(y, min, max) when enabled (relu = clamp(y, 0, +inf)).
struct Activation {
  bool enabled = false;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  static Activation None() { return {}; }
  static Activation Relu() { return {true, 0.0f, std::numeric_limits<float>::infinity()}; }
  static Activation Clip(float lo, float hi) { return {true, lo, hi}; }
};

// ---- convolution / GEMM ------------------------------------------------------------------

struct Conv2dAttrs {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  Activation act{};
};
// nn.conv2d: x [N, C, H, W], w [O, C/groups, KH, KW] -> y [N, O, OH, OW].
void Conv2d(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dAttrs& a);
// msc.conv2d_bias: the same plus bias [O].
void Conv2dBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                const Conv2dAttrs& a);

// msc.linear: x [..., K], w [N, K] -> y [..., N] = x @ w^T.
void Linear(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act = {});
// msc.linear_bias: y = x @ w^T + bias[N].
void LinearBias(Program& p, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                Activation act = {});
// nn.dense: as msc.linear (w [N, K]).
void Dense(Program& p, const Tensor& x, const Tensor& w, const Tensor& y, Activation act = {});
// matmul: a [..., M, K] @ b [..., K, N] (b [..., N, K] when transpose_b) with numpy batch
// broadcasting; a 1-D operand gets (and y loses) the M (for a) or N (for b) dimension.
void Matmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y, bool transpose_b = false,
            Activation act = {});
// nn.batch_matmul: a [B, M, K] @ b [B, K, N] (b [B, N, K] when transpose_b).
void BatchMatmul(Program& p, const Tensor& a, const Tensor& b, const Tensor& y,
                 bool transpose_b = false);

// ---- normalization / pooling / reductions -------------------------------------------------

// nn.batch_norm (inference): y = (x - mean) / sqrt(var + epsilon) * gamma + beta along `axis`.
void BatchNorm(Program& p, const Tensor& x, const Tensor& gamma, const Tensor& beta,
               const Tensor& mean, const Tensor& var, const Tensor& y, int64_t axis = 1,
               double epsilon = 1e-5);

struct Pool2dAttrs {
  std::array<int64_t, 2> pool_size{1, 1};
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};       // max pooling only
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg pooling only (torch default)
};
// nn.max_pool2d / nn.avg_pool2d: x [N, C, H, W] -> y [N, C, OH, OW] (OH/OW checked, incl.
// ceil_mode).
void MaxPool2d(Program& p, const Tensor& x, const Tensor& y, const Pool2dAttrs& a);
void AvgPool2d(Program& p, const Tensor& x, const Tensor& y, const Pool2dAttrs& a);
// nn.adaptive_avg_pool2d: x [N, C, H, W] -> y [N, C, OH, OW] (output_size = y's last two dims).
void AdaptiveAvgPool2d(Program& p, const Tensor& x, const Tensor& y);

// nn.softmax along `axis` (negative counts from the end).
void Softmax(Program& p, const Tensor& x, const Tensor& y, int64_t axis = -1);
// mean over `axes` (empty: all; negative allowed); y's shape must match keepdims.
void Mean(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
          bool keepdims);

// ---- elementwise ---------------------------------------------------------------------------

// add / subtract / multiply / divide with numpy broadcasting: y.shape == broadcast(a, b).
void Add(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
void Subtract(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
void Multiply(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);
void Divide(Program& p, const Tensor& a, const Tensor& b, const Tensor& y);

// Unary ops: x and y have the same number of elements.
void Relu(Program& p, const Tensor& x, const Tensor& y);
void Sigmoid(Program& p, const Tensor& x, const Tensor& y);
void Tanh(Program& p, const Tensor& x, const Tensor& y);
void Gelu(Program& p, const Tensor& x, const Tensor& y);
// clip: y = min(max(x, a_min), a_max); use +-infinity for a missing bound.
void Clip(Program& p, const Tensor& x, const Tensor& y, float a_min, float a_max);

// ---- data movement -------------------------------------------------------------------------

// reshape / squeeze / expand_dims: same element count; no kernel at all when x and y are the
// same bytes (the generator may alias them), else a contiguous copy.
void Reshape(Program& p, const Tensor& x, const Tensor& y);
void Squeeze(Program& p, const Tensor& x, const Tensor& y);
void ExpandDims(Program& p, const Tensor& x, const Tensor& y);
// permute_dims / transpose: y.shape[i] == x.shape[axes[i]]; empty axes reverse the dims.
void PermuteDims(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes);
void Transpose(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes);
// concat along `axis`: one copy dispatch per (non-empty) input.
void Concat(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis);
// strided_slice (numpy/relax semantics): for each axes[i]: begin[i], end[i], strides[i] (empty
// strides: 1). Negative indices count from the end; out-of-range ones are clamped.
void StridedSlice(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& begin,
                  const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& axes);

// ---- helpers shared by the implementation (exposed for tests and custom ops) ---------------

// Workgroup counts covering `invocations` 1-D invocations of `local_size` lanes with a 2-D grid
// folded as in shaders/common/util.glsl LinearId(); x <= min(65535, device limit).
std::array<uint32_t, 3> Grid1D(const Context& ctx, uint64_t invocations, uint32_t local_size);

}  // namespace ops
}  // namespace msc_vk
