// Reductions: mean and sum / prod / max / min / std / variance (ops.h, "reductions"), all on
// shaders/common/reduce.glsl (one shader per optype, the op chosen at compile time). Output dtype
// = input dtype (relax's statistical struct-info inference); sum / prod / max / min take float32,
// float16, int32, int64 and bool (integers exact), mean / std / variance float32 and float16.
#include "context.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::Fail;
using detail::U32;

// Innermost reduced run from which one workgroup (64 lanes) cooperates on each output.
constexpr int64_t kCoopMinInner = 64;
// CPU devices (lavapipe; Context::prefers_shared_memory() false) run a workgroup's barriers as
// coroutine switches: there one output per invocation was faster except for a few long
// reductions. sum over the last axis on lavapipe, GPU time cooperative vs one output per
// invocation: 64 x 64 0.222 vs 0.036 ms, 16 x 768 0.105 vs 0.042, 196 x 768 0.406 vs 0.151,
// 4 x 4096 0.093 vs 0.067, but 2 x 16384 0.095 vs 0.204 and 1 x 65536 0.117 vs 0.687. There the
// cooperative kernel is used for at most kCpuCoopMaxOutputs outputs of at least
// kCpuCoopMinCount elements each.
constexpr int64_t kCpuCoopMaxOutputs = 8;
constexpr int64_t kCpuCoopMinCount = 8192;

struct ReducePush {
  uint32_t kshape[4], kstride[4];
  uint32_t rshape[4], rstride[4];
  uint32_t total, count;
};

// float_only: mean / std / variance (float32 or float16).
void Reduce(Program& p, const char* op, const char* stem, const Tensor& x, const Tensor& y,
            const std::vector<int64_t>& axes, bool keepdims, bool needs_elements,
            bool float_only = false) {
  detail::CheckSameDType(op, y, {&x});
  if (float_only && x.dtype != DType::kFloat32 && x.dtype != DType::kFloat16)
    Fail(op, y, "takes float32 or float16 tensors, got " + x.Describe());
  const size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    const int64_t d = detail::NormAxis(a, rank, op, y);
    if (reduced[d]) Fail(op, y, "axis " + std::to_string(a) + " is listed twice");
    reduced[d] = true;
  }
  Shape expect;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) count *= x.shape[d];
    if (!reduced[d])
      expect.push_back(x.shape[d]);
    else if (keepdims)
      expect.push_back(1);
  }
  if (y.shape != expect)
    Fail(op, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  if (count == 0 && needs_elements && y.numel() > 0)
    Fail(op, y, "reduction over zero elements of " + x.Describe());

  // Runs of kept / reduced dims (size-1 dims dropped), with row-major element strides.
  const std::vector<int64_t> strides = detail::ContiguousStrides(x.shape);
  std::vector<int64_t> kshape, kstride, rshape, rstride;
  int prev = -1;  // 0 kept, 1 reduced: status of the last dim appended
  for (size_t d = 0; d < rank; ++d) {
    if (x.shape[d] == 1) continue;
    const int status = reduced[d] ? 1 : 0;
    std::vector<int64_t>& shape = status ? rshape : kshape;
    std::vector<int64_t>& stride = status ? rstride : kstride;
    if (prev == status) {
      shape.back() *= x.shape[d];
      stride.back() = strides[d];
    } else {
      shape.push_back(x.shape[d]);
      stride.push_back(strides[d]);
    }
    prev = status;
  }
  if (kshape.size() > 4 || rshape.size() > 4) {
    Fail(op, y,
         "the reduction pattern of " + x.Describe() + " has " + std::to_string(kshape.size()) +
             " kept and " + std::to_string(rshape.size()) +
             " reduced runs of dims; the shader handles 4 of each");
  }
  while (kshape.size() < 4) {
    kshape.insert(kshape.begin(), 1);
    kstride.insert(kstride.begin(), 0);
  }
  while (rshape.size() < 4) {
    rshape.insert(rshape.begin(), 1);
    rstride.insert(rstride.begin(), 0);
  }
  ReducePush push{};
  for (int d = 0; d < 4; ++d) {
    push.kshape[d] = U32(kshape[d], op, y, "dim");
    push.kstride[d] = U32(kstride[d], op, y, "stride");
    push.rshape[d] = U32(rshape[d], op, y, "dim");
    push.rstride[d] = U32(rstride[d], op, y, "stride");
  }
  push.total = U32(y.numel(), op, y, "output elements");
  push.count = U32(count, op, y, "reduced elements");
  const bool coop = rshape[3] >= kCoopMinInner &&
                    (p.context().prefers_shared_memory() ||
                     (y.numel() <= kCpuCoopMaxOutputs && count >= kCpuCoopMinCount));
  const uint32_t dt = detail::DTypeCode(op, y, x);
  // float32 / int32: the plain shader; float16, int64, bool: the "+ext" variant.
  const std::string variant = detail::VariantStem(stem, detail::NeedsExt({&x, &y}));
  detail::Launch(p, variant.c_str(), {detail::InElems(x), Out(y)}, push, {coop ? 1u : 0u, dt, dt},
                 coop ? Grid1D(p.context(), y.numel(), 1) : Grid1D(p.context(), y.numel(), 64), y);
}

}  // namespace

void Mean(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
          bool keepdims) {
  Reduce(p, "mean", "mean", x, y, axes, keepdims, true, /*float_only=*/true);
}

void Sum(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims) {
  Reduce(p, "sum", "sum", x, y, axes, keepdims, false);
}

void Prod(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
          bool keepdims) {
  Reduce(p, "prod", "prod", x, y, axes, keepdims, false);
}

void Max(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims) {
  Reduce(p, "max", "max", x, y, axes, keepdims, true);
}

void Min(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims) {
  Reduce(p, "min", "min", x, y, axes, keepdims, true);
}

void Std(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
         bool keepdims) {
  Reduce(p, "std", "std", x, y, axes, keepdims, true, /*float_only=*/true);
}

void Variance(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes,
              bool keepdims) {
  Reduce(p, "variance", "variance", x, y, axes, keepdims, true, /*float_only=*/true);
}

}  // namespace ops
}  // namespace msc_vk
