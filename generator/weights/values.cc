#include "generator/weights/values.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "generator/common/error.h"
#include "generator/common/float16.h"
#include "generator/ir/graph.h"

namespace msc::weights {

bool IsIntDtype(const std::string& d) {
  return d == "int8" || d == "int16" || d == "int32" || d == "int64" || d == "uint8" || d == "bool";
}

bool FitsInt64(double x) { return x >= -9223372036854775808.0 && x < 9223372036854775808.0; }

int64_t DoubleToInt64(double x) {
  return FitsInt64(x) ? static_cast<int64_t>(x) : std::numeric_limits<int64_t>::min();
}

float ToFloat(double x) {
  if (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())
    return x > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  return static_cast<float>(x);
}

int64_t WrapInt(const std::string& dtype, int64_t v) {
  // Through uint64: the conversions to the narrower types are then modulo 2^N ([conv.integral]).
  const uint64_t u = static_cast<uint64_t>(v);
  if (dtype == "int32") return static_cast<int32_t>(static_cast<uint32_t>(u));
  if (dtype == "int16") return static_cast<int16_t>(static_cast<uint16_t>(u));
  if (dtype == "int8") return static_cast<int8_t>(static_cast<uint8_t>(u));
  if (dtype == "uint8") return static_cast<uint8_t>(u);
  if (dtype == "bool") return v != 0;
  return v;
}

std::optional<std::vector<int64_t>> TensorInts(const Tensor& t) {
  const int64_t item = DtypeItemSize(t.dtype);
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
  const int64_t item = DtypeItemSize(t.dtype);
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
  const int64_t item = DtypeItemSize(dtype);
  t.data.resize(values.size() * item);
  for (size_t k = 0; k < values.size(); ++k) {
    uint8_t* p = t.data.data() + k * item;
    const int64_t x = values[k];
    if (dtype == "int64")
      std::memcpy(p, &x, 8);
    else if (dtype == "int32") {
      int32_t y = static_cast<int32_t>(WrapInt(dtype, x));
      std::memcpy(p, &y, 4);
    } else if (dtype == "int16") {
      int16_t y = static_cast<int16_t>(WrapInt(dtype, x));
      std::memcpy(p, &y, 2);
    } else if (dtype == "bool")
      *p = x != 0;
    else
      *p = static_cast<uint8_t>(static_cast<uint64_t>(x));
  }
  return t;
}

Tensor MakeTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                  const std::vector<double>& values) {
  if (IsIntDtype(dtype)) {
    std::vector<int64_t> v;
    v.reserve(values.size());
    for (double x : values) v.push_back(dtype == "bool" ? (x != 0) : DoubleToInt64(x));
    return MakeIntTensor(dtype, shape, v);
  }
  Tensor t{dtype, shape, {}};
  const int64_t item = DtypeItemSize(dtype);
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

int64_t ShapeNumel(const std::vector<int64_t>& shape) {
  const int64_t n = ir::ShapeNumel(shape);
  return n < 0 ? std::numeric_limits<int64_t>::max() : n;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    if (__builtin_mul_overflow(s[d + 1], shape[d + 1], &s[d])) s[d] = 0;
  return s;
}

std::optional<std::vector<int64_t>> BroadcastShapes(
    const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[rank - s.size() + k];
      const int64_t d = s[k];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  return out;
}

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

Values ToValues(const Tensor& t) {
  Values a{t.dtype, t.shape, {}, {}};
  if (a.is_int())
    a.i = *TensorInts(t);
  else
    a.f = TensorDoubles(t);
  return a;
}

Tensor FromValues(const Values& a) {
  return a.is_int() ? MakeIntTensor(a.dtype, a.shape, a.i) : MakeTensor(a.dtype, a.shape, a.f);
}

Values ValuesLike(const std::string& dtype, const std::vector<int64_t>& shape) {
  Values r{dtype, shape, {}, {}};
  if (r.is_int())
    r.i.resize(ShapeNumel(shape));
  else
    r.f.resize(ShapeNumel(shape));
  return r;
}

void SetValue(Values& r, int64_t k, double v) {
  if (r.is_int())
    r.i[k] = DoubleToInt64(v);
  else
    r.f[k] = v;
}

void CopyValue(Values& r, int64_t k, const Values& a, int64_t src_k) {
  if (r.is_int() && a.is_int())
    r.i[k] = a.i[src_k];
  else
    SetValue(r, k, a.at(src_k));
}

}  // namespace msc::weights
