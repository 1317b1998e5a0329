// Data movement: reshape/squeeze/expand_dims, permute_dims/transpose, concat, strided_slice
// (shaders/common/copy.glsl).
#include <algorithm>

#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::CheckFloat32;
using detail::Fail;
using detail::U32;

struct CopyPush {
  uint32_t shape[4];
  int32_t src_stride[4];
  uint32_t dst_stride[4];
  int32_t src_offset;
  uint32_t dst_offset, total;
  uint32_t div_m[4], div_s[4];
};

int32_t I32(int64_t v, const char* optype, const Tensor& y) {
  if (v < INT32_MIN || v > INT32_MAX)
    Fail(optype, y, "index " + std::to_string(v) + " is out of range");
  return static_cast<int32_t>(v);
}

// Copies the index space `shape` from x (src strides/offset) into y (dst strides/offset).
void StridedCopy(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& y,
                 const Shape& shape, const std::vector<int64_t>& src_stride, int64_t src_offset,
                 const std::vector<int64_t>& dst_stride, int64_t dst_offset) {
  const int64_t total = NumElements(shape);
  if (total == 0) return;
  detail::Collapsed c = detail::Collapse(shape, {src_stride, dst_stride}, optype, y);
  CopyPush push{};
  for (int d = 0; d < 4; ++d) {
    push.shape[d] = U32(c.shape[d], optype, y, "dim");
    push.src_stride[d] = I32(c.strides[0][d], optype, y);
    push.dst_stride[d] = U32(c.strides[1][d], optype, y, "stride");
    const detail::MagicDivider m = detail::MakeMagicDivider(push.shape[d]);
    push.div_m[d] = m.m;
    push.div_s[d] = m.s;
  }
  push.src_offset = I32(src_offset, optype, y);
  push.dst_offset = U32(dst_offset, optype, y, "offset");
  push.total = U32(total, optype, y, "elements");
  // Mode 1: contiguous on both sides (all dims merged into the last one), aligned: vec4 copy.
  // Mode 2: destination rows contiguous and 4-aligned: gather 4, store one vec4.
  uint32_t mode = 0;
  if (c.shape[0] * c.shape[1] * c.shape[2] == 1 && c.strides[0][3] == 1 && c.strides[1][3] == 1 &&
      total % 4 == 0 && src_offset % 4 == 0 && dst_offset % 4 == 0 && x.numel() % 4 == 0) {
    mode = 1;
  } else if (c.shape[3] % 4 == 0 && c.strides[1][3] == 1 && dst_offset % 4 == 0 &&
             c.strides[1][0] % 4 == 0 && c.strides[1][1] % 4 == 0 && c.strides[1][2] % 4 == 0) {
    mode = 2;
  }
  detail::Launch(p, stem, {InTexel(x, mode == 1 ? View::kTexelVec4 : View::kTexelFloat), Out(y)},
                 push, {mode}, Grid1D(p.context(), mode == 0 ? total : total / 4, 64), y);
}

void ReshapeLike(Program& p, const char* optype, const char* stem, const Tensor& x,
                 const Tensor& y) {
  CheckFloat32(optype, y, {&x, &y});
  if (x.numel() != y.numel())
    Fail(optype, y, "input " + x.Describe() + " and output differ in element count");
  if (detail::SameBytes(x, y)) return;
  StridedCopy(p, optype, stem, x, y, {x.numel()}, {1}, 0, {1}, 0);
}

void Permute(Program& p, const char* optype, const char* stem, const Tensor& x, const Tensor& y,
             std::vector<int64_t> axes) {
  CheckFloat32(optype, y, {&x, &y});
  const size_t r = x.shape.size();
  if (axes.empty()) {
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(r - 1 - i));
  }
  if (axes.size() != r)
    Fail(optype, y,
         "axes has " + std::to_string(axes.size()) + " entries for rank " + std::to_string(r));
  std::vector<bool> seen(r, false);
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  Shape expect;
  std::vector<int64_t> src;
  for (int64_t a : axes) {
    const int64_t ax = detail::NormAxis(a, r, optype, y);
    if (seen[ax]) Fail(optype, y, "axes repeat axis " + std::to_string(ax));
    seen[ax] = true;
    expect.push_back(x.shape[ax]);
    src.push_back(xs[ax]);
  }
  if (y.shape != expect)
    Fail(optype, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  StridedCopy(p, optype, stem, x, y, y.shape, src, 0, detail::ContiguousStrides(y.shape), 0);
}

}  // namespace

void Reshape(Program& p, const Tensor& x, const Tensor& y) {
  ReshapeLike(p, "reshape", "reshape", x, y);
}
void Squeeze(Program& p, const Tensor& x, const Tensor& y) {
  ReshapeLike(p, "squeeze", "squeeze", x, y);
}
void ExpandDims(Program& p, const Tensor& x, const Tensor& y) {
  ReshapeLike(p, "expand_dims", "expand_dims", x, y);
}

void PermuteDims(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes) {
  Permute(p, "permute_dims", "permute_dims", x, y, axes);
}

void Transpose(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes) {
  Permute(p, "transpose", "transpose", x, y, axes);
}

void Concat(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis) {
  const char* op = "concat";
  CheckFloat32(op, y, {&y});
  if (inputs.empty()) Fail(op, y, "needs at least one input");
  const int64_t ax = detail::NormAxis(axis, y.shape.size(), op, y);
  Shape expect = inputs[0].shape;
  if (expect.size() != y.shape.size())
    Fail(op, y, "input " + inputs[0].Describe() + " and output differ in rank");
  expect[ax] = 0;
  for (const Tensor& t : inputs) {
    CheckFloat32(op, y, {&t});
    Shape s = t.shape;
    if (s.size() != y.shape.size())
      Fail(op, y, "input " + t.Describe() + " and output differ in rank");
    const int64_t len = s[ax];
    s[ax] = 0;
    Shape e = expect;
    e[ax] = 0;
    if (s != e)
      Fail(op, y,
           "input " + t.Describe() + " differs from the others outside axis " + std::to_string(ax));
    expect[ax] += len;
  }
  if (y.shape != expect)
    Fail(op, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  const std::vector<int64_t> ys = detail::ContiguousStrides(y.shape);
  int64_t at = 0;
  for (const Tensor& t : inputs) {
    StridedCopy(p, op, "concat", t, y, t.shape, detail::ContiguousStrides(t.shape), 0, ys,
                at * ys[ax]);
    at += t.shape[ax];
  }
}

void StridedSlice(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& begin,
                  const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& axes) {
  const char* op = "strided_slice";
  CheckFloat32(op, y, {&x, &y});
  if (begin.size() != axes.size() || end.size() != axes.size() ||
      (!strides.empty() && strides.size() != axes.size())) {
    Fail(op, y, "begin, end, strides and axes must have the same length");
  }
  const size_t r = x.shape.size();
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  Shape out = x.shape;
  std::vector<int64_t> src = xs;
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t ax = detail::NormAxis(axes[i], r, op, y);
    const int64_t n = x.shape[ax], step = strides.empty() ? 1 : strides[i];
    if (step == 0) Fail(op, y, "stride 0 on axis " + std::to_string(ax));
    int64_t b = begin[i] < 0 ? begin[i] + n : begin[i];
    int64_t e = end[i] < 0 ? end[i] + n : end[i];
    int64_t len;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      len = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::clamp<int64_t>(b, -1, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      len = b > e ? (b - e - step - 1) / -step : 0;
    }
    out[ax] = len;
    src[ax] = xs[ax] * step;
    if (len > 0) offset += b * xs[ax];
  }
  if (y.shape != out)
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(out));
  StridedCopy(p, op, "strided_slice", x, y, out, src, offset, detail::ContiguousStrides(out), 0);
}

}  // namespace ops
}  // namespace msc_vk
