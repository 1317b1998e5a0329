#include "generator/frontend/onnx/const_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "generator/common/error.h"
#include "generator/common/float16.h"
#include "generator/frontend/onnx/node_attrs.h"
#include "generator/frontend/onnx/tensor_proto.h"
#include "generator/ir/attr_format.h"

namespace msc::frontend::onnx_import {

using weights::Tensor;

namespace {

bool IsIntDtype(const std::string& d) {
  return d == "int8" || d == "int16" || d == "int32" || d == "int64" || d == "uint8" || d == "bool";
}
bool IsFoldDtype(const std::string& d) { return IsIntDtype(d) || d == "float32" || d == "float64"; }

/// A folded value: integers exactly as int64, floats as double.
struct Arr {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> i;  ///< integer dtypes
  std::vector<double> f;   ///< float dtypes
  bool is_int() const { return IsIntDtype(dtype); }
  int64_t size() const { return is_int() ? static_cast<int64_t>(i.size()) : f.size(); }
  double at(int64_t k) const { return is_int() ? static_cast<double>(i[k]) : f[k]; }
};

/// Product of the dims; INT64_MAX when a dim is negative or the product overflows int64, so that
/// every "Numel(shape) > kMaxFoldElements" check refuses such shapes (shapes of folded values come
/// from the model's constants; found by tests/fuzz/fuzz_onnx).
/// A 0 dim makes the product 0 wherever it is, even after dims whose product overflows.
int64_t Numel(const std::vector<int64_t>& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end() &&
      std::none_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
    return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

Arr ToArr(const Tensor& t) {
  Arr a{t.dtype, t.shape, {}, {}};
  if (a.is_int())
    a.i = *TensorInts(t);
  else
    a.f = TensorDoubles(t);
  return a;
}

Tensor FromArr(const Arr& a) {
  return a.is_int() ? MakeIntTensor(a.dtype, a.shape, a.i) : MakeTensor(a.dtype, a.shape, a.f);
}

/// An empty Arr of `dtype` with room for `shape`.
Arr Like(const std::string& dtype, const std::vector<int64_t>& shape) {
  Arr r{dtype, shape, {}, {}};
  if (r.is_int())
    r.i.resize(Numel(shape));
  else
    r.f.resize(Numel(shape));
  return r;
}

void Set(Arr& r, int64_t k, double v) {
  if (r.is_int())
    r.i[k] = DoubleToInt64(v);
  else
    r.f[k] = v;
}

/// Copies element `src_k` of `a` to element `k` of `r` (same integer-ness: exact).
void CopyElem(Arr& r, int64_t k, const Arr& a, int64_t src_k) {
  if (r.is_int() && a.is_int())
    r.i[k] = a.i[src_k];
  else
    Set(r, k, a.at(src_k));
}

/// Row-major strides (elements) of `shape`. They fit in int64 whenever the element count does,
/// except for a tensor with no elements, whose other dims may multiply past int64 (found by
/// tests/fuzz/fuzz_onnx: signed overflow); such a tensor is never indexed, its strides read 0.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    if (__builtin_mul_overflow(s[d + 1], shape[d + 1], &s[d])) s[d] = 0;
  return s;
}

/// numpy broadcasting of several shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<const Arr*>& xs) {
  size_t rank = 0;
  for (auto* x : xs) rank = std::max(rank, x->shape.size());
  std::vector<int64_t> out(rank, 1);
  for (auto* x : xs)
    for (size_t k = 0; k < x->shape.size(); ++k) {
      int64_t& o = out[rank - x->shape.size() + k];
      int64_t d = x->shape[k];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  return out;
}

/// Index of output element `k` (of `out_shape`) in a broadcast input of shape `in_shape`.
int64_t BroadcastIndex(int64_t k, const std::vector<int64_t>& out_shape,
                       const std::vector<int64_t>& in_shape) {
  int64_t idx = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(out_shape.size()) - 1,
               e = static_cast<int64_t>(in_shape.size()) - 1;
       d >= 0; --d, --e) {
    const int64_t c = k % out_shape[d];
    k /= out_shape[d];
    if (e >= 0) {
      if (in_shape[e] != 1) idx += c * stride;
      stride *= in_shape[e];
    }
  }
  return idx;
}

int64_t NormAxis(int64_t axis, int64_t rank, const onnx::NodeProto& node) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw Error("node " + NodeLabel(node) + ": axis " + std::to_string(axis) +
                " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

using Fold = std::optional<std::vector<Tensor>>;

Fold One(const Arr& a) { return std::vector<Tensor>{FromArr(a)}; }

std::string BinaryDtype(const std::string& op, const Arr& a) {
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
std::vector<int64_t> Ints(const onnx::NodeProto& node, const Arr& a) {
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
Fold GatherAxis(const onnx::NodeProto& node, const Arr& data, const Arr& idx, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return std::nullopt;
  axis = NormAxis(axis, rank, node);
  std::vector<int64_t> out_shape(data.shape.begin(), data.shape.begin() + axis);
  out_shape.insert(out_shape.end(), idx.shape.begin(), idx.shape.end());
  out_shape.insert(out_shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (Numel(out_shape) > kMaxFoldElements) return std::nullopt;
  // No elements: done (the leading dims alone may multiply to ~2^63 loop steps).
  if (Numel(out_shape) == 0) return One(Like(data.dtype, out_shape));
  int64_t outer = Numel({data.shape.begin(), data.shape.begin() + axis});
  int64_t inner = Numel({data.shape.begin() + axis + 1, data.shape.end()});
  int64_t n = data.shape[axis];
  Arr r = Like(data.dtype, out_shape);
  std::vector<int64_t> ids = Ints(node, idx);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : ids) {
      if (j < -n || j >= n)
        throw Error("node " + NodeLabel(node) + ": index " + std::to_string(j) +
                    " out of range for axis of size " + std::to_string(n));
      if (j < 0) j += n;
      for (int64_t in = 0; in < inner; ++in) CopyElem(r, k++, data, (o * n + j) * inner + in);
    }
  return One(r);
}

Fold SliceArr(const onnx::NodeProto& node, const Arr& data, std::vector<int64_t> starts,
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
  Arr r = Like(data.dtype, out);
  auto in_strides = Strides(data.shape);
  const int64_t total = Numel(out);
  for (int64_t k = 0; k < total; ++k) {
    int64_t rem = k, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rem % out[d];
      rem /= out[d];
      src += (b[d] + c * st[d]) * in_strides[d];
    }
    CopyElem(r, k, data, src);
  }
  return One(r);
}

}  // namespace

bool FitsInt64(double x) { return x >= -9223372036854775808.0 && x < 9223372036854775808.0; }

int64_t DoubleToInt64(double x) {
  return FitsInt64(x) ? static_cast<int64_t>(x) : std::numeric_limits<int64_t>::min();
}

std::optional<std::vector<int64_t>> TensorInts(const Tensor& t) {
  const int64_t item = weights::DtypeItemSize(t.dtype);
  if (!IsIntDtype(t.dtype) || item == 0) return std::nullopt;
  const size_t n = t.data.size() / item;
  std::vector<int64_t> v(n);
  const uint8_t* p = t.data.data();
  for (size_t k = 0; k < n; ++k, p += item) {
    if (t.dtype == "int64") {
      int64_t x;
      std::memcpy(&x, p, 8);
      v[k] = x;
    } else if (t.dtype == "int32") {
      int32_t x;
      std::memcpy(&x, p, 4);
      v[k] = x;
    } else if (t.dtype == "int16") {
      int16_t x;
      std::memcpy(&x, p, 2);
      v[k] = x;
    } else if (t.dtype == "int8") {
      v[k] = static_cast<int8_t>(*p);
    } else {
      v[k] = *p;
    }  // uint8, bool
  }
  return v;
}

std::vector<double> TensorDoubles(const Tensor& t) {
  if (auto ints = TensorInts(t)) return {ints->begin(), ints->end()};
  const int64_t item = weights::DtypeItemSize(t.dtype);
  const size_t n = item ? t.data.size() / item : 0;
  std::vector<double> v(n);
  for (size_t k = 0; k < n; ++k) {
    const uint8_t* p = t.data.data() + k * item;
    if (t.dtype == "float32") {
      float x;
      std::memcpy(&x, p, 4);
      v[k] = x;
    } else if (t.dtype == "float64") {
      std::memcpy(&v[k], p, 8);
    } else if (t.dtype == "float16") {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v[k] = HalfToFloat(h);
    } else if (t.dtype == "bfloat16") {
      uint16_t h;
      std::memcpy(&h, p, 2);
      uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      v[k] = f;
    }
  }
  return v;
}

Tensor MakeIntTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& values) {
  if (!IsIntDtype(dtype)) {
    std::vector<double> d(values.begin(), values.end());
    return MakeTensor(dtype, shape, d);
  }
  Tensor t{dtype, shape, {}};
  const int64_t item = weights::DtypeItemSize(dtype);
  t.data.resize(values.size() * item);
  for (size_t k = 0; k < values.size(); ++k) {
    uint8_t* p = t.data.data() + k * item;
    const int64_t x = values[k];
    if (dtype == "int64")
      std::memcpy(p, &x, 8);
    else if (dtype == "int32") {
      int32_t y = static_cast<int32_t>(x);
      std::memcpy(p, &y, 4);
    } else if (dtype == "int16") {
      int16_t y = static_cast<int16_t>(x);
      std::memcpy(p, &y, 2);
    } else if (dtype == "bool")
      *p = x != 0;
    else
      *p = static_cast<uint8_t>(x);
  }
  return t;
}

namespace {
/// double -> float; beyond float's finite range gives +-inf (static_cast is undefined there:
/// UBSan float-cast-overflow), NaN stays NaN.
float ToFloat(double x) {
  if (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())
    return x > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  return static_cast<float>(x);
}
}  // namespace

Tensor MakeTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                  const std::vector<double>& values) {
  if (IsIntDtype(dtype)) {
    std::vector<int64_t> v;
    v.reserve(values.size());
    for (double x : values) v.push_back(dtype == "bool" ? (x != 0) : DoubleToInt64(x));
    return MakeIntTensor(dtype, shape, v);
  }
  Tensor t{dtype, shape, {}};
  const int64_t item = weights::DtypeItemSize(dtype);
  t.data.resize(values.size() * item);
  for (size_t k = 0; k < values.size(); ++k) {
    uint8_t* p = t.data.data() + k * item;
    if (dtype == "float64") {
      std::memcpy(p, &values[k], 8);
    } else if (dtype == "float32") {
      const float y = ToFloat(values[k]);
      std::memcpy(p, &y, 4);
    } else if (dtype == "float16" || dtype == "bfloat16") {
      // Through float, each step rounding to nearest even: exact for the float attributes and
      // small integers converters write; a double result of folding may round twice.
      const float y = ToFloat(values[k]);
      const uint16_t h = dtype == "float16" ? FloatToHalf(y) : FloatToBfloat16(y);
      std::memcpy(p, &h, 2);
    } else {
      throw Error("internal: MakeTensor does not write " + dtype);
    }
  }
  return t;
}

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
  std::vector<Arr> in;
  for (const Tensor* t : inputs) {
    if (t && !IsFoldDtype(t->dtype)) return std::nullopt;
    if (t && static_cast<int64_t>(t->data.size()) > kMaxFoldElements * 8) return std::nullopt;
    in.push_back(t ? ToArr(*t) : Arr{});
  }
  auto has = [&](size_t k) { return k < inputs.size() && inputs[k] != nullptr; };
  if (in.empty() && op != "Range") return std::nullopt;

  if (op == "Identity") return One(in[0]);
  if (op == "Cast") {
    std::string to = DtypeFromOnnx(static_cast<int>(attrs.Int("to", 0)));
    if (!IsFoldDtype(to)) return std::nullopt;
    Arr r = Like(to, in[0].shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      if (r.is_int() && in[0].is_int())
        r.i[k] = to == "bool" ? in[0].i[k] != 0 : in[0].i[k];
      else if (to == "bool")
        r.i[k] = in[0].at(k) != 0;
      else if (r.is_int() && !FitsInt64(in[0].at(k)))
        return std::nullopt;  // NaN, inf or beyond int64: ONNX leaves the result undefined
      else
        Set(r, k, r.is_int() ? std::trunc(in[0].at(k)) : in[0].at(k));
    }
    return One(r);
  }
  if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Floor" || op == "Ceil" || op == "Not" ||
      op == "Reciprocal") {
    const Arr& a = in[0];
    Arr r = Like(a.dtype, a.shape);
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
    Arr acc = in[0];
    const bool fmod_ = attrs.Int("fmod", 0) != 0;
    for (size_t n = 1; n < in.size(); ++n) {
      const Arr& b = in[n];
      if (acc.is_int() != b.is_int()) return std::nullopt;
      auto shape = Broadcast({&acc, &b});
      if (!shape || Numel(*shape) > kMaxFoldElements) return std::nullopt;
      Arr r = Like(BinaryDtype(op, acc), *shape);
      for (int64_t k = 0; k < r.size(); ++k) {
        int64_t ia = BroadcastIndex(k, *shape, acc.shape), ib = BroadcastIndex(k, *shape, b.shape);
        if (acc.is_int() && r.is_int() && r.dtype != "bool" && op != "Pow") {
          bool ok = true;
          r.i[k] = IntBinary(op, acc.i[ia], b.i[ib], fmod_, &ok);
          if (!ok) return std::nullopt;
        } else {
          Set(r, k, Binary(op, acc.at(ia), b.at(ib), acc.is_int(), fmod_));
        }
      }
      acc = std::move(r);
    }
    return One(acc);
  }
  if (op == "Where") {
    if (in.size() != 3 || in[1].is_int() != in[2].is_int()) return std::nullopt;
    auto shape = Broadcast({&in[0], &in[1], &in[2]});
    if (!shape || Numel(*shape) > kMaxFoldElements) return std::nullopt;
    Arr r = Like(in[1].dtype, *shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      bool c = in[0].at(BroadcastIndex(k, *shape, in[0].shape)) != 0;
      const Arr& s = c ? in[1] : in[2];
      CopyElem(r, k, s, BroadcastIndex(k, *shape, s.shape));
    }
    return One(r);
  }
  if (op == "Concat") {
    const int64_t rank = static_cast<int64_t>(in[0].shape.size());
    const int64_t axis = NormAxis(attrs.Int("axis", 0), rank, node);
    std::vector<int64_t> shape = in[0].shape;
    shape[axis] = 0;
    for (const Arr& a : in) {
      if (a.shape.size() != static_cast<size_t>(rank) || a.is_int() != in[0].is_int() ||
          __builtin_add_overflow(shape[axis], a.shape[axis], &shape[axis]))
        return std::nullopt;
    }
    if (Numel(shape) > kMaxFoldElements) return std::nullopt;
    Arr r = Like(in[0].dtype, shape);
    if (Numel(shape) == 0) return One(r);  // (the leading dims alone may be ~2^63 loop steps)
    const int64_t outer = Numel({shape.begin(), shape.begin() + axis});
    int64_t k = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const Arr& a : in) {
        int64_t chunk = Numel({a.shape.begin() + axis, a.shape.end()});
        for (int64_t j = 0; j < chunk; ++j) CopyElem(r, k++, a, o * chunk + j);
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
    Arr r = in[0];
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
    Arr r = in[0];
    std::vector<int64_t> shape;
    if (op == "Flatten") {
      const int64_t rank = static_cast<int64_t>(r.shape.size());
      int64_t axis = attrs.Int("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis > rank) return std::nullopt;
      shape = {Numel({r.shape.begin(), r.shape.begin() + axis}),
               Numel({r.shape.begin() + axis, r.shape.end()})};
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
    if (Numel(shape) != r.size())
      throw Error("node " + NodeLabel(node) + ": cannot reshape " + weights::FormatShape(r.shape) +
                  " to " + weights::FormatShape(shape));
    r.shape = shape;
    return One(r);
  }
  if (op == "Transpose") {
    const Arr& a = in[0];
    const int64_t rank = static_cast<int64_t>(a.shape.size());
    std::vector<int64_t> perm = attrs.Ints("perm");
    if (perm.empty())
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
    std::vector<int64_t> shape;
    for (int64_t p : perm) shape.push_back(a.shape[NormAxis(p, rank, node)]);
    auto in_strides = Strides(a.shape);
    Arr r = Like(a.dtype, shape);
    for (int64_t k = 0; k < r.size(); ++k) {
      int64_t rem = k, src = 0;
      for (int64_t d = rank - 1; d >= 0; --d) {
        src += (rem % shape[d]) * in_strides[perm[d] < 0 ? perm[d] + rank : perm[d]];
        rem /= shape[d];
      }
      CopyElem(r, k, a, src);
    }
    return One(r);
  }
  if (op == "Expand") {
    if (!has(1)) return std::nullopt;
    Arr target = Like("int64", {static_cast<int64_t>(in[1].size())});
    target.shape = Ints(node, in[1]);
    auto shape = Broadcast({&in[0], &target});
    if (!shape || Numel(*shape) > kMaxFoldElements) return std::nullopt;
    Arr r = Like(in[0].dtype, *shape);
    for (int64_t k = 0; k < r.size(); ++k)
      CopyElem(r, k, in[0], BroadcastIndex(k, *shape, in[0].shape));
    return One(r);
  }
  if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = Ints(node, in[0]);
    if (Numel(shape) > kMaxFoldElements) return std::nullopt;
    Tensor value = MakeTensor("float32", {1}, {0.0});
    if (const onnx::TensorProto* v = attrs.Tensor("value"))
      value = TensorFromProto(*v, "", "node " + NodeLabel(node) + " attribute 'value'");
    if (!IsFoldDtype(value.dtype)) return std::nullopt;
    Arr v = ToArr(value);
    Arr r = Like(v.dtype, shape);
    for (int64_t k = 0; k < r.size(); ++k) CopyElem(r, k, v, 0);
    return One(r);
  }
  if (op == "Range") {
    if (!has(0) || !has(1) || !has(2)) return std::nullopt;
    double start = in[0].at(0), limit = in[1].at(0), delta = in[2].at(0);
    if (delta == 0) return std::nullopt;
    const double count = std::ceil((limit - start) / delta);
    if (!(count <= static_cast<double>(kMaxFoldElements))) return std::nullopt;  // NaN, huge
    const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    Arr r = Like(in[0].dtype, {n});
    for (int64_t k = 0; k < n; ++k) {
      if (r.is_int())
        r.i[k] = in[0].i[0] + k * in[2].i[0];
      else
        r.f[k] = start + k * delta;
    }
    return One(r);
  }
  if (op == "Size") return One(Arr{"int64", {}, {in[0].size()}, {}});
  if (op == "Shape") {
    std::vector<int64_t> dims = in[0].shape;
    const int64_t rank = static_cast<int64_t>(dims.size());
    int64_t start = attrs.Int("start", 0), end = attrs.Int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> v(dims.begin() + start, dims.begin() + end);
    return One(Arr{"int64", {static_cast<int64_t>(v.size())}, v, {}});
  }
  if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
    const Arr& a = in[0];
    const int64_t rank = static_cast<int64_t>(a.shape.size());
    std::vector<int64_t> axes = (op == "ReduceSum" && opset >= 13)
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
    Arr r = Like(a.dtype, out_full);
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
        Set(r, dst, v);
      }
      seen[dst] = true;
    }
    r.shape = shape;
    return One(r);
  }
  return std::nullopt;
}

}  // namespace msc::frontend::onnx_import
