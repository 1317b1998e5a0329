// Indexing ops: take / msc.embedding (shaders/common/take.glsl), gather_elements, gather_nd,
// scatter_elements / scatter_nd (common/scatter.glsl), argmax / argmin (common/argreduce.glsl),
// cumsum (common/cumsum.glsl), topk (common/topk.glsl).
#include <algorithm>

#include "error.h"
#include "ops_internal.h"

namespace msc_vk {
namespace ops {
namespace {

using detail::DTypeCode;
using detail::Fail;
using detail::U32;

// Sizes of x around `axis`: x viewed as [outer, len, inner].
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisView ViewAround(const Shape& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < axis; ++d) v.outer *= shape[d];
  v.len = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) v.inner *= shape[d];
  return v;
}

void SetDiv(uint32_t d, uint32_t* m, uint32_t* s) {
  const detail::MagicDivider md = detail::MakeMagicDivider(d);
  *m = md.m;
  *s = md.s;
}

void TakeImpl(Program& p, const char* optype, const char* stem, const Tensor& x,
              const Tensor& indices, const Tensor& y, std::optional<int64_t> axis, TakeMode mode) {
  detail::CheckSameDType(optype, y, {&x});
  const uint32_t it = DTypeCode(optype, y, indices);
  if (std::string(optype) == "take") detail::CheckIndices(optype, y, indices, "indices");
  AxisView v;
  Shape expect;
  if (axis) {
    const int64_t ax = detail::NormAxis(*axis, x.shape.size(), optype, y);
    v = ViewAround(x.shape, ax);
    expect.assign(x.shape.begin(), x.shape.begin() + ax);
    expect.insert(expect.end(), indices.shape.begin(), indices.shape.end());
    expect.insert(expect.end(), x.shape.begin() + ax + 1, x.shape.end());
  } else {
    v.len = x.numel();
    expect = indices.shape;
  }
  Tensor out = y;  // msc.embedding: any output shape of ids.shape + [dim]'s element count
  if (std::string(optype) == "msc.embedding" && y.numel() == NumElements(expect) &&
      !y.shape.empty() && y.shape.back() == x.shape.back()) {
    out.shape = expect;
  }
  if (out.shape != expect) {
    Fail(optype, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(expect));
  }
  if (v.len == 0 && y.numel() > 0) Fail(optype, y, "takes from an empty axis");
  const int64_t total = y.numel();
  if (total == 0) return;
  struct {
    uint32_t total, inner, n_idx, axis_len, div_m[2], div_s[2];
  } push{};
  push.total = U32(total, optype, y, "elements");
  push.inner = U32(v.inner, optype, y, "inner size");
  push.n_idx = U32(indices.numel(), optype, y, "indices");
  push.axis_len = U32(v.len, optype, y, "axis length");
  SetDiv(push.inner, &push.div_m[0], &push.div_s[0]);
  SetDiv(push.n_idx, &push.div_m[1], &push.div_s[1]);
  const uint32_t esize = static_cast<uint32_t>(DTypeSize(x.dtype));
  const std::string s = detail::VariantStem(stem, esize == 1 || esize == 2);
  detail::Launch(p, s.c_str(), {detail::InElems(x), detail::InElems(indices), Out(out)}, push,
                 {static_cast<uint32_t>(mode), esize, it}, Grid1D(p.context(), total, 64), y);
}

void ArgReduce(Program& p, const char* optype, bool is_min, const Tensor& x, const Tensor& y,
               std::optional<int64_t> axis, bool keepdims) {
  const uint32_t xt = DTypeCode(optype, y, x), yt = DTypeCode(optype, y, y);
  if (y.dtype != DType::kInt64 && y.dtype != DType::kInt32)
    Fail(optype, y, "output " + y.Describe() + " must be int64 or int32");
  AxisView v;
  Shape expect;
  if (axis) {
    const int64_t ax = detail::NormAxis(*axis, x.shape.size(), optype, y);
    v = ViewAround(x.shape, ax);
    expect = x.shape;
    if (keepdims)
      expect[ax] = 1;
    else
      expect.erase(expect.begin() + ax);
  } else {
    v.len = x.numel();
    if (keepdims) expect.assign(x.shape.size(), 1);
  }
  if (y.shape != expect) {
    Fail(optype, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(expect));
  }
  if (v.len == 0) Fail(optype, y, "reduces an empty axis");
  const int64_t total = y.numel();
  if (total == 0) return;
  struct {
    uint32_t total, L, inner, div_m, div_s;
  } push{};
  push.total = U32(total, optype, y, "elements");
  push.L = U32(v.len, optype, y, "axis length");
  push.inner = U32(v.inner, optype, y, "inner size");
  SetDiv(push.inner, &push.div_m, &push.div_s);
  // The index output is written as a sign-extended pair: only x's dtype selects the variant.
  const std::string s = detail::VariantStem(optype, detail::NeedsExt({&x}));
  detail::Launch(p, s.c_str(), {detail::InElems(x), Out(y)}, push, {is_min ? 1u : 0u, xt, yt},
                 Grid1D(p.context(), total, 64), y);
}

uint32_t ReductionCode(const char* optype, const Tensor& y, const std::string& reduction,
                       bool allow_mean) {
  static const char* const kNames[] = {"update", "add", "mul", "mean", "max", "min"};
  for (uint32_t i = 0; i < 6; ++i) {
    if (reduction == kNames[i] && (i != 3 || allow_mean)) return i;
  }
  Fail(optype, y,
       "reduction '" + reduction + "' is not one of update, add, mul, " +
           (allow_mean ? "mean, " : "") + "max, min");
}

struct ScatterPush {
  uint32_t shape[6], div_m[6], div_s, i_stride[6], y_stride[6], total, count;
  int32_t axis;
  uint32_t axis_len;
};

// Phase 0 (copy x -> y) and phase 1 (`push`, `invocations`) of shaders/common/scatter.glsl.
void ScatterDispatch(Program& p, const char* optype, const Tensor& x, const Tensor& indices,
                     const Tensor& updates, const Tensor& y, uint32_t red, bool nd,
                     ScatterPush push, int64_t invocations) {
  const uint32_t dt = DTypeCode(optype, y, y);
  const bool ext = detail::NeedsExt({&y});
  const std::string s = detail::VariantStem(optype, ext);
  ScatterPush copy{};
  copy.total = U32(y.numel(), optype, y, "elements");
  if (y.numel() > 0) {
    detail::Launch(p, s.c_str(),
                   {detail::InElems(x), detail::InElems(indices), detail::InElems(updates), Out(y)},
                   copy, {0u, red, dt, nd ? 1u : 0u}, Grid1D(p.context(), y.numel(), 64), y);
  }
  if (invocations == 0) return;
  push.total = U32(invocations, optype, y, "invocations");
  detail::Launch(p, s.c_str(),
                 {detail::InElems(x), detail::InElems(indices), detail::InElems(updates), InOut(y)},
                 push, {1u, red, dt, nd ? 1u : 0u}, Grid1D(p.context(), invocations, 64), y);
}

}  // namespace

void Take(Program& p, const Tensor& x, const Tensor& indices, const Tensor& y,
          std::optional<int64_t> axis, TakeMode mode) {
  TakeImpl(p, "take", "take", x, indices, y, axis, mode);
}

void Embedding(Program& p, const Tensor& ids, const Tensor& weight, const Tensor& y) {
  if (weight.shape.size() != 2)
    Fail("msc.embedding", y, "weight " + weight.Describe() + " must be [num_embeddings, dim]");
  TakeImpl(p, "msc.embedding", "msc/embedding", weight, ids, y, 0, TakeMode::kFast);
}

void GatherElements(Program& p, const Tensor& x, const Tensor& indices, const Tensor& y,
                    int64_t axis) {
  const char* op = "gather_elements";
  detail::CheckSameDType(op, y, {&x});
  detail::CheckIndices(op, y, indices, "indices");
  const size_t r = x.shape.size();
  const int64_t ax = detail::NormAxis(axis, r, op, y);
  if (indices.shape.size() != r || y.shape != indices.shape)
    Fail(op, y,
         "output " + y.Describe() + " and indices " + indices.Describe() +
             " must have x's rank and one shape");
  for (size_t d = 0; d < r; ++d) {
    if (static_cast<int64_t>(d) != ax && indices.shape[d] > x.shape[d])
      Fail(op, y, "indices " + indices.Describe() + " exceed x " + x.Describe() + " off the axis");
  }
  if (r > 6) Fail(op, y, "at most 6 dims are supported");
  const int64_t total = y.numel();
  if (total == 0) return;
  const detail::NdIndex nd = detail::MakeNdIndex(y.shape, op, y);
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  struct {
    uint32_t shape[6], div_m[6], div_s, x_stride[6], total;
    int32_t axis, axis_len;
  } push{};
  const size_t lead = 6 - r;
  for (int d = 0; d < 6; ++d) {
    push.shape[d] = nd.shape[d];
    push.div_m[d] = nd.div_m[d];
    push.x_stride[d] = d < static_cast<int>(lead) ? 0 : U32(xs[d - lead], op, y, "stride");
  }
  push.div_s = nd.div_s;
  push.total = U32(total, op, y, "elements");
  push.axis = static_cast<int32_t>(ax + lead);
  push.axis_len = static_cast<int32_t>(U32(x.shape[ax], op, y, "axis length"));
  if (x.shape[ax] == 0) Fail(op, y, "gathers from an empty axis");
  const uint32_t esize = static_cast<uint32_t>(DTypeSize(x.dtype));
  const std::string s = detail::VariantStem(op, esize == 1 || esize == 2);
  detail::Launch(p, s.c_str(), {detail::InElems(x), detail::InElems(indices), Out(y)}, push,
                 {esize}, Grid1D(p.context(), total, 64), y);
}

void GatherND(Program& p, const Tensor& x, const Tensor& indices, const Tensor& y,
              int64_t batch_dims) {
  const char* op = "gather_nd";
  detail::CheckSameDType(op, y, {&x});
  detail::CheckIndices(op, y, indices, "indices");
  const int64_t B = batch_dims, ir = static_cast<int64_t>(indices.shape.size());
  if (ir < 1) Fail(op, y, "indices " + indices.Describe() + " need at least 1 dim");
  const int64_t M = indices.shape.back();
  if (B < 0 || B >= ir || B + M > static_cast<int64_t>(x.shape.size()) || M > 6 || M < 1)
    Fail(op, y,
         "indices " + indices.Describe() + " with batch_dims " + std::to_string(B) +
             " do not index x " + x.Describe());
  for (int64_t d = 0; d < B; ++d) {
    if (indices.shape[d] != x.shape[d])
      Fail(op, y, "batch dims of indices " + indices.Describe() + " and x differ");
  }
  Shape expect(indices.shape.begin(), indices.shape.end() - 1);
  expect.insert(expect.end(), x.shape.begin() + B + M, x.shape.end());
  if (y.shape != expect)
    Fail(op, y,
         "output " + y.Describe() + " does not match the computed shape " + ShapeToString(expect));
  const int64_t total = y.numel();
  if (total == 0) return;
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  int64_t inner = 1, rows_per_batch = 1, batch_stride = 1;
  for (size_t d = B + M; d < x.shape.size(); ++d) inner *= x.shape[d];
  for (int64_t d = B; d < ir - 1; ++d) rows_per_batch *= indices.shape[d];
  for (size_t d = B; d < x.shape.size(); ++d) batch_stride *= x.shape[d];
  struct {
    uint32_t total, inner, M, rows_per_batch, batch_stride, div_m[2], div_s[2];
    int32_t dims[6];
    uint32_t strides[6];
  } push{};
  push.total = U32(total, op, y, "elements");
  push.inner = U32(inner, op, y, "inner size");
  push.M = static_cast<uint32_t>(M);
  push.rows_per_batch = U32(rows_per_batch, op, y, "rows");
  push.batch_stride = U32(batch_stride, op, y, "batch stride");
  SetDiv(push.inner, &push.div_m[0], &push.div_s[0]);
  SetDiv(std::max<uint32_t>(1, push.rows_per_batch), &push.div_m[1], &push.div_s[1]);
  for (int64_t m = 0; m < M; ++m) {
    if (x.shape[B + m] == 0) Fail(op, y, "gathers from an empty dim");
    push.dims[m] = static_cast<int32_t>(U32(x.shape[B + m], op, y, "dim"));
    push.strides[m] = U32(xs[B + m], op, y, "stride");
  }
  const uint32_t esize = static_cast<uint32_t>(DTypeSize(x.dtype));
  const std::string s = detail::VariantStem(op, esize == 1 || esize == 2);
  detail::Launch(p, s.c_str(), {detail::InElems(x), detail::InElems(indices), Out(y)}, push,
                 {esize}, Grid1D(p.context(), total, 64), y);
}

void ScatterElements(Program& p, const Tensor& x, const Tensor& indices, const Tensor& updates,
                     const Tensor& y, int64_t axis, const std::string& reduction) {
  const char* op = "scatter_elements";
  detail::CheckSameDType(op, y, {&x, &updates});
  detail::CheckIndices(op, y, indices, "indices");
  const uint32_t red = ReductionCode(op, y, reduction, true);
  const size_t r = x.shape.size();
  const int64_t ax = detail::NormAxis(axis, r, op, y);
  if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  if (updates.shape != indices.shape || indices.shape.size() != r)
    Fail(op, y,
         "indices " + indices.Describe() + " and updates " + updates.Describe() +
             " must have one shape of x's rank");
  for (size_t d = 0; d < r; ++d) {
    if (static_cast<int64_t>(d) != ax && indices.shape[d] > x.shape[d])
      Fail(op, y, "indices " + indices.Describe() + " exceed x " + x.Describe() + " off the axis");
  }
  if (r > 6) Fail(op, y, "at most 6 dims are supported");
  if (indices.numel() > 0 && x.shape[ax] == 0) Fail(op, y, "scatters into an empty axis");
  Shape lines = indices.shape;
  lines[ax] = 1;
  const detail::NdIndex nd = detail::MakeNdIndex(NumElements(lines) ? lines : Shape{1}, op, y);
  const std::vector<int64_t> is = detail::ContiguousStrides(indices.shape),
                             ys = detail::ContiguousStrides(y.shape);
  ScatterPush push{};
  const size_t lead = 6 - r;
  for (int d = 0; d < 6; ++d) {
    push.shape[d] = nd.shape[d];
    push.div_m[d] = nd.div_m[d];
    push.i_stride[d] = d < static_cast<int>(lead) ? 0 : U32(is[d - lead], op, y, "stride");
    push.y_stride[d] = d < static_cast<int>(lead) ? 0 : U32(ys[d - lead], op, y, "stride");
  }
  push.div_s = nd.div_s;
  push.count = U32(indices.shape[ax], op, y, "count");
  push.axis = static_cast<int32_t>(ax + lead);
  push.axis_len = U32(x.shape[ax], op, y, "axis length");
  ScatterDispatch(p, op, x, indices, updates, y, red, false, push,
                  indices.numel() == 0 ? 0 : NumElements(lines));
}

void ScatterND(Program& p, const Tensor& x, const Tensor& indices, const Tensor& updates,
               const Tensor& y, const std::string& reduction) {
  const char* op = "scatter_nd";
  detail::CheckSameDType(op, y, {&x, &updates});
  detail::CheckIndices(op, y, indices, "indices");
  const uint32_t red = ReductionCode(op, y, reduction, false);
  if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  if (indices.shape.empty()) Fail(op, y, "indices " + indices.Describe() + " need at least 1 dim");
  const int64_t M = indices.shape.back();
  if (M < 1 || M > 6 || M > static_cast<int64_t>(x.shape.size()))
    Fail(op, y, "indices " + indices.Describe() + " do not index x " + x.Describe());
  Shape expect(indices.shape.begin(), indices.shape.end() - 1);
  expect.insert(expect.end(), x.shape.begin() + M, x.shape.end());
  if (updates.shape != expect)
    Fail(op, y, "updates " + updates.Describe() + " must be " + ShapeToString(expect));
  const std::vector<int64_t> xs = detail::ContiguousStrides(x.shape);
  int64_t inner = 1;
  for (size_t d = M; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t rows = indices.numel() / M;
  ScatterPush push{};
  for (int64_t m = 0; m < M; ++m) {
    if (x.shape[m] == 0 && rows > 0) Fail(op, y, "scatters into an empty dim");
    push.i_stride[m] = U32(x.shape[m], op, y, "dim");
    push.y_stride[m] = U32(xs[m], op, y, "stride");
  }
  push.count = U32(rows, op, y, "rows");
  push.axis = static_cast<int32_t>(M);
  push.axis_len = U32(inner, op, y, "inner size");
  ScatterDispatch(p, op, x, indices, updates, y, red, true, push, rows == 0 ? 0 : inner);
}

void ArgMax(Program& p, const Tensor& x, const Tensor& y, std::optional<int64_t> axis,
            bool keepdims) {
  ArgReduce(p, "argmax", false, x, y, axis, keepdims);
}
void ArgMin(Program& p, const Tensor& x, const Tensor& y, std::optional<int64_t> axis,
            bool keepdims) {
  ArgReduce(p, "argmin", true, x, y, axis, keepdims);
}

void Cumsum(Program& p, const Tensor& x, const Tensor& y, std::optional<int64_t> axis,
            bool exclusive) {
  const char* op = "cumsum";
  const uint32_t xt = DTypeCode(op, y, x), yt = DTypeCode(op, y, y);
  AxisView v;
  if (axis) {
    v = ViewAround(x.shape, detail::NormAxis(*axis, x.shape.size(), op, y));
    if (y.shape != x.shape) Fail(op, y, "output " + y.Describe() + " must have x's shape");
  } else {
    v.len = x.numel();
    if (y.shape != Shape{x.numel()})
      Fail(op, y,
           "output " + y.Describe() + " must be the flattened x [" + std::to_string(x.numel()) +
               "]");
  }
  const int64_t lines = v.outer * v.inner;
  if (lines == 0 || v.len == 0) return;
  struct {
    uint32_t total, L, inner, div_m, div_s;
  } push{};
  push.total = U32(lines, op, y, "lines");
  push.L = U32(v.len, op, y, "axis length");
  push.inner = U32(v.inner, op, y, "inner size");
  SetDiv(push.inner, &push.div_m, &push.div_s);
  const std::string s = detail::VariantStem(op, detail::NeedsExt({&x, &y}));
  detail::Launch(p, s.c_str(), {detail::InElems(x), Out(y)}, push, {exclusive ? 1u : 0u, xt, yt},
                 Grid1D(p.context(), lines, 64), y);
}

void TopK(Program& p, const Tensor& x, const Tensor* values, const Tensor* indices, int64_t k,
          int64_t axis, bool largest) {
  const char* op = "topk";
  if (!values && !indices) throw Error("topk of " + x.Describe() + ": no output requested");
  const Tensor& y = values ? *values : *indices;
  const uint32_t xt = DTypeCode(op, y, x);
  const int64_t ax = detail::NormAxis(axis, x.shape.size(), op, y);
  const AxisView v = ViewAround(x.shape, ax);
  if (k < 1 || k > v.len)
    Fail(op, y, "k = " + std::to_string(k) + " is outside [1, " + std::to_string(v.len) + "]");
  Shape expect = x.shape;
  expect[ax] = k;
  uint32_t it = 3;
  if (values) {
    detail::CheckSameDType(op, *values, {&x});
    if (values->shape != expect)
      Fail(op, *values,
           "values " + values->Describe() + " do not match the computed shape " +
               ShapeToString(expect));
  }
  if (indices) {
    it = DTypeCode(op, *indices, *indices);
    if (indices->dtype != DType::kInt64 && indices->dtype != DType::kInt32)
      Fail(op, *indices, "indices " + indices->Describe() + " must be int64 or int32");
    if (indices->shape != expect)
      Fail(op, *indices,
           "indices " + indices->Describe() + " do not match the computed shape " +
               ShapeToString(expect));
  }
  const int64_t total = x.numel();
  if (total == 0) return;
  struct {
    uint32_t total, L, inner, K, div_m[2], div_s[2];
  } push{};
  push.total = U32(total, op, y, "elements");
  push.L = U32(v.len, op, y, "axis length");
  push.inner = U32(v.inner, op, y, "inner size");
  push.K = U32(k, op, y, "k");
  SetDiv(push.inner, &push.div_m[0], &push.div_s[0]);
  SetDiv(push.L, &push.div_m[1], &push.div_s[1]);
  const Tensor& vt = values ? *values : *indices;
  const Tensor& itn = indices ? *indices : *values;
  // Index outputs are sign-extended pairs (no 64-bit arithmetic): x's dtype selects the variant.
  const std::string s = detail::VariantStem(op, detail::NeedsExt({&x}));
  detail::Launch(p, s.c_str(), {detail::InElems(x), Out(vt), Out(itn)}, push,
                 {largest ? 1u : 0u, xt, it, values ? 1u : 0u, indices ? 1u : 0u,
                  static_cast<uint32_t>(DTypeSize(x.dtype))},
                 Grid1D(p.context(), total, 64), y);
}

}  // namespace ops
}  // namespace msc_vk
