#include "generator/frontend/onnx/const_eval.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "generator/common/error.h"
#include "generator/frontend/onnx/node_attrs.h"
#include "generator/frontend/onnx/tensor_proto.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {

using weights::BroadcastIndex;
using weights::BroadcastShapes;
using weights::CopyValue;
using weights::FromValues;
using weights::SetValue;
using weights::ShapeNumel;
using weights::Strides;
using weights::Tensor;
using weights::ToValues;
using weights::Values;
using weights::ValuesLike;

namespace {

bool IsFoldDtype(const std::string& d) {
  return weights::IsIntDtype(d) || d == "float32" || d == "float64";
}

int64_t NormAxis(int64_t axis, int64_t rank, const onnx::NodeProto& node) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw Error("node " + NodeLabel(node) + ": axis " + std::to_string(axis) +
                " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

using Fold = std::optional<std::vector<Tensor>>;

Fold One(const Values& a) { return std::vector<Tensor>{FromValues(a)}; }

std::string BinaryDtype(const std::string& op, const Values& a) {
  static const std::set<std::string> kBool = {"Equal",          "Less", "Greater", "LessOrEqual",
                                              "GreaterOrEqual", "And",  "Or",      "Xor"};
  return kBool.count(op) ? "bool" : a.dtype;
}

double Binary(const std::string& op, double x, double y, bool ints, bool fmod_) {
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Div")
    return ints ? static_cast<double>(static_cast<int64_t>(x) / static_cast<int64_t>(y)) : x / y;
  if (op == "Mod") {
    if (fmod_ || !ints) return std::fmod(x, y);
    double r = std::fmod(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
  }
  if (op == "Pow") return std::pow(x, y);
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Equal") return x == y;
  if (op == "Less") return x < y;
  if (op == "Greater") return x > y;
  if (op == "LessOrEqual") return x <= y;
  if (op == "GreaterOrEqual") return x >= y;
  if (op == "And") return (x != 0) && (y != 0);
  if (op == "Or") return (x != 0) || (y != 0);
  if (op == "Xor") return (x != 0) != (y != 0);
  return 0;
}

int64_t IntBinary(const std::string& op, int64_t x, int64_t y, bool fmod_, bool* ok) {
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Div" || op == "Mod") {
    if (y == 0) {
      *ok = false;
      return 0;
    }
    if (op == "Div") return x / y;
    int64_t r = x % y;
    if (!fmod_ && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
  *ok = false;
  return 0;
}

/// The values of a shape / axes / indices input; float ones are truncated, and must lie within
/// int64 (found by tests/fuzz/fuzz_onnx: a float64 constant as Reshape's shape).
std::vector<int64_t> Ints(const onnx::NodeProto& node, const Values& a) {
  if (a.is_int()) return a.i;
  std::vector<int64_t> v;
  for (double x : a.f) {
    if (!FitsInt64(x))
      throw Error("node " + NodeLabel(node) + ": value " + ir::AttrDouble(x) +
                  " where an int64 is expected");
    v.push_back(static_cast<int64_t>(x));
  }
  return v;
}

/// Generic gather along `axis` with clamped/negative-wrapped indices (Gather semantics).
Fold GatherAxis(const onnx::NodeProto& node, const Values& data, const Values& idx, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return std::nullopt;
  axis = NormAxis(axis, rank, node);
  std::vector<int64_t> out_shape(data.shape.begin(), data.shape.begin() + axis);
  out_shape.insert(out_shape.end(), idx.shape.begin(), idx.shape.end());
  out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (ShapeNumel(out_shape) > kMaxFoldElements) return std::nullopt;
  // No elements: done (the leading dims alone may multiply to ~2^63 loop steps).
  if (ShapeNumel(out_shape) == 0) return One(ValuesLike(data.dtype, out_shape));
  int64_t outer = ShapeNumel({data.shape.begin(), data.shape.begin() + axis});
  int64_t inner = ShapeNumel({data.shape.begin() + axis + 1, data.shape.end()});
  int64_t n = data.shape[axis];
  Values r = ValuesLike(data.dtype, out_shape);
  std::vector<int64_t> ids = Ints(node, idx);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : ids) {
      if (j < -n || j >= n)
        throw Error("node " + NodeLabel(node) + ": index " + std::to_string(j) +
                    " out of range for axis of size " + std::to_string(n));
      if (j < 0) j += n;
      for (int64_t in = 0; in < inner; ++in) CopyValue(r, k++, data, (o * n + j) * inner + in);
    }
  return One(r);
}

Fold SliceArr(const onnx::NodeProto& node, const Values& data, std::vector<int64_t> starts,
              std::vector<int64_t> ends, std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return std::nullopt;
  std::vector<int64_t> b(rank, 0), st(rank, 1), out = data.shape;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t ax = NormAxis(axes[k], rank, node), n = data.shape[ax], s = steps[k];
    if (s == 0) return std::nullopt;
    int64_t lo = starts[k], hi = ends[k];
    if (lo < 0) lo += n;
    if (hi < 0) hi += n;
    if (s > 0) {
      lo = std::clamp<int64_t>(lo, 0, n);
      hi = std::clamp<int64_t>(hi, 0, n);
      out[ax] = hi > lo ? (hi - lo + s - 1) / s : 0;
    } else {
      lo = std::clamp<int64_t>(lo, -1, n - 1);
      hi = std::clamp<int64_t>(hi, -1, n - 1);
      out[ax] = lo > hi ? (lo - hi - s - 1) / (-s) : 0;
    }
    b[ax] = lo;
    st[ax] = s;
  }
  Values r = ValuesLike(data.dtype, out);
  auto in_strides = Strides(data.shape);
  const int64_t total = ShapeNumel(out);
  for (int64_t k = 0; k < total; ++k) {
    int64_t rem = k, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rem % out[d];
      rem /= out[d];
      src += (b[d] + c * st[d]) * in_strides[d];
    }
    CopyValue(r, k, data, src);
  }
  return One(r);
}

}  // namespace

bool CanFold(const std::string& op) {
  static const std::set<std::string> kOps = {"Identity",    "Cast",
                                             "Neg",         "Abs",
                                             "Sqrt",        "Floor",
                                             "Ceil",        "Not",
                                             "Reciprocal",  "Add",
                                             "Sub",         "Mul",
                                             "Div",         "Mod",
                                             "Pow",         "Max",
                                             "Min",         "Equal",
                                             "Less",        "Greater",
                                             "LessOrEqual", "GreaterOrEqual",
                                             "And",         "Or",
                                             "Xor",         "Where",
                                             "Concat",      "Gather",
                                             "Unsqueeze",   "Squeeze",
                                             "Slice",       "Reshape",
                                             "Flatten",     "Transpose",
                                             "Expand",      "ConstantOfShape",
                                             "Range",       "Size",
                                             "Shape",       "ReduceProd",
                                             "ReduceSum",   "ReduceMax",
                                             "ReduceMin"};
  return kOps.count(op) > 0;
}

std::optional<std::vector<Tensor>> FoldNode(const onnx::NodeProto& node,
                                            const std::vector<const Tensor*>& inputs,
                                            int64_t opset) {
  const std::string& op = node.op_type();
  NodeAttrs attrs(node);
  std::vector<Values> in;
  for (const Tensor* t : inputs) {
    if (t && !IsFoldDtype(t->dtype)) return std::nullopt;
    if (t && static_cast<int64_t>(t->data.size()) > kMaxFoldElements * 8) return std::nullopt;
    in.push_back(t ? ToValues(*t) : Values{});
  }
  auto has = [&](size_t k) { return k < inputs.size() && inputs[k] != nullptr; };
  if (in.empty() && op != "Range") return std::nullopt;

  if (op == "Identity") return One(in[0]);
  if (op == "Cast") {
    std::string to = DtypeFromOnnx(static_cast<int>(attrs.Int("to", 0)));
    if (!IsFoldDtype(to)) return std::nullopt;
    Values r = ValuesLike(to, in[0].shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      if (r.is_int() && in[0].is_int())
        r.i[k] = to == "bool" ? in[0].i[k] != 0 : in[0].i[k];
      else if (to == "bool")
        r.i[k] = in[0].at(k) != 0;
      else if (r.is_int() && !FitsInt64(in[0].at(k)))
        return std::nullopt;  // NaN, inf or beyond int64: ONNX leaves the result undefined
      else
        SetValue(r, k, r.is_int() ? std::trunc(in[0].at(k)) : in[0].at(k));
    }
    return One(r);
  }
  if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Floor" || op == "Ceil" || op == "Not" ||
      op == "Reciprocal") {
    const Values& a = in[0];
    Values r = ValuesLike(a.dtype, a.shape);
    for (int64_t k = 0; k < a.size(); ++k) {
      if (a.is_int()) {
        int64_t x = a.i[k];
        r.i[k] = op == "Neg" ? -x : op == "Abs" ? std::abs(x) : op == "Not" ? !x : x;
        if (op == "Sqrt" || op == "Reciprocal") return std::nullopt;
      } else {
        double x = a.f[k];
        r.f[k] = op == "Neg"     ? -x
                 : op == "Abs"   ? std::fabs(x)
                 : op == "Sqrt"  ? std::sqrt(x)
                 : op == "Floor" ? std::floor(x)
                 : op == "Ceil"  ? std::ceil(x)
                                 : 1.0 / x;
        if (op == "Not") return std::nullopt;
      }
    }
    return One(r);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Pow" ||
      op == "Max" || op == "Min" || op == "Equal" || op == "Less" || op == "Greater" ||
      op == "LessOrEqual" || op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor") {
    for (size_t k = 0; k < in.size(); ++k)
      if (!has(k)) return std::nullopt;
    Values acc = in[0];
    const bool fmod_ = attrs.Int("fmod", 0) != 0;
    for (size_t n = 1; n < in.size(); ++n) {
      const Values& b = in[n];
      if (acc.is_int() != b.is_int()) return std::nullopt;
      auto shape = BroadcastShapes({acc.shape, b.shape});
      if (!shape || ShapeNumel(*shape) > kMaxFoldElements) return std::nullopt;
      Values r = ValuesLike(BinaryDtype(op, acc), *shape);
      for (int64_t k = 0; k < r.size(); ++k) {
        int64_t ia = BroadcastIndex(k, *shape, acc.shape), ib = BroadcastIndex(k, *shape, b.shape);
        if (acc.is_int() && r.is_int() && r.dtype != "bool" && op != "Pow") {
          bool ok = true;
          r.i[k] = IntBinary(op, acc.i[ia], b.i[ib], fmod_, &ok);
          if (!ok) return std::nullopt;
        } else {
          SetValue(r, k, Binary(op, acc.at(ia), b.at(ib), acc.is_int(), fmod_));
        }
      }
      acc = std::move(r);
    }
    return One(acc);
  }
  if (op == "Where") {
    if (in.size() != 3 || in[1].is_int() != in[2].is_int()) return std::nullopt;
    auto shape = BroadcastShapes({in[0].shape, in[1].shape, in[2].shape});
    if (!shape || ShapeNumel(*shape) > kMaxFoldElements) return std::nullopt;
    Values r = ValuesLike(in[1].dtype, *shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      bool c = in[0].at(BroadcastIndex(k, *shape, in[0].shape)) != 0;
      const Values& s = c ? in[1] : in[2];
      CopyValue(r, k, s, BroadcastIndex(k, *shape, s.shape));
    }
    return One(r);
  }
  if (op == "Concat") {
    const int64_t rank = static_cast<int64_t>(in[0].shape.size());
    const int64_t axis = NormAxis(attrs.Int("axis", 0), rank, node);
    std::vector<int64_t> shape = in[0].shape;
    shape[axis] = 0;
    for (const Values& a : in) {
      if (a.shape.size() != static_cast<size_t>(rank) || a.is_int() != in[0].is_int() ||
          __builtin_add_overflow(shape[axis], a.shape[axis], &shape[axis]))
        return std::nullopt;
    }
    if (ShapeNumel(shape) > kMaxFoldElements) return std::nullopt;
    Values r = ValuesLike(in[0].dtype, shape);
    if (ShapeNumel(shape) == 0) return One(r);  // (the leading dims alone may be ~2^63 loop steps)
    const int64_t outer = ShapeNumel({shape.begin(), shape.begin() + axis});
    int64_t k = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const Values& a : in) {
        int64_t chunk = ShapeNumel({a.shape.begin() + axis, a.shape.end()});
        for (int64_t j = 0; j < chunk; ++j) CopyValue(r, k++, a, o * chunk + j);
      }
    return One(r);
  }
  if (op == "Gather") {
    if (!in[1].is_int()) return std::nullopt;
    return GatherAxis(node, in[0], in[1], attrs.Int("axis", 0));
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes =
        opset >= 13 ? (has(1) ? Ints(node, in[1]) : std::vector<int64_t>{}) : attrs.Ints("axes");
    Values r = in[0];
    if (op == "Unsqueeze") {
      const int64_t rank = static_cast<int64_t>(r.shape.size() + axes.size());
      std::vector<bool> add(rank, false);
      for (int64_t a : axes) add[NormAxis(a, rank, node)] = true;
      std::vector<int64_t> shape;
      for (int64_t d = 0, src = 0; d < rank; ++d) shape.push_back(add[d] ? 1 : r.shape[src++]);
      r.shape = shape;
    } else {
      const int64_t rank = static_cast<int64_t>(r.shape.size());
      std::vector<bool> drop(rank, false);
      for (int64_t a : axes) drop[NormAxis(a, rank, node)] = true;
      std::vector<int64_t> shape;
      for (int64_t d = 0; d < rank; ++d)
        if (!(axes.empty() ? r.shape[d] == 1 : drop[d])) shape.push_back(r.shape[d]);
      r.shape = shape;
    }
    return One(r);
  }
  if (op == "Slice") {
    if (opset < 10)
      return SliceArr(node, in[0], attrs.Ints("starts"), attrs.Ints("ends"), attrs.Ints("axes"),
                      {});
    if (!has(1) || !has(2)) return std::nullopt;
    return SliceArr(node, in[0], Ints(node, in[1]), Ints(node, in[2]),
                    has(3) ? Ints(node, in[3]) : std::vector<int64_t>{},
                    has(4) ? Ints(node, in[4]) : std::vector<int64_t>{});
  }
  if (op == "Reshape" || op == "Flatten") {
    Values r = in[0];
    std::vector<int64_t> shape;
    if (op == "Flatten") {
      const int64_t rank = static_cast<int64_t>(r.shape.size());
      int64_t axis = attrs.Int("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis > rank) return std::nullopt;
      shape = {ShapeNumel({r.shape.begin(), r.shape.begin() + axis}),
               ShapeNumel({r.shape.begin() + axis, r.shape.end()})};
    } else {
      if (!has(1)) return std::nullopt;
      shape = Ints(node, in[1]);
      const bool allowzero = attrs.Int("allowzero", 0) != 0;
      const std::vector<int64_t> target = shape;
      int64_t known = 1, infer = -1;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0 && !allowzero) shape[d] = d < r.shape.size() ? r.shape[d] : 0;
        if (shape[d] == -1 && infer < 0) {
          infer = static_cast<int64_t>(d);
        } else if (shape[d] < 0 || __builtin_mul_overflow(known, shape[d], &known)) {
          // a second -1, another negative dim, or more elements than int64 counts
          throw Error("node " + NodeLabel(node) + ": cannot reshape " +
                      weights::FormatShape(r.shape) + " to " + weights::FormatShape(target));
        }
      }
      if (infer >= 0) shape[infer] = known ? r.size() / known : 0;
    }
    if (ShapeNumel(shape) != r.size())
      throw Error("node " + NodeLabel(node) + ": cannot reshape " + weights::FormatShape(r.shape) +
                  " to " + weights::FormatShape(shape));
    r.shape = shape;
    return One(r);
  }
  if (op == "Transpose") {
    const Values& a = in[0];
    const int64_t rank = static_cast<int64_t>(a.shape.size());
    std::vector<int64_t> perm = attrs.Ints("perm");
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    // ONNX Transpose: perm is a permutation of 0..rank-1 (a repeated axis read past the data).
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    bool permutation = static_cast<int64_t>(perm.size()) == rank;
    for (int64_t& p : perm) {
      if (p < 0) p += rank;
      permutation = permutation && p >= 0 && p < rank && !seen[static_cast<size_t>(p)];
      if (p >= 0 && p < rank) seen[static_cast<size_t>(p)] = true;
    }
    if (!permutation)
      throw Error("node " + NodeLabel(node) + ": perm " + weights::FormatShape(attrs.Ints("perm")) +
                  " is not a permutation of the " + std::to_string(rank) + " axes");
    std::vector<int64_t> shape;
    for (int64_t p : perm) shape.push_back(a.shape[static_cast<size_t>(p)]);
    auto in_strides = Strides(a.shape);
    Values r = ValuesLike(a.dtype, shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      int64_t rem = k, src = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        src += (rem % shape[d]) * in_strides[perm[d]];
        rem /= shape[d];
      }
      CopyValue(r, k, a, src);
    }
    return One(r);
  }
  if (op == "Expand") {
    if (!has(1)) return std::nullopt;
    Values target = ValuesLike("int64", {static_cast<int64_t>(in[1].size())});
    target.shape = Ints(node, in[1]);
    auto shape = BroadcastShapes({in[0].shape, target.shape});
    if (!shape || ShapeNumel(*shape) > kMaxFoldElements) return std::nullopt;
    Values r = ValuesLike(in[0].dtype, *shape);
    for (int64_t k = 0; k < r.size(); ++k)
      CopyValue(r, k, in[0], BroadcastIndex(k, *shape, in[0].shape));
    return One(r);
  }
  if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = Ints(node, in[0]);
    if (ShapeNumel(shape) > kMaxFoldElements) return std::nullopt;
    Tensor value = MakeTensor("float32", {1}, {0.0});
    if (const onnx::TensorProto* v = attrs.Tensor("value"))
      value = TensorFromProto(*v, "", "node " + NodeLabel(node) + " attribute 'value'");
    if (!IsFoldDtype(value.dtype)) return std::nullopt;
    Values v = ToValues(value);
    Values r = ValuesLike(v.dtype, shape);
    for (int64_t k = 0; k < r.size(); ++k) CopyValue(r, k, v, 0);
    return One(r);
  }
  if (op == "Range") {
    if (!has(0) || !has(1) || !has(2)) return std::nullopt;
    double start = in[0].at(0), limit = in[1].at(0), delta = in[2].at(0);
    if (delta == 0) return std::nullopt;
    const double count = std::ceil((limit - start) / delta);
    if (!(count <= static_cast<double>(kMaxFoldElements))) return std::nullopt;  // NaN, huge
    const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    Values r = ValuesLike(in[0].dtype, {n});
    for (int64_t k = 0; k < n; ++k) {
      if (r.is_int())
        r.i[k] = in[0].i[0] + k * in[2].i[0];
      else
        r.f[k] = start + k * delta;
    }
    return One(r);
  }
  if (op == "Size") return One(Values{"int64", {}, {in[0].size()}, {}});
  if (op == "Shape") {
    std::vector<int64_t> dims = in[0].shape;
    const int64_t rank = static_cast<int64_t>(dims.size());
    int64_t start = attrs.Int("start", 0), end = attrs.Int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> v(dims.begin() + start, dims.begin() + end);
    return One(Values{"int64", {static_cast<int64_t>(v.size())}, v, {}});
  }
  if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
    const Values& a = in[0];
    const int64_t rank = static_cast<int64_t>(a.shape.size());
    std::vector<int64_t> axes = opset >= ReduceAxesInputSince(op)
                                    ? (has(1) ? Ints(node, in[1]) : std::vector<int64_t>{})
                                    : attrs.Ints("axes");
    if (axes.empty() && attrs.Int("noop_with_empty_axes", 0)) return One(a);
    std::vector<bool> red(rank, axes.empty());
    for (int64_t x : axes) red[NormAxis(x, rank, node)] = true;
    const bool keep = attrs.Int("keepdims", 1) != 0;
    std::vector<int64_t> out_full(rank), shape;
    for (int64_t d = 0; d < rank; ++d) {
      out_full[d] = red[d] ? 1 : a.shape[d];
      if (!red[d] || keep) shape.push_back(out_full[d]);
    }
    if (a.size() == 0) return std::nullopt;
    Values r = ValuesLike(a.dtype, out_full);
    std::vector<bool> seen(r.size(), false);
    for (int64_t k = 0; k < a.size(); ++k) {
      int64_t rem = k, dst = 0, stride = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t c = rem % a.shape[d];
        rem /= a.shape[d];
        if (!red[d]) dst += c * stride;
        stride *= out_full[d];
      }
      double x = a.at(k), cur = r.size() ? r.at(dst) : 0;
      double v = !seen[dst]           ? x
                 : op == "ReduceProd" ? cur * x
                 : op == "ReduceSum"  ? cur + x
                 : op == "ReduceMax"  ? std::max(cur, x)
                                      : std::min(cur, x);
      if (r.is_int() && a.is_int()) {
        int64_t xi = a.i[k], ci = r.i[dst];
        r.i[dst] = !seen[dst]           ? xi
                   : op == "ReduceProd" ? ci * xi
                   : op == "ReduceSum"  ? ci + xi
                   : op == "ReduceMax"  ? std::max(ci, xi)
                                        : std::min(ci, xi);
      } else {
        SetValue(r, dst, v);
      }
      seen[dst] = true;
    }
    r.shape = shape;
    return One(r);
  }
  return std::nullopt;
}

}  // namespace msc::frontend::onnx_import
