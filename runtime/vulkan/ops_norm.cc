// Normalization and softmax: batch_norm (shaders nn/batch_norm), layer_norm / group_norm /
// rms_norm (shaders/common/normalize.glsl), softmax / log_softmax (shaders/common/softmax.glsl).
#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::Fail;
using detail::U32;

// Innermost reduced run from which one workgroup (64 lanes) cooperates on each group.
constexpr int64_t kCoopMinInner = 64;
// CPU devices (lavapipe; Context::prefers_shared_memory() false) run a workgroup's barriers as
// coroutine switches, which made the cooperative kernel the slower one unless there are few
// groups or long ones. layer_norm on lavapipe, GPU time cooperative vs one group per
// invocation: 16 x 64 (text_transformer) 0.148 vs 0.083 ms, 16 x 768 0.143 vs 0.118, 196 x 768
// (ViT) 1.23 vs 0.60, but 4 x 4096 0.13 vs 0.21 and 1 x 65536 0.50 vs 0.68. There the
// cooperative kernel is used for at most kCpuCoopMaxGroups groups or groups of at least
// kCpuCoopMinCount elements.
constexpr int64_t kCpuCoopMaxGroups = 8;
constexpr int64_t kCpuCoopMinCount = 4096;

// One logical dim of the normalized tensor: size, X stride, gamma/beta stride, reduced or not.
struct NormDim {
  int64_t size, xstride, gstride;
  bool reduced;
};

struct NormPush {
  uint32_t kshape[4], kstride[4], kgstride[4];
  uint32_t rshape[4], rstride[4], rgstride[4];
  uint32_t total, count;
  float epsilon;
  uint32_t flags;
};

// Records the normalize kernel for `dims` (outermost first; X and Y contiguous with x's shape).
void Normalize(Program& p, const char* op, const char* stem, const Tensor& x, const Tensor* gamma,
               const Tensor* beta, const Tensor& y, const std::vector<NormDim>& dims,
               double epsilon) {
  struct Run {
    int64_t size, xstride, gstride;
  };
  std::vector<Run> kept, red;
  int prev = -1;
  int64_t groups = 1, count = 1;
  for (const NormDim& d : dims) {
    (d.reduced ? count : groups) *= d.size;
    if (d.size == 1) continue;
    std::vector<Run>& runs = d.reduced ? red : kept;
    const int status = d.reduced ? 1 : 0;
    if (prev == status && runs.back().xstride == d.xstride * d.size &&
        runs.back().gstride == d.gstride * d.size) {
      runs.back().size *= d.size;
      runs.back().xstride = d.xstride;
      runs.back().gstride = d.gstride;
    } else {
      runs.push_back({d.size, d.xstride, d.gstride});
    }
    prev = status;
  }
  if (kept.size() > 4 || red.size() > 4) {
    Fail(op, y,
         "the normalization pattern of " + x.Describe() + " has " + std::to_string(kept.size()) +
             " kept and " + std::to_string(red.size()) +
             " reduced runs of dims; the shader handles 4 of each");
  }
  while (kept.size() < 4) kept.insert(kept.begin(), Run{1, 0, 0});
  while (red.size() < 4) red.insert(red.begin(), Run{1, 0, 0});
  NormPush push{};
  for (int d = 0; d < 4; ++d) {
    push.kshape[d] = U32(kept[d].size, op, y, "dim");
    push.kstride[d] = U32(kept[d].xstride, op, y, "stride");
    push.kgstride[d] = U32(kept[d].gstride, op, y, "stride");
    push.rshape[d] = U32(red[d].size, op, y, "dim");
    push.rstride[d] = U32(red[d].xstride, op, y, "stride");
    push.rgstride[d] = U32(red[d].gstride, op, y, "stride");
  }
  push.total = U32(groups, op, y, "groups");
  push.count = U32(count, op, y, "elements per group");
  push.epsilon = static_cast<float>(epsilon);
  push.flags = (gamma ? 1u : 0u) | (beta ? 2u : 0u);
  if (x.numel() == 0) return;
  const bool coop =
      red[3].size >= kCoopMinInner && (p.context().prefers_shared_memory() ||
                                       groups <= kCpuCoopMaxGroups || count >= kCpuCoopMinCount);
  detail::LaunchFloat(
      p, stem, {InTexel(x), InTexel(gamma ? *gamma : x), InTexel(beta ? *beta : x), Out(y)}, push,
      {coop ? 1u : 0u}, coop ? Grid1D(p.context(), groups, 1) : Grid1D(p.context(), groups, 64), y);
}

// Shape without size-1 dims (for comparing affine parameter shapes).
Shape Squeezed(const Shape& s) {
  Shape r;
  for (int64_t d : s) {
    if (d != 1) r.push_back(d);
  }
  return r;
}

// Logical dims of layer_norm / rms_norm: `axes` reduced; the affine parameter (gamma / weight)
// has the shape [x.shape[axes[0]], x.shape[axes[1]], ...] (row-major, in `axes` order).
std::vector<NormDim> AxesDims(const char* op, const Tensor& x, const Tensor& y,
                              const std::vector<int64_t>& axes_in,
                              std::initializer_list<const Tensor*> params) {
  detail::CheckFloat(op, y, {&x, &y});
  for (const Tensor* t : params) {
    if (t) detail::CheckFloat(op, y, {t});
  }
  if (x.shape != y.shape) Fail(op, y, "input " + x.Describe() + " and output differ in shape");
  const size_t rank = x.shape.size();
  if (axes_in.empty()) Fail(op, y, "axes must not be empty");
  std::vector<int64_t> axes;
  for (int64_t a : axes_in) {
    const int64_t d = detail::NormAxis(a, rank, op, y);
    for (int64_t b : axes) {
      if (b == d) Fail(op, y, "axis " + std::to_string(a) + " is listed twice");
    }
    axes.push_back(d);
  }
  Shape pshape;
  for (int64_t a : axes) pshape.push_back(x.shape[a]);
  const std::vector<int64_t> pstride = detail::ContiguousStrides(pshape);
  for (const Tensor* t : params) {
    if (t && Squeezed(t->shape) != Squeezed(pshape)) {
      Fail(op, y,
           t->Describe() + " must have the shape of the normalized dims " + ShapeToString(pshape));
    }
  }
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  std::vector<NormDim> dims(rank);
  for (size_t d = 0; d < rank; ++d) dims[d] = {x.shape[d], xs[d], 0, false};
  for (size_t i = 0; i < axes.size(); ++i) {
    dims[axes[i]].reduced = true;
    dims[axes[i]].gstride = pstride[i];
  }
  return dims;
}

void SoftmaxImpl(Program& p, const char* op, const char* stem, const Tensor& x, const Tensor& y,
                 int64_t axis) {
  detail::CheckFloat(op, y, {&x, &y});
  if (x.shape != y.shape) Fail(op, y, "input " + x.Describe() + " and output differ in shape");
  if (x.shape.empty()) Fail(op, y, "input must have at least one dim");
  const int64_t ax = detail::NormAxis(axis, x.shape.size(), op, y);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < ax; ++d) outer *= x.shape[d];
  for (size_t d = ax + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  struct {
    uint32_t outer, L, inner;
  } push{U32(outer, op, y, "outer"), U32(x.shape[ax], op, y, "axis size"),
         U32(inner, op, y, "inner")};
  if (x.numel() == 0) return;
  detail::LaunchFloat(p, stem, {InTexel(x), Out(y)}, push, {},
                      Grid1D(p.context(), outer * inner, 64), y);
}

}  // namespace

void BatchNorm(Program& p, const Tensor& x, const Tensor& gamma, const Tensor& beta,
               const Tensor& mean, const Tensor& var, const Tensor& y, int64_t axis,
               double epsilon) {
  const char* op = "nn.batch_norm";
  detail::CheckFloat(op, y, {&x, &gamma, &beta, &mean, &var, &y});
  if (x.shape != y.shape) Fail(op, y, "input " + x.Describe() + " and output differ in shape");
  const int64_t ax = detail::NormAxis(axis, x.shape.size(), op, y);
  const int64_t C = x.dim(static_cast<int>(ax));
  for (const Tensor* t : {&gamma, &beta, &mean, &var}) {
    if (t->numel() != C)
      Fail(op, y, t->Describe() + " must have " + std::to_string(C) + " elements");
  }
  int64_t inner = 1;
  for (size_t d = ax + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const bool vec4 = inner % 4 == 0;
  struct {
    uint32_t total, C, inner;
    float epsilon;
  } push{U32(x.numel(), op, y, "elements"), U32(C, op, y, "C"), U32(inner, op, y, "inner"),
         static_cast<float>(epsilon)};
  detail::LaunchFloat(p, "nn/batch_norm",
                      {InTexel(x, vec4 ? View::kTexelVec4 : View::kTexelFloat), InTexel(gamma),
                       InTexel(beta), InTexel(mean), InTexel(var), Out(y)},
                      push, {vec4 ? 1u : 0u},
                      Grid1D(p.context(), vec4 ? x.numel() / 4 : x.numel(), 64), y);
}

void LayerNorm(Program& p, const Tensor& x, const Tensor* gamma, const Tensor* beta,
               const Tensor& y, const std::vector<int64_t>& axes, double epsilon) {
  const char* op = "nn.layer_norm";
  const std::vector<NormDim> dims = AxesDims(op, x, y, axes, {gamma, beta});
  Normalize(p, op, "nn/layer_norm", x, gamma, beta, y, dims, epsilon);
}

void RmsNorm(Program& p, const Tensor& x, const Tensor* weight, const Tensor& y,
             const std::vector<int64_t>& axes, double epsilon) {
  const char* op = "nn.rms_norm";
  const std::vector<NormDim> dims = AxesDims(op, x, y, axes, {weight});
  Normalize(p, op, "nn/rms_norm", x, weight, nullptr, y, dims, epsilon);
}

void GroupNorm(Program& p, const Tensor& x, const Tensor* gamma, const Tensor* beta,
               const Tensor& y, int64_t num_groups, int64_t channel_axis,
               const std::vector<int64_t>& axes, double epsilon) {
  const char* op = "nn.group_norm";
  detail::CheckFloat(op, y, {&x, &y});
  if (gamma) detail::CheckFloat(op, y, {gamma});
  if (beta) detail::CheckFloat(op, y, {beta});
  if (x.shape != y.shape) Fail(op, y, "input " + x.Describe() + " and output differ in shape");
  const size_t rank = x.shape.size();
  const int64_t ca = detail::NormAxis(channel_axis, rank, op, y);
  const int64_t C = x.shape[ca], G = num_groups;
  if (G < 1 || C % G != 0) {
    Fail(op, y,
         "num_groups = " + std::to_string(G) + " does not divide the " + std::to_string(C) +
             " channels of " + x.Describe());
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    const int64_t d = detail::NormAxis(a, rank, op, y);
    if (d == ca) Fail(op, y, "axes must not contain the channel axis");
    if (reduced[d]) Fail(op, y, "axis " + std::to_string(a) + " is listed twice");
    reduced[d] = true;
  }
  for (const Tensor* t : {gamma, beta}) {
    if (t && t->numel() != C)
      Fail(op, y, t->Describe() + " must have " + std::to_string(C) + " elements (channels)");
  }
  const int64_t Cg = C / G;
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  std::vector<NormDim> dims;
  for (size_t d = 0; d < rank; ++d) {
    if (static_cast<int64_t>(d) == ca) {
      dims.push_back({G, xs[d] * Cg, Cg, false});
      dims.push_back({Cg, xs[d], 1, true});
    } else {
      dims.push_back({x.shape[d], xs[d], 0, reduced[d]});
    }
  }
  Normalize(p, op, "nn/group_norm", x, gamma, beta, y, dims, epsilon);
}

void LogSoftmax(Program& p, const Tensor& x, const Tensor& y, int64_t axis) {
  SoftmaxImpl(p, "nn.log_softmax", "nn/log_softmax", x, y, axis);
}

void Softmax(Program& p, const Tensor& x, const Tensor& y, int64_t axis) {
  SoftmaxImpl(p, "nn.softmax", "nn/softmax", x, y, axis);
}

}  // namespace ops
}  // namespace msc_vk
