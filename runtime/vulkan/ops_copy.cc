// Data movement (shaders/common/copy.glsl, any dtype): reshape/squeeze/expand_dims,
// permute_dims/transpose, concat/concatenate/stack/split, strided_slice, broadcast_to, tile,
// repeat, flip; and tril/triu/trilu (shaders/common/trilu.glsl).
#include <algorithm>

#include "error.h"
#include "ops_internal.h"
#include "shader_registry.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::Fail;
using detail::U32;

struct CopyPush {
  uint32_t shape[6];
  int32_t src_stride[6];
  uint32_t dst_stride[6];
  int32_t src_offset;
  uint32_t dst_offset, total;
  uint32_t div_m[6], div_s;
};

int32_t I32(int64_t v, const char* optype, const Tensor& y) {
  if (v < INT32_MIN || v > INT32_MAX)
    Fail(optype, y, "index " + std::to_string(v) + " is out of range");
  return static_cast<int32_t>(v);
}

// One dispatch of copy.glsl over a <= 6-dim index space (c: collapsed, padded to 6 dims).
void CopyDispatch(Program& p, const char* optype, const std::string& stem, const Tensor& x,
                  const Tensor& y, const detail::Collapsed& c, int64_t src_offset,
                  int64_t dst_offset) {
  const int64_t total = NumElements(c.shape);
  const uint32_t esize = static_cast<uint32_t>(DTypeSize(x.dtype));
  const detail::NdIndex nd = detail::MakeNdIndex(c.shape, optype, y);
  CopyPush push{};
  for (int d = 0; d < 6; ++d) {
    push.shape[d] = nd.shape[d];
    push.div_m[d] = nd.div_m[d];
    push.src_stride[d] = I32(c.strides[0][d], optype, y);
    push.dst_stride[d] = U32(c.strides[1][d], optype, y, "stride");
  }
  push.div_s = nd.div_s;
  push.src_offset = I32(src_offset, optype, y);
  push.dst_offset = U32(dst_offset, optype, y, "offset");
  push.total = U32(total, optype, y, "elements");
  // Mode 1: 4-byte elements contiguous on both sides (all dims merged into the last one),
  // aligned: uvec4 copy. Mode 2: 4-byte elements, destination rows contiguous and 4-aligned:
  // gather 4, store one uvec4.
  uint32_t mode = 0;
  const auto& ss = c.strides[0];
  const auto& ds = c.strides[1];
  if (esize == 4 && NumElements(c.shape) == c.shape[5] && ss[5] == 1 && ds[5] == 1 &&
      total % 4 == 0 && src_offset % 4 == 0 && dst_offset % 4 == 0 && x.numel() % 4 == 0) {
    mode = 1;
  } else if (esize == 4 && c.shape[5] % 4 == 0 && ds[5] == 1 && dst_offset % 4 == 0 &&
             ds[0] % 4 == 0 && ds[1] % 4 == 0 && ds[2] % 4 == 0 && ds[3] % 4 == 0 &&
             ds[4] % 4 == 0) {
    mode = 2;
  }
  const std::string s = detail::VariantStem(stem, esize == 1 || esize == 2);
  detail::Launch(
      p, s.c_str(), {InTexel(x, mode == 1 ? View::kTexelUvec4 : View::kTexelUint), Out(y)}, push,
      {mode, esize, nd.ndims}, Grid1D(p.context(), mode == 0 ? total : total / 4, 64), y);
}

// Copies the index space `shape` from x (src strides/offset) into y (dst strides/offset), in
// elements. Index spaces of more than 6 dims (after merging) run as one dispatch per index of
// the leading dims.
void StridedCopy(Program& p, const char* optype, const std::string& stem, const Tensor& x,
                 const Tensor& y, const Shape& shape, const std::vector<int64_t>& src_stride,
                 int64_t src_offset, const std::vector<int64_t>& dst_stride, int64_t dst_offset) {
  const int64_t total = NumElements(shape);
  if (total == 0) return;
  detail::Collapsed c = detail::Collapse(shape, {src_stride, dst_stride}, optype, y, 0);
  if (c.shape.empty()) {  // one element
    c.shape = {1};
    c.strides = {{0}, {0}};
  }
  // A contiguous copy of 1/2/8-byte elements whose bytes are whole 4-byte words: copy words.
  const int64_t esize = static_cast<int64_t>(DTypeSize(x.dtype));
  if (esize != 4 && c.shape.size() == 1 && c.strides[0][0] == 1 && c.strides[1][0] == 1 &&
      (c.shape[0] * esize) % 4 == 0 && (src_offset * esize) % 4 == 0 &&
      (dst_offset * esize) % 4 == 0 && x.bytes() % 4 == 0 && y.bytes() % 4 == 0) {
    Tensor xw = x, yw = y;
    xw.dtype = yw.dtype = DType::kInt32;
    xw.shape = {static_cast<int64_t>(x.bytes() / 4)};
    yw.shape = {static_cast<int64_t>(y.bytes() / 4)};
    return StridedCopy(p, optype, stem, xw, yw, {c.shape[0] * esize / 4}, {1},
                       src_offset * esize / 4, {1}, dst_offset * esize / 4);
  }
  const size_t n = c.shape.size();
  if (n > 6) {  // loop over the leading n - 6 dims
    const size_t outer = n - 6;
    const Shape outer_shape(c.shape.begin(), c.shape.begin() + outer);
    detail::Collapsed inner;
    inner.shape.assign(c.shape.begin() + outer, c.shape.end());
    inner.strides = {std::vector<int64_t>(c.strides[0].begin() + outer, c.strides[0].end()),
                     std::vector<int64_t>(c.strides[1].begin() + outer, c.strides[1].end())};
    for (int64_t o = 0; o < NumElements(outer_shape); ++o) {
      int64_t rest = o, so = src_offset, dof = dst_offset;
      for (size_t d = outer; d-- > 0;) {
        const int64_t i = rest % c.shape[d];
        rest /= c.shape[d];
        so += i * c.strides[0][d];
        dof += i * c.strides[1][d];
      }
      CopyDispatch(p, optype, stem, x, y, inner, so, dof);
    }
    return;
  }
  while (c.shape.size() < 6) {
    c.shape.insert(c.shape.begin(), 1);
    for (auto& s : c.strides) s.insert(s.begin(), 0);
  }
  CopyDispatch(p, optype, stem, x, y, c, src_offset, dst_offset);
}

void ReshapeLike(Program& p, const char* optype, const Tensor& x, const Tensor& y) {
  detail::CheckSameDType(optype, y, {&x});
  if (x.numel() != y.numel())
    Fail(optype, y, "input " + x.Describe() + " and output differ in element count");
  if (detail::SameBytes(x, y)) return;
  StridedCopy(p, optype, optype, x, y, {x.numel()}, {1}, 0, {1}, 0);
}

void Permute(Program& p, const char* optype, const Tensor& x, const Tensor& y,
             std::vector<int64_t> axes) {
  detail::CheckSameDType(optype, y, {&x});
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
  StridedCopy(p, optype, optype, x, y, y.shape, src, 0, detail::ContiguousStrides(y.shape), 0);
}

void ConcatImpl(Program& p, const char* op, const std::vector<Tensor>& inputs, const Tensor& y,
                int64_t axis) {
  if (inputs.empty()) Fail(op, y, "needs at least one input");
  const int64_t ax = detail::NormAxis(axis, y.shape.size(), op, y);
  Shape expect = inputs[0].shape;
  if (expect.size() != y.shape.size())
    Fail(op, y, "input " + inputs[0].Describe() + " and output differ in rank");
  expect[ax] = 0;
  for (const Tensor& t : inputs) {
    detail::CheckSameDType(op, y, {&t});
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
    StridedCopy(p, op, ShaderStem(op), t, y, t.shape, detail::ContiguousStrides(t.shape), 0, ys,
                at * ys[ax]);
    at += t.shape[ax];
  }
}

}  // namespace

void Reshape(Program& p, const Tensor& x, const Tensor& y) { ReshapeLike(p, "reshape", x, y); }
void Squeeze(Program& p, const Tensor& x, const Tensor& y) { ReshapeLike(p, "squeeze", x, y); }
void ExpandDims(Program& p, const Tensor& x, const Tensor& y) {
  ReshapeLike(p, "expand_dims", x, y);
}

void PermuteDims(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes) {
  Permute(p, "permute_dims", x, y, axes);
}

void Transpose(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes) {
  Permute(p, "transpose", x, y, axes);
}

void Concat(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis) {
  ConcatImpl(p, "concat", inputs, y, axis);
}

void Concatenate(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis) {
  ConcatImpl(p, "concatenate", inputs, y, axis);
}

void Stack(Program& p, const std::vector<Tensor>& inputs, const Tensor& y, int64_t axis) {
  const char* op = "stack";
  if (inputs.empty()) Fail(op, y, "needs at least one input");
  const int64_t ax = detail::NormAxis(axis, y.shape.size(), op, y);
  Shape expect = inputs[0].shape;
  if (expect.size() + 1 != y.shape.size())
    Fail(op, y, "output " + y.Describe() + " must have one dim more than the inputs");
  expect.insert(expect.begin() + ax, static_cast<int64_t>(inputs.size()));
  if (y.shape != expect)
    Fail(op, y, "output " + y.Describe() + " does not match " + ShapeToString(expect));
  std::vector<int64_t> ys = detail::ContiguousStrides(y.shape);
  const int64_t step = ys[ax];
  ys.erase(ys.begin() + ax);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    detail::CheckSameDType(op, y, {&t});
    if (t.shape != inputs[0].shape)
      Fail(op, y, "input " + t.Describe() + " differs in shape from " + inputs[0].Describe());
    StridedCopy(p, op, op, t, y, t.shape, detail::ContiguousStrides(t.shape), 0, ys,
                static_cast<int64_t>(i) * step);
  }
}

void Split(Program& p, const Tensor& x, const std::vector<Tensor>& outputs, int64_t sections,
           const std::vector<int64_t>& indices, int64_t axis) {
  const char* op = "split";
  if (outputs.empty()) throw Error("split of " + x.Describe() + ": no outputs");
  const Tensor& y0 = outputs[0];
  const int64_t ax = detail::NormAxis(axis, x.shape.size(), op, y0);
  const int64_t n = x.shape[ax];
  // Piece boundaries as relax.op.split computes them.
  std::vector<int64_t> bounds = {0};
  if (sections > 0) {
    const int64_t size = (n + sections - 1) / sections;
    for (int64_t i = 1; i < sections; ++i) bounds.push_back(std::min(n, i * size));
  } else {
    for (int64_t i : indices) bounds.push_back(std::clamp<int64_t>(i < 0 ? i + n : i, 0, n));
  }
  bounds.push_back(n);
  if (bounds.size() - 1 != outputs.size()) {
    Fail(op, y0,
         "splits " + x.Describe() + " into " + std::to_string(bounds.size() - 1) + " pieces but " +
             std::to_string(outputs.size()) + " outputs were given");
  }
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor& y = outputs[j];
    detail::CheckSameDType(op, y, {&x});
    Shape expect = x.shape;
    expect[ax] = std::max<int64_t>(0, bounds[j + 1] - bounds[j]);
    if (y.shape != expect)
      Fail(op, y, "output " + y.Describe() + " does not match the piece " + ShapeToString(expect));
  }
  // Equal pieces whose outputs lie in one buffer at equally spaced offsets (a memory-planned
  // arena places a split's outputs, born and dying together, side by side: a transformer's qkv
  // split): ONE copy over [piece, ...] into the span from the first output to the last, instead of
  // one dispatch per piece (on lavapipe a dispatch costs ~40 us whatever its size). The span is
  // only bound; the copy writes the pieces' elements alone.
  const VkDeviceSize esize = DTypeSize(x.dtype);
  bool one = outputs.size() > 1 && y0.numel() > 0;
  const VkDeviceSize step = one ? outputs[1].offset - y0.offset : 0;
  for (size_t j = 1; one && j < outputs.size(); ++j) {
    const Tensor& y = outputs[j];
    one = y.buffer == y0.buffer && y.shape == y0.shape && y.offset > y0.offset &&
          y.offset - y0.offset == j * step;
  }
  one = one && step % esize == 0 && step >= y0.bytes();
  if (one) {
    Tensor span = y0;
    span.shape = {static_cast<int64_t>(step / esize * (outputs.size() - 1)) + y0.numel()};
    Shape shape = {static_cast<int64_t>(outputs.size())};
    shape.insert(shape.end(), y0.shape.begin(), y0.shape.end());
    std::vector<int64_t> src = {y0.shape[ax] * xs[ax]}, dst = {static_cast<int64_t>(step / esize)};
    src.insert(src.end(), xs.begin(), xs.end());
    const std::vector<int64_t> ys = detail::ContiguousStrides(y0.shape);
    dst.insert(dst.end(), ys.begin(), ys.end());
    StridedCopy(p, op, op, x, span, shape, src, 0, dst, 0);
    return;
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    StridedCopy(p, op, op, x, outputs[j], outputs[j].shape, xs, bounds[j] * xs[ax],
                detail::ContiguousStrides(outputs[j].shape), 0);
}

void StridedSlice(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& begin,
                  const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& axes) {
  const char* op = "strided_slice";
  detail::CheckSameDType(op, y, {&x});
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
  StridedCopy(p, op, op, x, y, out, src, offset, detail::ContiguousStrides(out), 0);
}

void BroadcastTo(Program& p, const Tensor& x, const Tensor& y) {
  const char* op = "broadcast_to";
  detail::CheckSameDType(op, y, {&x});
  Shape out;
  if (x.shape.size() > y.shape.size() || !detail::BroadcastShapes(x.shape, y.shape, &out) ||
      out != y.shape) {
    Fail(op, y, "input " + x.Describe() + " does not broadcast to " + ShapeToString(y.shape));
  }
  std::vector<int64_t> own = detail::ContiguousStrides(x.shape), src(y.shape.size(), 0);
  const size_t lead = y.shape.size() - x.shape.size();
  for (size_t d = 0; d < x.shape.size(); ++d) src[lead + d] = x.shape[d] == 1 ? 0 : own[d];
  StridedCopy(p, op, op, x, y, y.shape, src, 0, detail::ContiguousStrides(y.shape), 0);
}

void Tile(Program& p, const Tensor& x, const Tensor& y, const std::vector<int64_t>& repeats) {
  const char* op = "tile";
  detail::CheckSameDType(op, y, {&x});
  const size_t r = std::max(x.shape.size(), repeats.size());
  Shape xs(r - x.shape.size(), 1), reps(r - repeats.size(), 1);
  xs.insert(xs.end(), x.shape.begin(), x.shape.end());
  reps.insert(reps.end(), repeats.begin(), repeats.end());
  Shape expect(r);
  for (size_t d = 0; d < r; ++d) {
    if (reps[d] < 0) Fail(op, y, "negative repeat " + std::to_string(reps[d]));
    expect[d] = xs[d] * reps[d];
  }
  if (y.shape != expect)
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(expect));
  // Index space (reps[d], xs[d]) per dim: the repeat index reads stride 0.
  const std::vector<int64_t> xst = detail::ContiguousStrides(xs),
                             yst = detail::ContiguousStrides(y.shape);
  Shape space;
  std::vector<int64_t> src, dst;
  for (size_t d = 0; d < r; ++d) {
    space.insert(space.end(), {reps[d], xs[d]});
    src.insert(src.end(), {0, xst[d]});
    dst.insert(dst.end(), {xs[d] * yst[d], yst[d]});
  }
  StridedCopy(p, op, op, x, y, space, src, 0, dst, 0);
}

void Repeat(Program& p, const Tensor& x, const Tensor& y, int64_t repeats,
            std::optional<int64_t> axis) {
  const char* op = "repeat";
  detail::CheckSameDType(op, y, {&x});
  if (repeats < 0) Fail(op, y, "negative repeats " + std::to_string(repeats));
  Shape xs = x.shape;
  int64_t ax = 0;
  if (axis) {
    ax = detail::NormAxis(*axis, x.shape.size(), op, y);
  } else {
    xs = {x.numel()};
  }
  Shape expect = xs;
  expect[ax] *= repeats;
  if (y.shape != expect)
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(expect));
  // Index space: xs with an extra dim of size `repeats` after axis (source stride 0).
  const std::vector<int64_t> xst = detail::ContiguousStrides(xs),
                             yst = detail::ContiguousStrides(expect);
  Shape space = xs;
  std::vector<int64_t> src = xst, dst = yst;
  space.insert(space.begin() + ax + 1, repeats);
  src.insert(src.begin() + ax + 1, 0);
  dst[ax] = yst[ax] * repeats;
  dst.insert(dst.begin() + ax + 1, yst[ax]);
  StridedCopy(p, op, op, x, y, space, src, 0, dst, 0);
}

void Flip(Program& p, const Tensor& x, const Tensor& y, int64_t axis) {
  const char* op = "flip";
  detail::CheckSameDType(op, y, {&x});
  if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  const int64_t ax = detail::NormAxis(axis, x.shape.size(), op, y);
  std::vector<int64_t> src = detail::ContiguousStrides(x.shape);
  const int64_t offset = (x.shape[ax] - 1) * src[ax];
  src[ax] = -src[ax];
  StridedCopy(p, op, op, x, y, y.shape, src, x.shape[ax] > 0 ? offset : 0,
              detail::ContiguousStrides(y.shape), 0);
}

void Trilu(Program& p, const std::string& optype, const Tensor& x, const Tensor& y, int64_t k,
           bool upper) {
  const char* op = optype == "tril" ? "tril" : (optype == "triu" ? "triu" : "trilu");
  detail::CheckSameDType(op, y, {&x});
  if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  if (x.shape.size() < 2) Fail(op, y, "input " + x.Describe() + " needs at least 2 dims");
  const int64_t total = y.numel();
  if (total == 0) return;
  struct {
    uint32_t total, rows, cols;
    int32_t k;
    uint32_t div_m[2], div_s[2];
  } push{};
  push.total = U32(total, op, y, "elements");
  push.rows = U32(x.dim(-2), op, y, "rows");
  push.cols = U32(x.dim(-1), op, y, "cols");
  push.k =
      static_cast<int32_t>(std::clamp<int64_t>(k, -(int64_t{1} << 31) + 1, (int64_t{1} << 31) - 1));
  const detail::MagicDivider mc = detail::MakeMagicDivider(push.cols),
                             mr = detail::MakeMagicDivider(push.rows);
  push.div_m[0] = mc.m;
  push.div_s[0] = mc.s;
  push.div_m[1] = mr.m;
  push.div_s[1] = mr.s;
  const uint32_t esize = static_cast<uint32_t>(DTypeSize(x.dtype));
  const std::string stem = detail::VariantStem(op, esize == 1 || esize == 2);
  detail::Launch(p, stem.c_str(), {detail::InElems(x), Out(y)}, push, {upper ? 1u : 0u, esize},
                 Grid1D(p.context(), total, 64), y);
}

}  // namespace ops
}  // namespace msc_vk
