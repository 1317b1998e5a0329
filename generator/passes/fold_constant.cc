// Constant folding: nodes computed from constants only are evaluated at generation time (see
// passes.h for what is folded and when).
//
// Semantics are TVM v0.20 relax's (python/tvm/relax/op/{unary,binary,ternary,manipulate,index,
// create,datatype}.py; topi for the index arithmetic), as the torch backend reproduces them and as
// PyTorch computes them on the CPU:
//  - float32 / float16 arithmetic is done in float and rounded to the dtype once per op (torch's
//    CPU kernels compute half in float too), so + - * / and sqrt equal PyTorch's to the bit; the
//    transcendental functions (exp, log, sin, tanh, erf, power, ...) use the C library's float
//    versions, which may differ from PyTorch's vectorized ones in the last bit. float64 in double.
//    Values are held as double between ops (exact for every float16 / float32 value); double
//    arithmetic is used only where it is exact (comparisons, maximum / minimum, negative, abs,
//    floor / ceil / round, casts) or is what PyTorch does (arange: start + k * step in double,
//    torch's CPU accumulate type, rounded once).
//  - integers wrap to their dtype's width (two's complement) like TVM's and torch's kernels; an
//    integer division by zero, INT64_MIN / -1, and float -> int casts of NaN / inf / values out
//    of the target's range (undefined in C, TVM and torch alike) are not folded.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "generator/common/error.h"
#include "generator/common/float16.h"
#include "generator/opdef/opdef.h"
#include "generator/passes/graph_edit.h"
#include "generator/passes/passes.h"
#include "generator/weights/values.h"

namespace msc::passes {
namespace {

using ir::MSCGraph;
using ir::MSCJoint;
using ir::MSCTensor;
using weights::Values;
using Result = std::optional<std::vector<Values>>;

// ---- axes (attributes: AttrValue / IntAttr / IntsAttr of graph_edit.h) ------------------------

std::optional<int64_t> NormAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

// ---- elementwise arithmetic ---------------------------------------------------------------------

bool IsFloat(const std::string& d) { return d == "float32" || d == "float16" || d == "float64"; }

/// x rounded to float `dtype`: float32 to the nearest float; float16 to the nearest float, then
/// to the nearest half (the value a float computation stored as half has); float64 as is.
double RoundTo(const std::string& dtype, double x) {
  if (dtype == "float32") return weights::ToFloat(x);
  if (dtype == "float16") return HalfToFloat(FloatToHalf(weights::ToFloat(x)));
  return x;
}

/// f applied in the arithmetic of `dtype` (float for float32 / float16, double for float64) and
/// rounded to `dtype`. f is generic: it gets floats or doubles.
template <typename F>
double Apply1(const std::string& dtype, double x, F f) {
  if (dtype == "float64") return f(x);
  return RoundTo(dtype, static_cast<double>(f(static_cast<float>(x))));
}
template <typename F>
double Apply2(const std::string& dtype, double x, double y, F f) {
  if (dtype == "float64") return f(x, y);
  return RoundTo(dtype, static_cast<double>(f(static_cast<float>(x), static_cast<float>(y))));
}

/// One float unary op in `dtype`'s arithmetic; nullopt for an op it does not know.
std::optional<double> FloatUnary(const std::string& op, const std::string& dt, double x) {
  if (op == "negative") return -x;
  if (op == "abs") return std::fabs(x);
  if (op == "exp") return Apply1(dt, x, [](auto v) { return std::exp(v); });
  if (op == "log") return Apply1(dt, x, [](auto v) { return std::log(v); });
  if (op == "sqrt") return Apply1(dt, x, [](auto v) { return std::sqrt(v); });
  if (op == "rsqrt") return Apply1(dt, x, [](auto v) { return decltype(v)(1) / std::sqrt(v); });
  if (op == "sin") return Apply1(dt, x, [](auto v) { return std::sin(v); });
  if (op == "cos") return Apply1(dt, x, [](auto v) { return std::cos(v); });
  if (op == "tanh") return Apply1(dt, x, [](auto v) { return std::tanh(v); });
  if (op == "erf") return Apply1(dt, x, [](auto v) { return std::erf(v); });
  if (op == "sigmoid")
    return Apply1(dt, x, [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); });
  if (op == "square") return Apply1(dt, x, [](auto v) { return v * v; });
  if (op == "floor") return std::floor(x);
  if (op == "ceil") return std::ceil(x);
  if (op == "round") return std::nearbyint(x);  // half to even (the default rounding mode)
  if (op == "sign") return std::isnan(x) ? x : static_cast<double>((x > 0) - (x < 0));
  return std::nullopt;
}

/// One integer unary op, wrapped to `dt`; nullopt for an op it does not know.
std::optional<int64_t> IntUnary(const std::string& op, const std::string& dt, int64_t x) {
  const uint64_t u = static_cast<uint64_t>(x);
  if (dt == "bool") {
    if (op == "logical_not" || op == "bitwise_not") return x == 0;
    return std::nullopt;
  }
  if (op == "negative") return weights::WrapInt(dt, static_cast<int64_t>(0 - u));
  if (op == "abs") return weights::WrapInt(dt, x < 0 ? static_cast<int64_t>(0 - u) : x);
  if (op == "square") return weights::WrapInt(dt, static_cast<int64_t>(u * u));
  if (op == "sign") return (x > 0) - (x < 0);
  if (op == "bitwise_not") return weights::WrapInt(dt, static_cast<int64_t>(~u));
  return std::nullopt;
}

const std::set<std::string>& UnaryOps() {
  static const std::set<std::string> ops = {
      "negative", "abs",  "exp",         "log",         "sqrt",   "rsqrt", "sin",
      "cos",      "tanh", "erf",         "sigmoid",     "square", "floor", "ceil",
      "round",    "sign", "logical_not", "bitwise_not", "isnan",  "isinf", "isfinite"};
  return ops;
}

Result Unary(const std::string& op, const Values& a, const MSCTensor& out) {
  Values r = weights::ValuesLike(out.dtype, a.shape);
  const bool predicate = op == "isnan" || op == "isinf" || op == "isfinite";
  if ((predicate ? "bool" : a.dtype) != out.dtype) return std::nullopt;
  for (int64_t k = 0; k < a.size(); ++k) {
    if (predicate) {
      const double x = a.at(k);
      r.i[k] = op == "isnan" ? std::isnan(x) : op == "isinf" ? std::isinf(x) : std::isfinite(x);
    } else if (a.is_int()) {
      auto v = IntUnary(op, a.dtype, a.i[k]);
      if (!v) return std::nullopt;
      r.i[k] = *v;
    } else {
      auto v = FloatUnary(op, a.dtype, a.f[k]);
      if (!v) return std::nullopt;
      r.f[k] = *v;
    }
  }
  return std::vector<Values>{std::move(r)};
}

const std::set<std::string>& BinaryOps() {
  static const std::set<std::string> ops = {
      "add",           "subtract",     "multiply",   "divide",      "power",      "maximum",
      "minimum",       "floor_divide", "floor_mod",  "equal",       "not_equal",  "greater",
      "greater_equal", "less",         "less_equal", "logical_and", "logical_or", "logical_xor",
      "bitwise_and",   "bitwise_or",   "bitwise_xor"};
  return ops;
}

bool IsComparison(const std::string& op) {
  return op == "equal" || op == "not_equal" || op == "greater" || op == "greater_equal" ||
         op == "less" || op == "less_equal";
}

template <typename T>
bool Compare(const std::string& op, T x, T y) {
  if (op == "equal") return x == y;
  if (op == "not_equal") return x != y;
  if (op == "greater") return x > y;
  if (op == "greater_equal") return x >= y;
  if (op == "less") return x < y;
  return x <= y;  // less_equal
}

/// One float binary op in `dt`'s arithmetic; nullopt for an op it does not fold on floats.
std::optional<double> FloatBinary(const std::string& op, const std::string& dt, double x,
                                  double y) {
  if (op == "add") return Apply2(dt, x, y, [](auto a, auto b) { return a + b; });
  if (op == "subtract") return Apply2(dt, x, y, [](auto a, auto b) { return a - b; });
  if (op == "multiply") return Apply2(dt, x, y, [](auto a, auto b) { return a * b; });
  if (op == "divide") return Apply2(dt, x, y, [](auto a, auto b) { return a / b; });
  if (op == "power") return Apply2(dt, x, y, [](auto a, auto b) { return std::pow(a, b); });
  // maximum / minimum propagate NaN (torch.maximum, TVM's max of a NaN)
  if (op == "maximum") return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
  if (op == "minimum") return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
  // floor_divide / floor_mod of floats: TVM (floor(x / y)) and torch (fmod based) differ in
  // rounding; not folded.
  return std::nullopt;
}

/// One integer binary op wrapped to `dt` (not bool); nullopt where the result is undefined or the
/// op is not folded on integers.
std::optional<int64_t> IntBinary(const std::string& op, const std::string& dt, int64_t x,
                                 int64_t y) {
  const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  auto wrap = [&](uint64_t v) { return weights::WrapInt(dt, static_cast<int64_t>(v)); };
  if (op == "add") return wrap(ux + uy);
  if (op == "subtract") return wrap(ux - uy);
  if (op == "multiply") return wrap(ux * uy);
  if (op == "maximum") return std::max(x, y);
  if (op == "minimum") return std::min(x, y);
  if (op == "bitwise_and") return x & y;
  if (op == "bitwise_or") return x | y;
  if (op == "bitwise_xor") return x ^ y;
  if (op == "divide" || op == "floor_divide" || op == "floor_mod") {
    if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;
    const int64_t q = x / y, r = x % y;  // truncated (relax divide on integers: TIR Div)
    const bool adjust = r != 0 && ((r < 0) != (y < 0));
    if (op == "divide") return weights::WrapInt(dt, q);
    if (op == "floor_divide") return weights::WrapInt(dt, adjust ? q - 1 : q);
    return adjust ? r + y : r;  // floor_mod: the sign of y
  }
  return std::nullopt;
}

Result Binary(const std::string& op, const Values& a, const Values& b, const MSCTensor& out) {
  if (a.dtype != b.dtype) return std::nullopt;
  const bool logical = op == "logical_and" || op == "logical_or" || op == "logical_xor";
  const bool to_bool = logical || IsComparison(op);
  if (out.dtype != (to_bool ? "bool" : a.dtype)) return std::nullopt;
  if (logical && a.dtype != "bool") return std::nullopt;
  if (a.dtype == "bool" && !to_bool && op.rfind("bitwise_", 0) != 0) return std::nullopt;
  // (the declared shape is within the size guard; a broadcast shape could be far larger)
  auto shape = weights::BroadcastShapes({a.shape, b.shape});
  if (!shape || *shape != out.shape) return std::nullopt;
  Values r = weights::ValuesLike(out.dtype, *shape);
  for (int64_t k = 0; k < r.size(); ++k) {
    const int64_t ia = weights::BroadcastIndex(k, *shape, a.shape);
    const int64_t ib = weights::BroadcastIndex(k, *shape, b.shape);
    if (logical) {
      const bool x = a.i[ia] != 0, y = b.i[ib] != 0;
      r.i[k] = op == "logical_and" ? (x && y) : op == "logical_or" ? (x || y) : (x != y);
    } else if (IsComparison(op)) {
      r.i[k] = a.is_int() ? Compare(op, a.i[ia], b.i[ib]) : Compare(op, a.f[ia], b.f[ib]);
    } else if (a.is_int()) {
      auto v = IntBinary(op, a.dtype, a.i[ia], b.i[ib]);
      if (!v) return std::nullopt;
      r.i[k] = *v;
    } else {
      auto v = FloatBinary(op, a.dtype, a.f[ia], b.f[ib]);
      if (!v) return std::nullopt;
      r.f[k] = *v;
    }
  }
  return std::vector<Values>{std::move(r)};
}

/// condition ? x1 : x2 with the three broadcast together; the condition is true where nonzero.
Result Where(const Values& c, const Values& x, const Values& y, const MSCTensor& out) {
  if (x.dtype != y.dtype || x.dtype != out.dtype) return std::nullopt;
  auto shape = weights::BroadcastShapes({c.shape, x.shape, y.shape});
  if (!shape || *shape != out.shape) return std::nullopt;
  Values r = weights::ValuesLike(out.dtype, *shape);
  for (int64_t k = 0; k < r.size(); ++k) {
    const Values& s = c.at(weights::BroadcastIndex(k, *shape, c.shape)) != 0 ? x : y;
    weights::CopyValue(r, k, s, weights::BroadcastIndex(k, *shape, s.shape));
  }
  return std::vector<Values>{std::move(r)};
}

/// The range of an integer dtype, for float -> int casts.
std::pair<double, double> IntRange(const std::string& dt) {
  if (dt == "int8") return {-128, 127};
  if (dt == "int16") return {-32768, 32767};
  if (dt == "int32") return {-2147483648.0, 2147483647.0};
  if (dt == "uint8") return {0, 255};
  return {-9223372036854775808.0, 9223372036854775807.0};  // int64 (FitsInt64 decides)
}

/// astype: float -> int truncates toward zero (NaN, inf and values out of the target's range are
/// undefined: not folded); any -> bool is "nonzero"; int -> int wraps; int -> float rounds once
/// (int -> float16 through float, as c10::Half does); float -> float rounds once (float64 ->
/// float16 through float, as torch's .half() of a double does).
std::optional<Values> Cast(const Values& a, const std::string& to) {
  if (!weights::IsIntDtype(to) && !IsFloat(to)) return std::nullopt;
  Values r = weights::ValuesLike(to, a.shape);
  for (int64_t k = 0; k < a.size(); ++k) {
    if (to == "bool") {
      r.i[k] = a.is_int() ? a.i[k] != 0 : a.f[k] != 0;
    } else if (r.is_int() && a.is_int()) {
      r.i[k] = weights::WrapInt(to, a.i[k]);
    } else if (r.is_int()) {
      const double t = std::trunc(a.f[k]);
      const auto [lo, hi] = IntRange(to);
      if (!weights::FitsInt64(t) || t < lo || t > hi) return std::nullopt;
      r.i[k] = static_cast<int64_t>(t);
    } else if (a.is_int()) {
      if (to == "float64")
        r.f[k] = static_cast<double>(a.i[k]);
      else
        r.f[k] = RoundTo(to, static_cast<double>(static_cast<float>(a.i[k])));
    } else {
      r.f[k] = RoundTo(to, a.f[k]);
    }
  }
  return r;
}

// ---- shape and index ops ------------------------------------------------------------------------

/// The same values with the output's shape (reshape, squeeze, expand_dims: row-major data kept).
Result Reshape(const Values& a, const MSCTensor& out) {
  if (a.dtype != out.dtype || a.size() != out.Numel()) return std::nullopt;
  Values r = a;
  r.shape = out.shape;
  return std::vector<Values>{std::move(r)};
}

/// permute_dims: out.shape[d] = x.shape[axes[d]] (axes null: reversed).
Result Permute(const MSCJoint& n, const Values& a) {
  const int64_t rank = static_cast<int64_t>(a.shape.size());
  std::vector<int64_t> axes;
  if (auto given = IntsAttr(n, "axes")) {
    axes = *given;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) axes.push_back(d);
  }
  if (static_cast<int64_t>(axes.size()) != rank) return std::nullopt;
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> shape;
  for (auto& ax : axes) {
    auto d = NormAxis(ax, rank);
    if (!d || seen[*d]) return std::nullopt;
    seen[*d] = true;
    ax = *d;
    shape.push_back(a.shape[ax]);
  }
  const std::vector<int64_t> in_strides = weights::Strides(a.shape);
  Values r = weights::ValuesLike(a.dtype, shape);
  for (int64_t k = 0; k < r.size(); ++k) {
    int64_t rem = k, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      src += (rem % shape[d]) * in_strides[axes[d]];
      rem /= shape[d];
    }
    weights::CopyValue(r, k, a, src);
  }
  return std::vector<Values>{std::move(r)};
}

Result BroadcastTo(const Values& a, const MSCTensor& out) {
  auto shape = weights::BroadcastShapes({a.shape, out.shape});
  if (!shape || *shape != out.shape || a.dtype != out.dtype) return std::nullopt;
  Values r = weights::ValuesLike(a.dtype, out.shape);
  for (int64_t k = 0; k < r.size(); ++k)
    weights::CopyValue(r, k, a, weights::BroadcastIndex(k, out.shape, a.shape));
  return std::vector<Values>{std::move(r)};
}

Result Concat(const MSCJoint& n, const std::vector<Values>& in) {
  if (in.empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0].shape.size());
  auto axis = NormAxis(IntAttr(n, "axis", 0), rank);
  if (!axis) return std::nullopt;
  std::vector<int64_t> shape = in[0].shape;
  shape[*axis] = 0;
  for (const Values& a : in) {
    if (static_cast<int64_t>(a.shape.size()) != rank || a.dtype != in[0].dtype) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && a.shape[d] != shape[d]) return std::nullopt;
    if (__builtin_add_overflow(shape[*axis], a.shape[*axis], &shape[*axis])) return std::nullopt;
  }
  Values r = weights::ValuesLike(in[0].dtype, shape);
  if (r.size() == 0) return std::vector<Values>{std::move(r)};
  const int64_t outer = weights::ShapeNumel({shape.begin(), shape.begin() + *axis});
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Values& a : in) {
      const int64_t chunk = weights::ShapeNumel({a.shape.begin() + *axis, a.shape.end()});
      for (int64_t j = 0; j < chunk; ++j) weights::CopyValue(r, k++, a, o * chunk + j);
    }
  return std::vector<Values>{std::move(r)};
}

/// The part [begin, begin + len) of a along `axis`.
Values Slice(const Values& a, int64_t axis, int64_t begin, int64_t len) {
  std::vector<int64_t> shape = a.shape;
  shape[axis] = len;
  Values r = weights::ValuesLike(a.dtype, shape);
  if (r.size() == 0) return r;  // (the other dims alone may be ~2^63 loop steps)
  const int64_t outer = weights::ShapeNumel({a.shape.begin(), a.shape.begin() + axis});
  const int64_t inner = weights::ShapeNumel({a.shape.begin() + axis + 1, a.shape.end()});
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < len * inner; ++j)
      weights::CopyValue(r, k++, a, (o * a.shape[axis] + begin) * inner + j);
  return r;
}

/// split: indices_or_sections "N" (no comma) = N sections of ceil(n / N) (the last smaller),
/// "a,b," = pieces [0, a), [a, b), [b, n) (relax split, src/relax/op/tensor/manipulate.cc).
Result Split(const MSCJoint& n, const Values& a) {
  const int64_t rank = static_cast<int64_t>(a.shape.size());
  auto axis = NormAxis(IntAttr(n, "axis", 0), rank);
  const std::string* spec = n.FindAttr("indices_or_sections");
  if (!axis || !spec) return std::nullopt;
  const int64_t len = a.shape[*axis];
  std::vector<int64_t> bounds;  // piece starts, then len
  if (spec->find(',') == std::string::npos) {
    const int64_t sections = IntAttr(n, "indices_or_sections", 0);
    if (sections <= 0 || static_cast<size_t>(sections) != n.outputs.size()) return std::nullopt;
    const int64_t step = (len + sections - 1) / sections;
    for (int64_t s = 0; s < sections; ++s) bounds.push_back(std::min(s * step, len));
  } else {
    auto indices = IntsAttr(n, "indices_or_sections");
    if (!indices) return std::nullopt;
    bounds.push_back(0);
    for (int64_t i : *indices) {
      if (i < 0) i += len;
      bounds.push_back(std::clamp<int64_t>(i, 0, len));
    }
  }
  bounds.push_back(len);
  std::vector<Values> parts;
  for (size_t p = 0; p + 1 < bounds.size(); ++p)
    parts.push_back(Slice(a, *axis, bounds[p], std::max<int64_t>(bounds[p + 1] - bounds[p], 0)));
  return parts;
}

/// TVM's canonical slice index (topi/detail/strided_slice.h CanonicalizeIndex).
int64_t CanonicalIndex(int64_t index, int64_t extent, int64_t stride) {
  if (index < 0) index += extent;
  return std::clamp<int64_t>(index, stride < 0 ? -1 : 0, stride < 0 ? extent - 1 : extent);
}

/// strided_slice: x[begin:end:strides] on `axes`, indices canonicalized as TVM does.
Result StridedSlice(const MSCJoint& n, const Values& a) {
  const int64_t rank = static_cast<int64_t>(a.shape.size());
  auto axes = IntsAttr(n, "axes");
  auto begin = IntsAttr(n, "begin");
  auto end = IntsAttr(n, "end");
  auto strides = IntsAttr(n, "strides");
  if (!axes || !begin || !end) return std::nullopt;
  if (!strides) strides = std::vector<int64_t>(axes->size(), 1);
  if (begin->size() != axes->size() || end->size() != axes->size() ||
      strides->size() != axes->size())
    return std::nullopt;
  std::vector<int64_t> b(rank, 0), st(rank, 1), shape = a.shape;
  for (size_t i = 0; i < axes->size(); ++i) {
    auto d = NormAxis((*axes)[i], rank);
    const int64_t s = (*strides)[i];
    if (!d || s == 0 || s == INT64_MIN) return std::nullopt;
    const int64_t lo = CanonicalIndex((*begin)[i], a.shape[*d], s);
    const int64_t hi = CanonicalIndex((*end)[i], a.shape[*d], s);
    const int64_t span = s > 0 ? hi - lo : lo - hi;
    shape[*d] = span > 0 ? (span + std::abs(s) - 1) / std::abs(s) : 0;
    b[*d] = lo;
    st[*d] = s;
  }
  const std::vector<int64_t> in_strides = weights::Strides(a.shape);
  Values r = weights::ValuesLike(a.dtype, shape);
  for (int64_t k = 0; k < r.size(); ++k) {
    int64_t rem = k, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      src += (b[d] + (rem % shape[d]) * st[d]) * in_strides[d];
      rem /= shape[d];
    }
    weights::CopyValue(r, k, a, src);
  }
  return std::vector<Values>{std::move(r)};
}

/// take: x indexed by `indices` along `axis` (null: of the flattened x). mode fast: an index
/// in [-n, n) (negative from the end, as the torch backend indexes), else not folded; clip:
/// clamped to [0, n - 1]; wrap: modulo n.
Result Take(const MSCJoint& n, const Values& x, const Values& idx, const MSCTensor& out) {
  if (!idx.is_int() || idx.dtype == "bool") return std::nullopt;
  const opdef::Json axis_attr = AttrValue(n, "axis", opdef::AttrType::kInt);
  const std::string mode = n.FindAttr("mode") && !n.FindAttr("mode")->empty() ? *n.FindAttr("mode")
                                                                              : std::string("fast");
  Values data = x;
  int64_t axis = 0;
  if (axis_attr.is_null()) {
    data.shape = {x.size()};
  } else {
    auto d = NormAxis(axis_attr.get<int64_t>(), static_cast<int64_t>(x.shape.size()));
    if (!d) return std::nullopt;
    axis = *d;
  }
  const int64_t len = data.shape[axis];
  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), idx.shape.begin(), idx.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  if (shape != out.shape) return std::nullopt;  // (the declared shape is within the size guard)
  Values r = weights::ValuesLike(x.dtype, shape);
  if (r.size() == 0) return std::vector<Values>{std::move(r)};
  if (len == 0) return std::nullopt;
  const int64_t outer = weights::ShapeNumel({data.shape.begin(), data.shape.begin() + axis});
  const int64_t inner = weights::ShapeNumel({data.shape.begin() + axis + 1, data.shape.end()});
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : idx.i) {
      if (mode == "clip") {
        j = std::clamp<int64_t>(j, 0, len - 1);
      } else if (mode == "wrap") {
        j = ((j % len) + len) % len;
      } else if (mode == "fast" && j >= -len && j < len) {
        j = j < 0 ? j + len : j;
      } else {
        return std::nullopt;
      }
      for (int64_t in = 0; in < inner; ++in)
        weights::CopyValue(r, k++, data, (o * len + j) * inner + in);
    }
  return std::vector<Values>{std::move(r)};
}

/// tril (upper = false) / triu (upper = true) over the last two dims: element [.., i, j] is kept
/// where j - i <= k (tril) or j - i >= k (triu), else 0.
Result Triangle(const Values& a, bool upper, int64_t diag) {
  const int64_t rank = static_cast<int64_t>(a.shape.size());
  if (rank < 2) return std::nullopt;
  const int64_t rows = a.shape[rank - 2], cols = a.shape[rank - 1];
  Values r = a;
  for (int64_t k = 0; k < r.size(); ++k) {
    const int64_t j = k % cols, i = (k / cols) % rows;
    if (upper ? j - i < diag : j - i > diag) weights::SetValue(r, k, 0);
  }
  return std::vector<Values>{std::move(r)};
}

/// A 0-d int64 value.
Values Scalar(int64_t v) { return {"int64", {}, {v}, {}}; }

/// full / ones / zeros: `value` (a Values of one element) cast to out.dtype, out.shape.
Result Fill(const Values& value, const MSCTensor& out) {
  if (value.size() != 1) return std::nullopt;
  auto v = Cast(value, out.dtype);
  if (!v) return std::nullopt;
  Values r = weights::ValuesLike(out.dtype, out.shape);
  for (int64_t k = 0; k < r.size(); ++k) weights::CopyValue(r, k, *v, 0);
  return std::vector<Values>{std::move(r)};
}

/// arange: start + k * step for k < ceil((end - start) / step). Floats: each element computed in
/// double and rounded once (torch's CPU arange, accumulate type double); integers: start and step
/// must be integral (else not folded, as the torch backend refuses them).
Result Arange(const MSCJoint& n, const MSCTensor& out) {
  const opdef::Json end_attr = AttrValue(n, "end", opdef::AttrType::kFloat);
  if (end_attr.is_null() || out.shape.size() != 1) return std::nullopt;
  const opdef::Json start_attr = AttrValue(n, "start", opdef::AttrType::kFloat);
  const opdef::Json step_attr = AttrValue(n, "step", opdef::AttrType::kFloat);
  const double start = start_attr.is_null() ? 0.0 : start_attr.get<double>();
  const double step = step_attr.is_null() ? 1.0 : step_attr.get<double>();
  const double end = end_attr.get<double>();
  const double count = std::ceil((end - start) / step);
  if (step == 0 || !std::isfinite(count) || std::max(count, 0.0) != out.shape[0])
    return std::nullopt;
  Values r = weights::ValuesLike(out.dtype, out.shape);
  if (r.is_int()) {
    if (out.dtype == "bool" || start != std::trunc(start) || step != std::trunc(step) ||
        !weights::FitsInt64(start) || !weights::FitsInt64(step))
      return std::nullopt;
    // start + k * step modulo 2^64 (unsigned: no overflow), then wrapped to the dtype
    const uint64_t s0 = static_cast<uint64_t>(static_cast<int64_t>(start));
    const uint64_t ds = static_cast<uint64_t>(static_cast<int64_t>(step));
    for (int64_t k = 0; k < r.size(); ++k)
      r.i[k] =
          weights::WrapInt(out.dtype, static_cast<int64_t>(s0 + static_cast<uint64_t>(k) * ds));
  } else {
    for (int64_t k = 0; k < r.size(); ++k) r.f[k] = RoundTo(out.dtype, start + k * step);
  }
  return std::vector<Values>{std::move(r)};
}

/// Optypes folded with no inputs (their attrs define the result).
const std::set<std::string>& SourceOps() {
  static const std::set<std::string> ops = {"ones", "zeros", "arange"};
  return ops;
}

/// Every optype the pass evaluates.
bool Foldable(const std::string& op) {
  static const std::set<std::string> ops = {
      "reshape", "squeeze",  "expand_dims",  "permute_dims",  "transpose",
      "astype",  "cast",     "broadcast_to", "concat",        "concatenate",
      "split",   "get_item", "tuple",        "strided_slice", "take",
      "where",   "tril",     "triu",         "trilu",         "full",
      "ones",    "zeros",    "arange",       "ones_like",     "zeros_like"};
  return ops.count(op) || UnaryOps().count(op) || BinaryOps().count(op);
}

/// The node's results on constant inputs `in`, one per output; nullopt when not folded.
Result Evaluate(const MSCJoint& n, const std::vector<Values>& in) {
  const std::string& op = n.optype;
  const MSCTensor& out = n.outputs[0];
  auto arity = [&](size_t k) { return in.size() == k; };
  if (UnaryOps().count(op)) return arity(1) ? Unary(op, in[0], out) : std::nullopt;
  if (BinaryOps().count(op)) return arity(2) ? Binary(op, in[0], in[1], out) : std::nullopt;
  if (op == "where") return arity(3) ? Where(in[0], in[1], in[2], out) : std::nullopt;
  if (op == "reshape" || op == "squeeze" || op == "expand_dims")
    return arity(1) ? Reshape(in[0], out) : std::nullopt;
  if (op == "permute_dims" || op == "transpose") return arity(1) ? Permute(n, in[0]) : std::nullopt;
  if (op == "astype" || op == "cast") {
    if (!arity(1)) return std::nullopt;
    auto r = Cast(in[0], out.dtype);
    return r ? Result(std::vector<Values>{std::move(*r)}) : std::nullopt;
  }
  if (op == "broadcast_to") return arity(1) ? BroadcastTo(in[0], out) : std::nullopt;
  if (op == "concat" || op == "concatenate") return Concat(n, in);
  if (op == "split") return arity(1) ? Split(n, in[0]) : std::nullopt;
  if (op == "tuple") return in;
  if (op == "get_item") {
    const int64_t index = IntAttr(n, "index", -1);
    if (index < 0 || index >= static_cast<int64_t>(in.size())) return std::nullopt;
    return std::vector<Values>{in[index]};
  }
  if (op == "strided_slice") return arity(1) ? StridedSlice(n, in[0]) : std::nullopt;
  if (op == "take") return arity(2) ? Take(n, in[0], in[1], out) : std::nullopt;
  if (op == "tril" || op == "triu" || op == "trilu") {
    if (!arity(1)) return std::nullopt;
    const opdef::Json upper = AttrValue(n, "upper", opdef::AttrType::kBool);
    return Triangle(in[0],
                    op == "triu" || (op == "trilu" && (upper.is_null() || upper.get<bool>())),
                    IntAttr(n, "k", 0));
  }
  if (op == "full") return arity(1) ? Fill(in[0], out) : std::nullopt;
  if (op == "ones" || op == "zeros")
    return arity(0) ? Fill(Scalar(op == "ones"), out) : std::nullopt;
  if (op == "ones_like" || op == "zeros_like")  // x's values do not matter, only its shape
    return arity(1) ? Fill(Scalar(op == "ones_like"), out) : std::nullopt;
  if (op == "arange") return arity(0) ? Arange(n, out) : std::nullopt;
  return std::nullopt;
}

// ---- the pass -----------------------------------------------------------------------------------

/// Whether `t` is a tensor this pass computes with: a static shape (no -1, no overflow) and one of
/// the dtypes it evaluates.
bool Evaluable(const MSCTensor& t) {
  return t.Numel() >= 0 && (IsFloat(t.dtype) || weights::IsIntDtype(t.dtype));
}

/// A `constant` node producing `output` from the weight tensor `weight`.
MSCJoint ConstantNode(const std::string& name, MSCTensor output, const MSCTensor& weight) {
  MSCJoint c;
  c.name = name;
  c.optype = "constant";
  c.outputs = {std::move(output)};
  c.weights = {{"const", weight}};
  return c;
}

}  // namespace

std::vector<Folded> FoldConstant(MSCGraph& graph, weights::TensorMap& weights) {
  const std::set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::set<std::string> weight_names, node_names, shared_refs;
  std::map<std::string, size_t> position;  // node -> its position in the input graph
  for (const auto& n : graph.nodes) {
    position.emplace(n.name, position.size());
    node_names.insert(n.name);
    if (!n.shared_ref.empty()) shared_refs.insert(n.shared_ref);
    for (const auto& [role, w] : n.weights) weight_names.insert(w.name);
  }
  for (const auto& [name, t] : weights) weight_names.insert(name);

  // Tensors produced by constant nodes whose weight is bound and matches: tensor -> weight name.
  std::map<std::string, std::string> const_of;
  for (const auto& n : graph.nodes)
    if (BoundConstant(n, weights) && Evaluable(n.outputs[0]))
      const_of[n.outputs[0].name] = n.FindWeight("const")->name;

  struct Record {
    size_t pos;  ///< the folded node's position in the input graph
    Folded folded;
  };
  std::vector<Record> records;
  std::map<std::string, std::string> rename;  // outputs of folded multi-output nodes -> constants
  std::map<size_t, std::vector<MSCJoint>>
      replaced;  // position -> its constant nodes (multi-output)
  // constant tensor -> the first folded node whose value it became part of / that read it
  std::map<std::string, std::string> absorbed, also_read;
  std::set<std::string> created;  // the constants of multi-output nodes
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    MSCJoint& n = graph.nodes[i];
    if (n.optype == "constant" || n.optype == "input" || !Foldable(n.optype) || n.outputs.empty() ||
        (n.inputs.empty() && !SourceOps().count(n.optype)))
      continue;
    std::vector<std::string> ins;
    bool all_const = true;
    for (const auto& in : n.inputs) {
      auto r = rename.find(in);
      ins.push_back(r == rename.end() ? in : r->second);
      all_const = all_const && const_of.count(ins.back());
    }
    if (!all_const) continue;
    const bool multi = n.outputs.size() > 1 || n.optype == "tuple" || n.optype == "split";
    // Static outputs of evaluable dtypes, with elements (a weight of 0 bytes is no buffer a
    // backend can make), none a graph output when they get new names, within the size guard
    // (sizes from the declared shapes, before anything is computed).
    int64_t out_bytes = 0, in_bytes = 0;
    bool ok = true;
    for (const auto& t : n.outputs) {
      int64_t bytes = 0;
      ok = ok && Evaluable(t) && t.Numel() > 0 && !(multi && graph_outputs.count(t.name)) &&
           !__builtin_mul_overflow(t.Numel(), MSCTensor::DtypeBytes(t.dtype), &bytes) &&
           !__builtin_add_overflow(out_bytes, bytes, &out_bytes);
    }
    for (const auto& in : ins)
      in_bytes += static_cast<int64_t>(weights.at(const_of[in]).data.size());
    if (!ok || out_bytes > std::max(kFoldConstantMinLimitBytes, 2 * in_bytes)) continue;

    std::vector<Values> in_values;
    for (const auto& in : ins) in_values.push_back(weights::ToValues(weights.at(const_of[in])));
    Result results;
    try {
      results = Evaluate(n, in_values);
    } catch (const Error&) {
      continue;  // an attribute that does not parse: left for the backend to report
    }
    if (!results || results->size() != n.outputs.size()) continue;
    for (size_t k = 0; k < results->size(); ++k)
      ok = ok && (*results)[k].dtype == n.outputs[k].dtype &&
           (*results)[k].shape == n.outputs[k].shape;
    if (!ok) continue;

    // The constants: one per output, each with its weight (an input's weight tensor when the
    // result is that tensor unchanged, as for get_item / tuple, else a new one).
    std::vector<MSCJoint> constants;
    for (size_t k = 0; k < results->size(); ++k) {
      weights::Tensor t = weights::FromValues((*results)[k]);
      const std::string cname =
          multi ? UniqueName(n.name + ".out" + std::to_string(k), node_names) : n.name;
      MSCTensor w;
      for (const auto& in : ins)
        if (weights.at(const_of[in]) == t) w.name = const_of[in];
      if (w.name.empty()) {
        w.name = UniqueName(cname + ".folded", weight_names);
        weights[w.name] = std::move(t);
      }
      w.dtype = n.outputs[k].dtype;
      w.layout = n.outputs[k].layout;
      w.shape = n.outputs[k].shape;
      MSCTensor output = n.outputs[k];
      if (multi) {
        output.name = cname + ":0";
        rename[n.outputs[k].name] = output.name;
      }
      const_of[output.name] = w.name;
      constants.push_back(ConstantNode(cname, std::move(output), w));
      records.push_back({i, {"fold_constant", n.name, cname}});
    }
    // The constants read become part of this node's value (get_item: only the field it selects).
    const int64_t index = n.optype == "get_item" ? IntAttr(n, "index", 0) : -1;
    for (size_t k = 0; k < ins.size(); ++k)
      (index < 0 || static_cast<int64_t>(k) == index ? absorbed : also_read)
          .emplace(ins[k], constants[0].name);
    if (multi)
      for (const auto& c : constants) created.insert(c.name);
    if (multi) {
      replaced[i] = std::move(constants);
    } else {
      constants[0].index = n.index;
      constants[0].extra = std::move(n.extra);
      n = std::move(constants[0]);
    }
  }
  if (records.empty()) return {};

  // Rebuild the node list: multi-output nodes replaced by their constants, readers rewired.
  std::vector<MSCJoint> nodes;
  nodes.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    auto it = replaced.find(i);
    if (it != replaced.end()) {
      for (auto& c : it->second) nodes.push_back(std::move(c));
      continue;
    }
    MSCJoint n = std::move(graph.nodes[i]);
    RenameInputs(n, rename);
    nodes.push_back(std::move(n));
  }
  // Constants read by folded nodes and by nothing else now are dropped (unless a graph output or
  // named by a shared_ref); what went into them is recorded in the folded node that took them.
  std::set<std::string> read;
  for (const auto& n : nodes) read.insert(n.inputs.begin(), n.inputs.end());
  std::map<std::string, std::string> removed;  // node -> the constant its value went into
  std::vector<MSCJoint> kept;
  for (auto& n : nodes) {
    if (n.optype == "constant" && n.outputs.size() == 1) {
      const std::string& out = n.outputs[0].name;
      auto a = absorbed.find(out);
      auto b = also_read.find(out);
      const std::string* into = a != absorbed.end()    ? &a->second
                                : b != also_read.end() ? &b->second
                                                       : nullptr;
      if (into && !read.count(out) && !graph_outputs.count(out) && !shared_refs.count(n.name)) {
        removed[n.name] = *into;
        continue;
      }
    }
    n.index = static_cast<int64_t>(kept.size());
    kept.push_back(std::move(n));
  }
  // Records: every node folded or dropped, into the constant that holds its value now, in the
  // order of the input graph (a dropped constant of a multi-output node is no node of it: the
  // records of that node say where its outputs went).
  std::set<std::string> recorded;
  for (const auto& r : records) recorded.insert(r.folded.node);
  for (const auto& [name, into] : removed)
    if (!recorded.count(name) && !created.count(name))
      records.push_back({position.at(name), {"fold_constant", name, into}});
  for (auto& r : records)
    for (auto it = removed.find(r.folded.into); it != removed.end();
         it = removed.find(r.folded.into))
      r.folded.into = it->second;
  std::stable_sort(records.begin(), records.end(),
                   [](const Record& a, const Record& b) { return a.pos < b.pos; });
  std::vector<Folded> done;
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& r : records)
    if (seen.insert({r.folded.node, r.folded.into}).second) done.push_back(std::move(r.folded));

  graph.nodes = std::move(kept);
  graph.BuildIndex();
  DropUnusedWeights(graph, weights);
  return done;
}

}  // namespace msc::passes
