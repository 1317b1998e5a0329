// Numerical tests of the dtype-generic kernels: dtypes and conversions, unary / binary / where
// ops, creation, data movement (6-D and beyond) and indexing ops, against CPU references
// computed here in double precision; run under validation (tests/vulkan.cmake).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "ops_internal.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::DType;
using msc_vk::Shape;
using msc_vk::Tensor;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const DType kAll[] = {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kBool};
using Vals = std::vector<double>;

bool IsFloat(DType d) { return d == DType::kFloat32 || d == DType::kFloat16; }
std::string Name(DType d) { return msc_vk::DTypeName(d); }

// The value `v` becomes when stored in dtype d (float -> int truncates; bool: nonzero).
double Convert(DType d, double v) {
  switch (d) {
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kFloat16:
      return msc_vk::HalfToFloat(msc_vk::FloatToHalf(static_cast<float>(v)));
    case DType::kInt32:
      return static_cast<double>(static_cast<int32_t>(std::trunc(v)));
    case DType::kInt64:
      return static_cast<double>(static_cast<int64_t>(std::trunc(v)));
    default:
      return (v != 0 || std::isnan(v)) ? 1.0 : 0.0;
  }
}

std::vector<uint8_t> Encode(DType d, const Vals& v) {
  const size_t es = msc_vk::DTypeSize(d);
  std::vector<uint8_t> b(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t* at = b.data() + i * es;
    if (d == DType::kFloat32) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(at, &f, 4);
    } else if (d == DType::kFloat16) {
      const uint16_t h = msc_vk::FloatToHalf(static_cast<float>(v[i]));
      std::memcpy(at, &h, 2);
    } else if (d == DType::kInt32) {
      const int32_t x = static_cast<int32_t>(v[i]);
      std::memcpy(at, &x, 4);
    } else if (d == DType::kInt64) {
      const int64_t x = static_cast<int64_t>(v[i]);
      std::memcpy(at, &x, 8);
    } else {
      *at = v[i] != 0 ? 1 : 0;
    }
  }
  return b;
}

Vals Decode(DType d, const std::vector<uint8_t>& b) {
  const size_t es = msc_vk::DTypeSize(d);
  Vals v(b.size() / es);
  for (size_t i = 0; i < v.size(); ++i) {
    const uint8_t* at = b.data() + i * es;
    if (d == DType::kFloat32) {
      float f;
      std::memcpy(&f, at, 4);
      v[i] = f;
    } else if (d == DType::kFloat16) {
      uint16_t h;
      std::memcpy(&h, at, 2);
      v[i] = msc_vk::HalfToFloat(h);
    } else if (d == DType::kInt32) {
      int32_t x;
      std::memcpy(&x, at, 4);
      v[i] = x;
    } else if (d == DType::kInt64) {
      int64_t x;
      std::memcpy(&x, at, 8);
      v[i] = static_cast<double>(x);
    } else {
      CHECK_MESSAGE(*at <= 1, "bool byte " << int(*at) << " at " << i);
      v[i] = *at;
    }
  }
  return v;
}

// A tensor of dtype d in the test arena (allocated as float32 words, then retyped).
Tensor Alloc(vkt::Arena& ar, const std::string& name, DType d, const Shape& s) {
  const int64_t bytes = msc_vk::NumElements(s) * static_cast<int64_t>(msc_vk::DTypeSize(d));
  Tensor t = ar.Alloc(name, {std::max<int64_t>(1, (bytes + 3) / 4)});
  t.dtype = d;
  t.shape = s;
  return t;
}

Tensor Input(vkt::Arena& ar, const std::string& name, DType d, const Shape& s, const Vals& v) {
  Tensor t = Alloc(ar, name, d, s);
  REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
  const auto b = Encode(d, v);
  if (!b.empty()) ar.buffer().Upload(t.offset, b.data(), b.size());
  return t;
}

Vals Read(vkt::Arena& ar, const Tensor& t) {
  std::vector<uint8_t> b(t.bytes());
  if (!b.empty()) ar.buffer().Download(t.offset, b.data(), b.size());
  return Decode(t.dtype, b);
}

// Exact for integer/bool dtypes (and equal NaN/inf), else |a - b| <= tol (1 + |b|).
void ExpectValues(const Vals& got, const Vals& want, DType d, double tol = 1e-5,
                  const std::string& what = "output") {
  REQUIRE(got.size() == want.size());
  if (d == DType::kFloat16) tol = std::max(tol, 1e-3);
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = got[i], b = want[i];
    bool ok;
    if (std::isnan(b) || std::isnan(a))
      ok = std::isnan(a) && std::isnan(b);
    else if (!IsFloat(d) || std::isinf(b))
      ok = a == b;
    else
      ok = std::fabs(a - b) <= tol * (1 + std::fabs(b));
    if (!ok && bad++ < 5)
      MESSAGE(what << "[" << i << "]: got " << a << ", expected " << b << " ("
                   << msc_vk::DTypeName(d) << ")");
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " values differ");
}

// Runs `add` (which records kernels) on a fresh program of the test context.
template <class F>
void Run(F&& add, msc_vk::Context& ctx = vkt::Ctx()) {
  msc_vk::Program p(ctx);
  add(p);
  p.Run();
}

Vals Iota(int64_t n, double start = 0, double step = 1) {
  Vals v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + step * static_cast<double>(i);
  return v;
}

Vals RandomVals(size_t n, uint32_t seed, double lo, double hi, bool integral = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Vals v(n);
  for (double& x : v) x = integral ? std::floor(dist(rng)) : dist(rng);
  return v;
}

// Row-major strides / unravel for the references.
std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}
std::vector<int64_t> Unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

// numpy-broadcast index of output coordinate c into a tensor of shape s.
int64_t BroadcastIndex(const std::vector<int64_t>& c, const Shape& s) {
  const size_t lead = c.size() - s.size();
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + (s[d] == 1 ? 0 : c[lead + d]);
  return i;
}

}  // namespace

TEST_CASE("float16 conversions: exhaustive round trip and round-to-nearest-even") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = msc_vk::HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      CHECK(std::isnan(msc_vk::HalfToFloat(msc_vk::FloatToHalf(f))));
    } else if (msc_vk::FloatToHalf(f) != h) {
      FAIL("half " << h << " -> " << f << " -> " << msc_vk::FloatToHalf(f));
    }
  }
  CHECK(msc_vk::FloatToHalf(1.0f) == 0x3c00);
  CHECK(msc_vk::FloatToHalf(65504.0f) == 0x7bff);
  CHECK(msc_vk::FloatToHalf(65520.0f) == 0x7c00);                // rounds up to inf
  CHECK(msc_vk::FloatToHalf(1.0f + 1.0f / 2048) == 0x3c00);      // tie -> even (down)
  CHECK(msc_vk::FloatToHalf(1.0f + 3.0f / 2048) == 0x3c02);      // tie -> even (up)
  CHECK(msc_vk::FloatToHalf(std::ldexp(1.0f, -25)) == 0x0000);   // tie -> even (zero)
  CHECK(msc_vk::FloatToHalf(std::ldexp(1.5f, -25)) == 0x0001);   // smallest subnormal
  CHECK(msc_vk::FloatToHalf(-std::ldexp(1.0f, -14)) == 0x8400);  // smallest normal
}

TEST_CASE("golden comparison of float16 outputs: tolerance after widening") {
  const uint16_t expected[] = {msc_vk::FloatToHalf(1.0f), msc_vk::FloatToHalf(-2.5f),
                               msc_vk::FloatToHalf(100.0f)};
  uint16_t actual[] = {msc_vk::FloatToHalf(1.0f), msc_vk::FloatToHalf(-2.5f),
                       msc_vk::FloatToHalf(100.0f)};
  actual[2] += 1;  // one half ulp at 100 (0.0625): within atol 1e-3 + rtol 1e-3 * 100
  CHECK(msc_vk::CompareFloat16("h", actual, expected, 3).pass());
  actual[0] = msc_vk::FloatToHalf(1.01f);
  const msc_vk::CompareResult r = msc_vk::CompareFloat16("h", actual, expected, 3);
  CHECK_FALSE(r.pass());
  CHECK(r.mismatches == 1);
  CHECK(r.worst_index == 0);
}

TEST_CASE("astype / cast between float32, float16, int32, int64, bool") {
  const Vals src = {0.0,   -0.0,    1.0,  -1.0,     2.5,       -2.5, 3.7,     -3.7,
                    100.0, 65504.0, 1e-3, -7e4 / 7, 12345.678, -0.4, 1.0 / 3, 8.0};
  const Shape s = {static_cast<int64_t>(src.size())};
  for (DType from : kAll) {
    for (DType to : kAll) {
      INFO(Name(from) << " -> " << Name(to));
      vkt::Arena ar(vkt::Ctx(), 1 << 16);
      Vals in(src.size());
      for (size_t i = 0; i < src.size(); ++i) in[i] = Convert(from, src[i]);
      Tensor x = Input(ar, "x", from, s, in), y = Alloc(ar, "y", to, s);
      Run([&](msc_vk::Program& p) { ops::Astype(p, x, y); });
      Vals want(in.size());
      for (size_t i = 0; i < in.size(); ++i) want[i] = Convert(to, in[i]);
      // float32 -> float16 must round exactly like numpy (nearest even).
      ExpectValues(Read(ar, y), want, to == DType::kFloat16 ? DType::kInt32 : to);
    }
  }
  // Special values: NaN -> true, inf stays inf in float16.
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  Tensor x = Input(ar, "x", DType::kFloat32, {3}, {kNaN, kInf, -kInf});
  Tensor b = Alloc(ar, "b", DType::kBool, {3}), h = Alloc(ar, "h", DType::kFloat16, {3});
  Run([&](msc_vk::Program& p) {
    ops::Cast(p, x, b);
    ops::Astype(p, x, h);
  });
  ExpectValues(Read(ar, b), {1, 1, 1}, DType::kBool);
  ExpectValues(Read(ar, h), {kNaN, kInf, -kInf}, DType::kFloat16);
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("unary float ops: every op vs libm, float32 (vec4 and odd sizes) and float16") {
  struct Case {
    const char* op;
    std::function<double(double)> fn;
    double lo, hi;
    double p0 = 0, p1 = 0;
  };
  const auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const Case cases[] = {
      {"abs", [](double v) { return std::fabs(v); }, -5, 5},
      {"acos", [](double v) { return std::acos(v); }, -0.99, 0.99},
      {"acosh", [](double v) { return std::acosh(v); }, 1, 10},
      {"asin", [](double v) { return std::asin(v); }, -0.99, 0.99},
      {"asinh", [](double v) { return std::asinh(v); }, -10, 10},
      {"atan", [](double v) { return std::atan(v); }, -10, 10},
      {"atanh", [](double v) { return std::atanh(v); }, -0.95, 0.95},
      {"ceil", [](double v) { return std::ceil(v); }, -5, 5},
      {"cos", [](double v) { return std::cos(v); }, -6, 6},
      {"cosh", [](double v) { return std::cosh(v); }, -5, 5},
      {"erf", [](double v) { return std::erf(v); }, -3, 3},
      {"exp", [](double v) { return std::exp(v); }, -10, 10},
      {"floor", [](double v) { return std::floor(v); }, -5, 5},
      {"log", [](double v) { return std::log(v); }, 0.01, 100},
      {"negative", [](double v) { return -v; }, -5, 5},
      {"round", [](double v) { return std::nearbyint(v); }, -5, 5},
      {"rsqrt", [](double v) { return 1 / std::sqrt(v); }, 0.01, 100},
      {"sign", [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }, -5, 5},
      {"sin", [](double v) { return std::sin(v); }, -6, 6},
      {"sinh", [](double v) { return std::sinh(v); }, -5, 5},
      {"sqrt", [](double v) { return std::sqrt(v); }, 0, 100},
      {"square", [](double v) { return v * v; }, -5, 5},
      {"tan", [](double v) { return std::tan(v); }, -1.4, 1.4},
      {"nn.relu", [](double v) { return std::max(v, 0.0); }, -5, 5},
      {"sigmoid", sig, -20, 20},
      {"tanh", [](double v) { return std::tanh(v); }, -20, 20},
      {"nn.gelu", [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, -6, 6},
      {"nn.gelu_tanh",
       [](double v) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       },
       -6, 6},
      {"msc.gelu",
       [](double v) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       },
       -6, 6},
      {"nn.silu", [&](double v) { return v * sig(v); }, -10, 10},
      {"nn.leakyrelu", [](double v) { return v > 0 ? v : 0.2 * v; }, -5, 5, 0.2},
      {"nn.softplus", [](double v) { return 2 * v > 3 ? v : std::log1p(std::exp(2 * v)) / 2; }, -5,
       5, 2, 3},
      {"nn.selu",
       [](double v) {
         return 1.0507009873554805 * (v > 0 ? v : 1.6732632423543772 * (std::exp(v) - 1));
       },
       -5, 5},
      {"clip", [](double v) { return std::min(std::max(v, -0.5), 2.0); }, -5, 5, -0.5, 2.0},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    for (DType d : {DType::kFloat32, DType::kFloat16}) {
      for (int64_t n : {1024, 1001}) {
        INFO(std::string(c.op) << " " << Name(d) << " n=" << n);
        vkt::Arena ar(vkt::Ctx(), 1 << 16);
        Vals xv = RandomVals(n, ++seed, c.lo, c.hi);
        xv[0] = c.lo;
        if (std::string(c.op) == "round") xv[1] = 2.5, xv[2] = -0.5, xv[3] = 1.5;  // ties to even
        for (double& v : xv) v = Convert(d, v);
        Tensor x = Input(ar, "x", d, {n}, xv), y = Alloc(ar, "y", d, {n});
        Run([&](msc_vk::Program& p) {
          ops::Unary(p, c.op, x, y, static_cast<float>(c.p0), static_cast<float>(c.p1));
        });
        Vals want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = c.fn(xv[i]);
        ExpectValues(Read(ar, y), want, d, 2e-5);
      }
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("unary ops on integers, bools and special values") {
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  const Vals iv = {-7, -1, 0, 1, 5, 3000000000.0, -3000000000.0, 46341};
  for (DType d : {DType::kInt32, DType::kInt64}) {
    Vals xv = iv;
    if (d == DType::kInt32) xv[5] = 2147483647, xv[6] = -2147483647;
    INFO(Name(d));
    const Shape s = {static_cast<int64_t>(xv.size())};
    Tensor x = Input(ar, "x", d, s, xv);
    struct Case {
      const char* op;
      std::function<double(double)> fn;
    };
    const Case cases[] = {
        {"abs", [](double v) { return std::fabs(v); }},
        {"negative", [](double v) { return -v; }},
        {"sign", [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }},
        {"nn.relu", [](double v) { return std::max(v, 0.0); }},
        {"floor", [](double v) { return v; }},
        {"bitwise_not", [](double v) { return -v - 1; }},
        {"clip", [](double v) { return std::min(std::max(v, -2.0), 4.0); }},
    };
    for (const Case& c : cases) {
      INFO(std::string(c.op));
      Tensor y = Alloc(ar, "y", d, s);
      Run([&](msc_vk::Program& p) { ops::Unary(p, c.op, x, y, -2.5f, 4.5f); });
      Vals want;
      for (double v : xv) want.push_back(c.fn(v));
      ExpectValues(Read(ar, y), want, d);
    }
    // square exact in int64 beyond 2^32 (46341^2 > 2^31 wraps in int32).
    Tensor y = Alloc(ar, "sq", d, s);
    Run([&](msc_vk::Program& p) { ops::Unary(p, "square", x, y); });
    const double big = d == DType::kInt64 ? 46341.0 * 46341.0 : -2147479015.0;
    CHECK(Read(ar, y).back() == big);
    // A float op on an integer input may produce a float output (torch promotion).
    Tensor f = Alloc(ar, "f", DType::kFloat32, {1}), small = Input(ar, "small", d, {1}, {2});
    Run([&](msc_vk::Program& p) { ops::Unary(p, "exp", small, f); });
    ExpectValues(Read(ar, f), {std::exp(2.0)}, DType::kFloat32, 1e-6);
  }
  // bool: logical_not / bitwise_not; predicates on special floats.
  Tensor b = Input(ar, "b", DType::kBool, {4}, {0, 1, 1, 0});
  Tensor nb = Alloc(ar, "nb", DType::kBool, {4}), bn = Alloc(ar, "bn", DType::kBool, {4});
  Tensor f = Input(ar, "f", DType::kFloat16, {5}, {1.0, kNaN, kInf, -kInf, 0.0});
  Tensor fin = Alloc(ar, "fin", DType::kBool, {5}), inf = Alloc(ar, "inf", DType::kBool, {5}),
         nan = Alloc(ar, "nan", DType::kBool, {5}), lnot = Alloc(ar, "lnot", DType::kBool, {5});
  Run([&](msc_vk::Program& p) {
    ops::Unary(p, "logical_not", b, nb);
    ops::Unary(p, "bitwise_not", b, bn);
    ops::Unary(p, "isfinite", f, fin);
    ops::Unary(p, "isinf", f, inf);
    ops::Unary(p, "isnan", f, nan);
    ops::Unary(p, "logical_not", f, lnot);
  });
  ExpectValues(Read(ar, nb), {1, 0, 0, 1}, DType::kBool);
  ExpectValues(Read(ar, bn), {1, 0, 0, 1}, DType::kBool);
  ExpectValues(Read(ar, fin), {1, 0, 0, 0, 1}, DType::kBool);
  ExpectValues(Read(ar, inf), {0, 0, 1, 1, 0}, DType::kBool);
  ExpectValues(Read(ar, nan), {0, 1, 0, 0, 0}, DType::kBool);
  ExpectValues(Read(ar, lnot), {0, 0, 0, 0, 1}, DType::kBool);
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError([&] { ops::Unary(p, "bitwise_not", f, Alloc(ar, "bw", DType::kFloat16, {5})); },
                   "bitwise_not 'bw': takes integer or bool inputs");
  vkt::ExpectError([&] { ops::Unary(p, "isnan", f, Alloc(ar, "isn", DType::kFloat32, {5})); },
                   "isnan 'isn': output 'isn' float32 [5] must be bool");
  vkt::ExpectError([&] { ops::Unary(p, "nn.foo", f, f); }, "unary op 'nn.foo'");
  Tensor f64 = Alloc(ar, "d", DType::kFloat64, {2});
  vkt::ExpectError([&] { ops::Astype(p, f64, Alloc(ar, "o", DType::kFloat32, {2})); },
                   "astype 'o': tensor 'd' float64 [2] is float64; the Vulkan kernels take "
                   "float32, float16, int32, int64 and bool");
}

namespace {

double RefBinary(const std::string& op, double a, double b, DType d) {
  const bool fl = IsFloat(d);
  auto floordiv = [&](double x, double y) {
    if (fl) return std::floor(x / y);
    const int64_t q = static_cast<int64_t>(x) / static_cast<int64_t>(y);
    const int64_t r = static_cast<int64_t>(x) - q * static_cast<int64_t>(y);
    return static_cast<double>((r != 0 && ((r < 0) != (y < 0))) ? q - 1 : q);
  };
  if (op == "add") return a + b;
  if (op == "subtract") return a - b;
  if (op == "multiply") return a * b;
  if (op == "divide") return fl ? a / b : std::trunc(a / b);
  if (op == "power") return std::pow(a, b);
  if (op == "maximum") return std::max(a, b);
  if (op == "minimum") return std::min(a, b);
  if (op == "floor_divide") return floordiv(a, b);
  if (op == "floor_mod") return a - floordiv(a, b) * b;
  if (op == "equal") return a == b;
  if (op == "not_equal") return a != b;
  if (op == "greater") return a > b;
  if (op == "greater_equal") return a >= b;
  if (op == "less") return a < b;
  if (op == "less_equal") return a <= b;
  if (op == "logical_and") return (a != 0) && (b != 0);
  if (op == "logical_or") return (a != 0) || (b != 0);
  if (op == "logical_xor") return (a != 0) != (b != 0);
  const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  if (op == "bitwise_and") return static_cast<double>(x & y);
  if (op == "bitwise_or") return static_cast<double>(x | y);
  return static_cast<double>(x ^ y);
}

}  // namespace

TEST_CASE("binary ops: every op and dtype with broadcasting (<= 6 collapsed dims)") {
  const char* arith[] = {"add",     "subtract", "multiply",     "divide",   "power",
                         "maximum", "minimum",  "floor_divide", "floor_mod"};
  const char* compare[] = {"equal",      "not_equal",   "greater",    "greater_equal", "less",
                           "less_equal", "logical_and", "logical_or", "logical_xor"};
  const char* bitwise[] = {"bitwise_and", "bitwise_or", "bitwise_xor"};
  struct Shapes {
    Shape a, b;
  };
  const Shapes shapes[] = {{{2, 3, 4}, {2, 3, 4}},
                           {{4, 8}, {1}},
                           {{1}, {12}},
                           {{2, 3, 4, 1, 2, 1, 2}, {1, 1, 1, 2, 1, 2, 1}},  // 7-D -> 5 dims
                           {{2, 1, 3, 1, 2, 1}, {1, 2, 1, 3, 1, 2}},        // 6 dims, none merge
                           {{3, 1, 8}, {1, 5, 8}},
                           {{5, 7}, {7}}};
  uint32_t seed = 100;
  for (DType d : kAll) {
    std::vector<std::string> ops_list;
    if (d != DType::kBool) ops_list.insert(ops_list.end(), std::begin(arith), std::end(arith));
    ops_list.insert(ops_list.end(), std::begin(compare), std::end(compare));
    if (!IsFloat(d)) ops_list.insert(ops_list.end(), std::begin(bitwise), std::end(bitwise));
    for (const std::string& op : ops_list) {
      for (const Shapes& sh : shapes) {
        INFO(op << " " << Name(d) << " " << msc_vk::ShapeToString(sh.a) << " x "
                << msc_vk::ShapeToString(sh.b));
        vkt::Arena ar(vkt::Ctx(), 1 << 16);
        const size_t na = msc_vk::NumElements(sh.a), nb = msc_vk::NumElements(sh.b);
        const bool integral = !IsFloat(d);
        Vals av = RandomVals(na, ++seed, -9, 9, integral),
             bv = RandomVals(nb, ++seed, -9, 9, integral);
        if (d == DType::kBool) {
          for (double& v : av) v = v > 0;
          for (double& v : bv) v = v > 0;
        }
        if (op == "power") {  // small non-negative exponents, bases of both signs
          for (double& v : bv) v = std::fabs(std::round(v)) / 3;
          if (integral)
            for (double& v : bv) v = std::floor(v);
        }
        if (op == "divide" || op == "floor_divide" || op == "floor_mod") {
          for (double& v : bv) v = v == 0 ? 3 : v;
        }
        if (op == "equal" || op == "not_equal") bv[0] = av[0];  // some equal pairs
        if (d == DType::kInt64 && (op == "add" || op == "multiply" || op == "subtract")) {
          for (double& v : av) v *= 1e9;  // exact beyond int32
        }
        for (double& v : av) v = Convert(d, v);
        for (double& v : bv) v = Convert(d, v);
        Shape ys;
        REQUIRE(msc_vk::ops::detail::BroadcastShapes(sh.a, sh.b, &ys));
        const bool to_bool =
            std::find(std::begin(compare), std::end(compare), op) != std::end(compare);
        const DType yd = to_bool ? DType::kBool : d;
        Tensor a = Input(ar, "a", d, sh.a, av), b = Input(ar, "b", d, sh.b, bv),
               y = Alloc(ar, "y", yd, ys);
        Run([&](msc_vk::Program& p) { ops::Binary(p, op, a, b, y); });
        Vals want(msc_vk::NumElements(ys));
        for (size_t i = 0; i < want.size(); ++i) {
          const auto c = Unravel(static_cast<int64_t>(i), ys);
          want[i] = Convert(
              yd, RefBinary(op, av[BroadcastIndex(c, sh.a)], bv[BroadcastIndex(c, sh.b)], d));
        }
        ExpectValues(Read(ar, y), want, yd, 1e-5);
      }
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("binary float semantics: NaN propagation, floor_divide/floor_mod signs, power") {
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  const Vals av = {7, -7, 7, -7, 5.5, kNaN, 1, -2, -2, 0, 0, 2};
  const Vals bv = {2, 2, -2, -2, 0.5, 1, kNaN, 3, 0.5, 0, -1, -1};
  const Shape s = {static_cast<int64_t>(av.size())};
  Tensor a = Input(ar, "a", DType::kFloat32, s, av), b = Input(ar, "b", DType::kFloat32, s, bv);
  Tensor mx = Alloc(ar, "mx", DType::kFloat32, s), fd = Alloc(ar, "fd", DType::kFloat32, s),
         fm = Alloc(ar, "fm", DType::kFloat32, s), pw = Alloc(ar, "pw", DType::kFloat32, s);
  Run([&](msc_vk::Program& p) {
    ops::Binary(p, "maximum", a, b, mx);
    ops::Binary(p, "floor_divide", a, b, fd);
    ops::Binary(p, "floor_mod", a, b, fm);
    ops::Binary(p, "power", a, b, pw);
  });
  Vals want_mx, want_fd, want_fm, want_pw;
  for (size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], y = bv[i];
    want_mx.push_back(std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y));
    want_fd.push_back(std::floor(x / y));
    const double m = std::fmod(x, y);
    want_fm.push_back(m != 0 && ((y < 0) != (m < 0)) ? m + y : m);
    want_pw.push_back(std::pow(x, y));
  }
  ExpectValues(Read(ar, mx), want_mx, DType::kFloat32, 0, "maximum");
  ExpectValues(Read(ar, fd), want_fd, DType::kFloat32, 0, "floor_divide");
  ExpectValues(Read(ar, fm), want_fm, DType::kFloat32, 0, "floor_mod");
  ExpectValues(Read(ar, pw), want_pw, DType::kFloat32, 1e-6, "power");

  // nn.bias_add along axis 1 and -1.
  const Shape xs = {2, 3, 4};
  Vals xv = RandomVals(24, 5, -1, 1);
  const Vals b1 = {1, 2, 3}, b2 = {10, 20, 30, 40};
  for (double& v : xv) v = Convert(DType::kFloat32, v);
  Tensor x = Input(ar, "x", DType::kFloat32, xs, xv),
         t1 = Input(ar, "b1", DType::kFloat32, {3}, b1),
         t2 = Input(ar, "b2", DType::kFloat32, {4}, b2);
  Tensor y1 = Alloc(ar, "y1", DType::kFloat32, xs), y2 = Alloc(ar, "y2", DType::kFloat32, xs);
  Run([&](msc_vk::Program& p) {
    ops::BiasAdd(p, x, t1, y1, 1);
    ops::BiasAdd(p, x, t2, y2, -1);
  });
  Vals w1(24), w2(24);
  for (int i = 0; i < 24; ++i) {
    w1[i] = Convert(DType::kFloat32, xv[i] + b1[(i / 4) % 3]);
    w2[i] = Convert(DType::kFloat32, xv[i] + b2[i % 4]);
  }
  ExpectValues(Read(ar, y1), w1, DType::kFloat32, 0);
  ExpectValues(Read(ar, y2), w2, DType::kFloat32, 0);
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  // Mixed dtypes compute as torch promotes: int32 / float16 -> float32 output, int32 vs
  // float32 comparison in float, int32 + int64 in int64.
  Tensor i32 = Input(ar, "i", DType::kInt32, {3}, {7, -7, 3000}),
         h = Input(ar, "h", DType::kFloat16, {3}, {2, 2, 0.5}),
         f = Input(ar, "f", DType::kFloat32, {}, {6.5}),
         i64 = Input(ar, "i64", DType::kInt64, {}, {4e9});
  Tensor q = Alloc(ar, "q", DType::kFloat32, {3}), gt = Alloc(ar, "gt", DType::kBool, {3}),
         s64 = Alloc(ar, "s64", DType::kInt64, {3});
  Run([&](msc_vk::Program& p) {
    ops::Divide(p, i32, h, q);
    ops::Binary(p, "greater", i32, f, gt);
    ops::Add(p, i32, i64, s64);
  });
  ExpectValues(Read(ar, q), {3.5, -3.5, 6000}, DType::kFloat32, 0);
  ExpectValues(Read(ar, gt), {1, 0, 1}, DType::kBool);
  ExpectValues(Read(ar, s64), {4e9 + 7, 4e9 - 7, 4e9 + 3000}, DType::kInt64);

  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError([&] { ops::Binary(p, "less", a, b, Alloc(ar, "lt", DType::kFloat32, s)); },
                   "less 'lt': output 'lt' float32 [12] must be bool");
  vkt::ExpectError(
      [&] { ops::Binary(p, "bitwise_and", a, b, Alloc(ar, "band", DType::kFloat32, s)); },
      "bitwise_and 'band': takes integer or bool tensors, got 'a' float32 [12]");
  vkt::ExpectError(
      [&] {
        ops::Add(p, Alloc(ar, "a7", DType::kFloat32, {2, 1, 2, 1, 2, 1, 2}),
                 Alloc(ar, "b7", DType::kFloat32, {1, 2, 1, 2, 1, 2, 1}),
                 Alloc(ar, "c7", DType::kFloat32, {2, 2, 2, 2, 2, 2, 2}));
      },
      "add 'c7': the access pattern needs 7 dims after collapsing; the shader handles 6");
  vkt::ExpectError([&] { ops::BiasAdd(p, x, t2, y1, 1); },
                   "nn.bias_add 'y1': bias 'b2' float32 [4] must be 1-D with x.shape[1] = 3");
}

TEST_CASE("where and masked_fill with three-way broadcasting, every dtype") {
  for (DType d : kAll) {
    INFO(Name(d));
    vkt::Arena ar(vkt::Ctx(), 1 << 16);
    const Shape cs = {2, 1, 4}, as = {3, 1}, bs = {2, 3, 4}, ys = {2, 3, 4};
    Vals cv = RandomVals(8, 1, -1, 1), av = RandomVals(3, 2, -5, 5, true),
         bv = RandomVals(24, 3, -5, 5, true);
    for (double& v : cv) v = v > 0;
    for (double& v : av) v = Convert(d, v);
    for (double& v : bv) v = Convert(d, v);
    Tensor c = Input(ar, "c", DType::kBool, cs, cv), a = Input(ar, "a", d, as, av),
           b = Input(ar, "b", d, bs, bv), y = Alloc(ar, "y", d, ys);
    Tensor value = Input(ar, "v", d, {}, {Convert(d, -1)}), z = Alloc(ar, "z", d, bs);
    Run([&](msc_vk::Program& p) {
      ops::Where(p, c, a, b, y);
      ops::MaskedFill(p, b, c, value, z);
    });
    Vals wy(24), wz(24);
    for (int64_t i = 0; i < 24; ++i) {
      const auto co = Unravel(i, ys);
      const bool cond = cv[BroadcastIndex(co, cs)] != 0;
      wy[i] = cond ? av[BroadcastIndex(co, as)] : bv[i];
      wz[i] = cond ? Convert(d, -1) : bv[i];
    }
    ExpectValues(Read(ar, y), wy, d, 0, "where");
    ExpectValues(Read(ar, z), wz, d, 0, "masked_fill");
  }
  // Mixed dtypes convert to the output's (torch promotes a scalar of another dtype).
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  Tensor c = Input(ar, "c", DType::kBool, {4}, {1, 0, 1, 0});
  Tensor x = Input(ar, "x", DType::kFloat32, {4}, {1.5, 2.5, -3.5, 4.5});
  Tensor zero = Input(ar, "zero", DType::kInt64, {}, {0});
  Tensor y = Alloc(ar, "y", DType::kFloat32, {4});
  Tensor fill = Input(ar, "fill", DType::kFloat32, {}, {-7.9});
  Tensor xi = Input(ar, "xi", DType::kInt32, {4}, {1, 2, 3, 4}),
         yi = Alloc(ar, "yi", DType::kInt32, {4});
  Run([&](msc_vk::Program& p) {
    ops::Where(p, c, x, zero, y);
    ops::MaskedFill(p, xi, c, fill, yi);
  });
  ExpectValues(Read(ar, y), {1.5, 0, -3.5, 0}, DType::kFloat32, 0);
  ExpectValues(Read(ar, yi), {-7, 2, -7, 4}, DType::kInt32);
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("creation: ones, zeros, full, arange, one_hot, shape") {
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  for (DType d : kAll) {
    INFO(Name(d));
    Tensor o = Alloc(ar, "o", d, {3, 5}), z = Alloc(ar, "z", d, {7}), f = Alloc(ar, "f", d, {2, 3});
    Tensor fill = Input(ar, "fill", DType::kFloat32, {}, {-2.75});
    Run([&](msc_vk::Program& p) {
      ops::Fill(p, "ones", o, 1.0);
      ops::Fill(p, "zeros_like", z, 0.0);
      ops::Full(p, fill, f);
    });
    ExpectValues(Read(ar, o), Vals(15, 1.0), d);
    ExpectValues(Read(ar, z), Vals(7, 0.0), d);
    ExpectValues(Read(ar, f), Vals(6, Convert(d, -2.75)), d);
  }
  // arange: float and integer, negative step, int64 beyond int32.
  Tensor af = Alloc(ar, "af", DType::kFloat32, {10}), ai = Alloc(ar, "ai", DType::kInt64, {4}),
         ab = Alloc(ar, "ab", DType::kInt64, {3});
  Run([&](msc_vk::Program& p) {
    ops::Arange(p, af, 0.5, 3.0, 0.25);
    ops::Arange(p, ai, 10, 2, -2);
    ops::Arange(p, ab, 5e9, 5e9 + 3, 1);
  });
  ExpectValues(Read(ar, af), Iota(10, 0.5, 0.25), DType::kFloat32, 1e-6);
  ExpectValues(Read(ar, ai), {10, 8, 6, 4}, DType::kInt64);
  ExpectValues(Read(ar, ab), {5e9, 5e9 + 1, 5e9 + 2}, DType::kInt64);
  // one_hot with int64 indices at axis -1 and 0; out-of-range and negative match nothing.
  Tensor idx = Input(ar, "idx", DType::kInt64, {2, 2}, {0, 2, 3, -1});
  Tensor h1 = Alloc(ar, "h1", DType::kFloat32, {2, 2, 3}),
         h0 = Alloc(ar, "h0", DType::kInt32, {3, 2, 2});
  Run([&](msc_vk::Program& p) {
    ops::OneHot(p, idx, h1, 3, -1, 1.0, 0.0);
    ops::OneHot(p, idx, h0, 3, 0, 5.0, -1.0);
  });
  ExpectValues(Read(ar, h1), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, DType::kFloat32, 0);
  ExpectValues(Read(ar, h0), {5, -1, -1, -1, -1, -1, -1, -1, -1, 5, -1, -1}, DType::kInt32);
  Tensor sh = Alloc(ar, "sh", DType::kInt64, {4});
  Run([&](msc_vk::Program& p) { ops::ShapeOf(p, sh, {1, 3, 224, 6000000000}); });
  ExpectValues(Read(ar, sh), {1, 3, 224, 6e9}, DType::kInt64);
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError([&] { ops::Arange(p, Alloc(ar, "ar", DType::kFloat32, {3}), 0, 10, 3); },
                   "arange 'ar': output 'ar' float32 [3] does not match the computed shape [4]");
}

TEST_CASE("data movement: broadcast_to, tile, repeat, flip, split, stack, concatenate, trilu") {
  for (DType d : kAll) {
    INFO(Name(d));
    vkt::Arena ar(vkt::Ctx(), 1 << 18);
    const Shape xs = {2, 3, 4};
    Vals xv = RandomVals(24, 7, -50, 50, true);
    for (double& v : xv) v = Convert(d, v);
    Tensor x = Input(ar, "x", d, xs, xv);
    auto at = [&](int64_t i, int64_t j, int64_t k) { return xv[(i * 3 + j) * 4 + k]; };
    // broadcast_to [2, 3, 4] -> [2, 2, 3, 4]; [3, 1] -> [2, 3, 5]
    Tensor bt = Alloc(ar, "bt", d, {2, 2, 3, 4});
    Tensor col = Input(ar, "col", d, {3, 1}, {xv[0], xv[1], xv[2]});
    Tensor bc = Alloc(ar, "bc", d, {2, 3, 5});
    Tensor tl = Alloc(ar, "tl", d, {2, 6, 12}), tl2 = Alloc(ar, "tl2", d, {2, 2, 3, 4});
    Tensor rp = Alloc(ar, "rp", d, {2, 6, 4}), rpn = Alloc(ar, "rpn", d, {72});
    Tensor fl = Alloc(ar, "fl", d, xs);
    Tensor s0 = Alloc(ar, "s0", d, {2, 2, 4}), s1 = Alloc(ar, "s1", d, {2, 1, 4});
    Tensor i0 = Alloc(ar, "i0", d, {2, 3, 1}), i1 = Alloc(ar, "i1", d, {2, 3, 2}),
           i2 = Alloc(ar, "i2", d, {2, 3, 1});
    Tensor st = Alloc(ar, "st", d, {2, 3, 2, 4}), cc = Alloc(ar, "cc", d, {2, 6, 4});
    Tensor lo = Alloc(ar, "lo", d, xs), up = Alloc(ar, "up", d, xs), tu = Alloc(ar, "tu", d, xs);
    Run([&](msc_vk::Program& p) {
      ops::BroadcastTo(p, x, bt);
      ops::BroadcastTo(p, col, bc);
      ops::Tile(p, x, tl, {2, 3});
      ops::Tile(p, x, tl2, {2, 1, 1, 1});
      ops::Repeat(p, x, rp, 2, 1);
      ops::Repeat(p, x, rpn, 3, std::nullopt);
      ops::Flip(p, x, fl, -2);
      ops::Split(p, x, {s0, s1}, 0, {2}, 1);
      ops::Split(p, x, {i0, i1, i2}, 0, {1, 3}, -1);
      ops::Stack(p, {x, fl}, st, 2);
      ops::Concatenate(p, {x, fl}, cc, 1);
      ops::Trilu(p, "tril", x, lo, -1, false);
      ops::Trilu(p, "triu", x, up, 1, true);
      ops::Trilu(p, "trilu", x, tu, 0, true);
    });
    Vals w_bt, w_bc, w_tl, w_tl2, w_rp, w_rpn, w_fl, w_s0, w_s1, w_i0, w_i1, w_i2, w_st, w_cc, w_lo,
        w_up, w_tu;
    for (int r = 0; r < 2; ++r) w_bt.insert(w_bt.end(), xv.begin(), xv.end());
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 5; ++k) w_bc.push_back(xv[j]);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 6; ++j)
        for (int k = 0; k < 12; ++k) w_tl.push_back(at(i, j % 3, k % 4));
    for (int r = 0; r < 2; ++r) w_tl2.insert(w_tl2.end(), xv.begin(), xv.end());
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 6; ++j)
        for (int k = 0; k < 4; ++k) w_rp.push_back(at(i, j / 2, k));
    for (double v : xv)
      for (int r = 0; r < 3; ++r) w_rpn.push_back(v);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) {
          w_fl.push_back(at(i, 2 - j, k));
          (j < 2 ? w_s0 : w_s1).push_back(at(i, j, k));
          (k < 1 ? w_i0 : (k < 3 ? w_i1 : w_i2)).push_back(at(i, j, k));
          w_lo.push_back(k - j <= -1 ? at(i, j, k) : 0);
          w_up.push_back(k - j >= 1 ? at(i, j, k) : 0);
          w_tu.push_back(k - j >= 0 ? at(i, j, k) : 0);
        }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int s = 0; s < 2; ++s)
          for (int k = 0; k < 4; ++k) w_st.push_back(s == 0 ? at(i, j, k) : at(i, 2 - j, k));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 6; ++j)
        for (int k = 0; k < 4; ++k) w_cc.push_back(j < 3 ? at(i, j, k) : at(i, 5 - j, k));
    ExpectValues(Read(ar, bt), w_bt, d, 0, "broadcast_to");
    ExpectValues(Read(ar, bc), w_bc, d, 0, "broadcast_to column");
    ExpectValues(Read(ar, tl), w_tl, d, 0, "tile");
    ExpectValues(Read(ar, tl2), w_tl2, d, 0, "tile rank+1");
    ExpectValues(Read(ar, rp), w_rp, d, 0, "repeat");
    ExpectValues(Read(ar, rpn), w_rpn, d, 0, "repeat flat");
    ExpectValues(Read(ar, fl), w_fl, d, 0, "flip");
    ExpectValues(Read(ar, s0), w_s0, d, 0, "split 0");
    ExpectValues(Read(ar, s1), w_s1, d, 0, "split 1");
    ExpectValues(Read(ar, i0), w_i0, d, 0, "split indices 0");
    ExpectValues(Read(ar, i1), w_i1, d, 0, "split indices 1");
    ExpectValues(Read(ar, i2), w_i2, d, 0, "split indices 2");
    ExpectValues(Read(ar, st), w_st, d, 0, "stack");
    ExpectValues(Read(ar, cc), w_cc, d, 0, "concatenate");
    ExpectValues(Read(ar, lo), w_lo, d, 0, "tril");
    ExpectValues(Read(ar, up), w_up, d, 0, "triu");
    ExpectValues(Read(ar, tu), w_tu, d, 0, "trilu");
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  msc_vk::Program p(vkt::Ctx());
  Tensor x = Alloc(ar, "x", DType::kFloat32, {2, 5});
  vkt::ExpectError(
      [&] {
        ops::Split(
            p, x,
            {Alloc(ar, "a", DType::kFloat32, {2, 3}), Alloc(ar, "b", DType::kFloat32, {2, 2})}, 3,
            {}, 1);
      },
      "split 'a': splits 'x' float32 [2, 5] into 3 pieces but 2 outputs were given");
  vkt::ExpectError(
      [&] { ops::Reshape(p, x, Alloc(ar, "r", DType::kInt32, {10})); },
      "reshape 'r': input 'x' float32 [2, 5] and output 'r' int32 [10] differ in dtype");
  vkt::ExpectError(
      [&] {
        ops::BroadcastTo(p, x, Alloc(ar, "bt", DType::kFloat32, {3, 5}));
      },
      "broadcast_to 'bt': input 'x' float32 [2, 5] does not broadcast to [3, 5]");
}

TEST_CASE("split: equal pieces laid out evenly in one buffer are one dispatch, others one each") {
  // x [2, 5, 12] split in 3 along the last axis (a transformer's qkv): outputs allocated side by
  // side in the arena (as the memory plan places them) take one copy; with a tensor between two
  // of them (uneven spacing) or pieces of unequal size, one copy per piece. Values as numpy.
  for (DType d : kAll) {
    INFO(Name(d));
    vkt::Arena ar(vkt::Ctx(), 1 << 18);
    Vals xv = RandomVals(120, 11, -50, 50, true);
    for (double& v : xv) v = Convert(d, v);
    const Tensor x = Input(ar, "x", d, {2, 5, 12}, xv);
    auto piece = [&](int64_t j, int64_t w, int64_t begin) {
      Vals v;
      for (int64_t r = 0; r < 10; ++r)
        for (int64_t k = 0; k < w; ++k) v.push_back(xv[r * 12 + begin + j * w + k]);
      return v;
    };
    const Tensor q = Alloc(ar, "q", d, {2, 5, 4}), k = Alloc(ar, "k", d, {2, 5, 4}),
                 v = Alloc(ar, "v", d, {2, 5, 4});
    vkt::RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      ops::Split(p, x, {q, k, v}, 3, {}, -1);
    });
    ExpectValues(Read(ar, q), piece(0, 4, 0), d, 0, "q");
    ExpectValues(Read(ar, k), piece(1, 4, 0), d, 0, "k");
    ExpectValues(Read(ar, v), piece(2, 4, 0), d, 0, "v");
    const Tensor a = Alloc(ar, "a", d, {2, 5, 4}), gap = Alloc(ar, "gap", d, {7}),
                 b = Alloc(ar, "b", d, {2, 5, 4}), c = Alloc(ar, "c", d, {2, 5, 4});
    vkt::RunProgram(vkt::Ctx(), 3, [&](msc_vk::Program& p) {
      ops::Split(p, x, {a, b, c}, 3, {}, 2);
    });
    ExpectValues(Read(ar, a), piece(0, 4, 0), d, 0, "a (uneven spacing)");
    ExpectValues(Read(ar, b), piece(1, 4, 0), d, 0, "b (uneven spacing)");
    ExpectValues(Read(ar, c), piece(2, 4, 0), d, 0, "c (uneven spacing)");
    // two pieces are always evenly spaced: one dispatch, also across a tensor between them
    const Tensor e = Alloc(ar, "e", d, {2, 5, 6}), gap2 = Input(ar, "gap2", d, {7}, Vals(7, 1)),
                 f = Alloc(ar, "f", d, {2, 5, 6});
    vkt::RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Split(p, x, {e, f}, 2, {}, 2); });
    ExpectValues(Read(ar, e), piece(0, 6, 0), d, 0, "e");
    ExpectValues(Read(ar, f), piece(1, 6, 0), d, 0, "f");
    ExpectValues(Read(ar, gap2), Vals(7, 1), d, 0, "the tensor between them is not written");
    const Tensor u0 = Alloc(ar, "u0", d, {2, 5, 5}), u1 = Alloc(ar, "u1", d, {2, 5, 5}),
                 u2 = Alloc(ar, "u2", d, {2, 5, 2});
    vkt::RunProgram(vkt::Ctx(), 3, [&](msc_vk::Program& p) {
      ops::Split(p, x, {u0, u1, u2}, 0, {5, 10}, 2);
    });
    ExpectValues(Read(ar, u0), piece(0, 5, 0), d, 0, "u0 (unequal pieces)");
    ExpectValues(Read(ar, u1), piece(1, 5, 0), d, 0, "u1 (unequal pieces)");
    ExpectValues(Read(ar, u2), piece(0, 2, 10), d, 0, "u2 (unequal pieces)");
    // along a middle axis: [2, 5, 12] -> 5 x [2, 1, 12], side by side
    std::vector<Tensor> rows;
    for (int j = 0; j < 5; ++j) rows.push_back(Alloc(ar, "r" + std::to_string(j), d, {2, 1, 12}));
    vkt::RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Split(p, x, rows, 5, {}, 1); });
    for (int j = 0; j < 5; ++j) {
      Vals want;
      for (int i = 0; i < 2; ++i)
        for (int c = 0; c < 12; ++c) want.push_back(xv[(i * 5 + j) * 12 + c]);
      ExpectValues(Read(ar, rows[j]), want, d, 0, "row " + std::to_string(j));
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("permute_dims beyond 4 dims: swin-style 6-D, and 8-D split into several dispatches") {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBool, DType::kInt64}) {
    struct Case {
      Shape x;
      std::vector<int64_t> axes;
      size_t min_dispatches;
    };
    const Case cases[] = {
        {{1, 2, 4, 2, 4, 3}, {0, 1, 3, 2, 4, 5}, 1},        // swin window partition
        {{2, 3, 2, 3, 2, 3, 2}, {6, 4, 2, 0, 5, 3, 1}, 2},  // 7 dims, none merge
        {{2, 2, 2, 2, 2, 2, 2, 3}, {7, 6, 5, 4, 3, 2, 1, 0}, 4},
    };
    for (const Case& c : cases) {
      INFO(Name(d) << " " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(vkt::Ctx(), 1 << 16);
      const int64_t n = msc_vk::NumElements(c.x);
      Vals xv = Iota(n);
      for (double& v : xv) v = Convert(d, d == DType::kBool ? static_cast<int64_t>(v) % 3 == 0 : v);
      Shape ys;
      for (int64_t a : c.axes) ys.push_back(c.x[a]);
      Tensor x = Input(ar, "x", d, c.x, xv), y = Alloc(ar, "y", d, ys);
      msc_vk::Program p(vkt::Ctx());
      ops::PermuteDims(p, x, y, c.axes);
      CHECK(p.num_dispatches() >= c.min_dispatches);
      p.Run();
      const auto xst = Strides(c.x);
      Vals want(n);
      for (int64_t i = 0; i < n; ++i) {
        const auto yc = Unravel(i, ys);
        int64_t src = 0;
        for (size_t k = 0; k < c.axes.size(); ++k) src += yc[k] * xst[c.axes[k]];
        want[i] = xv[src];
      }
      ExpectValues(Read(ar, y), want, d, 0);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("take / msc.embedding: axes, null axis, negative indices, clip and wrap modes") {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kBool}) {
    for (DType id : {DType::kInt32, DType::kInt64}) {
      INFO(Name(d) << " indices " << Name(id));
      vkt::Arena ar(vkt::Ctx(), 1 << 16);
      const Shape xs = {3, 4, 5};
      Vals xv = Iota(60, -20);
      for (double& v : xv) v = Convert(d, d == DType::kBool ? static_cast<int64_t>(v) % 2 : v);
      Tensor x = Input(ar, "x", d, xs, xv);
      Tensor idx = Input(ar, "idx", id, {2, 2}, {0, -1, 3, -4});
      Tensor far = Input(ar, "far", id, {3}, {-1, 7, -9});
      Tensor y1 = Alloc(ar, "y1", d, {3, 2, 2, 5}), yn = Alloc(ar, "yn", d, {2, 2});
      Tensor yc = Alloc(ar, "yc", d, {3, 3, 5}), yw = Alloc(ar, "yw", d, {3, 3, 5});
      Tensor ids = Input(ar, "ids", id, {2, 3}, {0, 2, 1, 2, 2, 0});
      Tensor emb = Alloc(ar, "emb", d, {2, 3, 20});
      Run([&](msc_vk::Program& p) {
        ops::Take(p, x, idx, y1, 1);
        ops::Take(p, x, idx, yn, std::nullopt);
        ops::Take(p, x, far, yc, 1, ops::TakeMode::kClip);
        ops::Take(p, x, far, yw, 1, ops::TakeMode::kWrap);
        Tensor w = x;  // x's bytes as an embedding table [3, 20]
        w.shape = {3, 20};
        ops::Embedding(p, ids, w, emb);
      });
      const int64_t iv[] = {0, -1, 3, -4};
      Vals w1, wn, wc, ww, we;
      for (int i = 0; i < 3; ++i)
        for (int64_t j : iv)
          for (int k = 0; k < 5; ++k) w1.push_back(xv[(i * 4 + (j + 4) % 4) * 5 + k]);
      for (int64_t j : iv) wn.push_back(xv[j < 0 ? j + 60 : j]);
      const int64_t fv[] = {-1, 7, -9};
      for (int i = 0; i < 3; ++i)
        for (int64_t j : fv)
          for (int k = 0; k < 5; ++k) {
            wc.push_back(xv[(i * 4 + std::clamp<int64_t>(j, 0, 3)) * 5 + k]);
            ww.push_back(xv[(i * 4 + ((j % 4) + 4) % 4) * 5 + k]);
          }
      const int64_t idv[] = {0, 2, 1, 2, 2, 0};
      for (int64_t r : idv)
        for (int k = 0; k < 20; ++k) we.push_back(xv[r * 20 + k]);
      ExpectValues(Read(ar, y1), w1, d, 0, "take axis 1");
      ExpectValues(Read(ar, yn), wn, d, 0, "take flat");
      ExpectValues(Read(ar, yc), wc, d, 0, "take clip");
      ExpectValues(Read(ar, yw), ww, d, 0, "take wrap");
      ExpectValues(Read(ar, emb), we, d, 0, "embedding");
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  msc_vk::Program p(vkt::Ctx());
  Tensor x = Alloc(ar, "x", DType::kFloat32, {3, 4});
  vkt::ExpectError(
      [&] {
        ops::Take(p, x, Alloc(ar, "fi", DType::kFloat32, {2}),
                  Alloc(ar, "t", DType::kFloat32, {2, 4}), 0);
      },
      "take 't': indices 'fi' float32 [2] must be int32 or int64");
  vkt::ExpectError(
      [&] {
        ops::Take(p, x, Alloc(ar, "ii", DType::kInt32, {2}),
                  Alloc(ar, "t2", DType::kFloat32, {3, 4}), 0);
      },
      "take 't2': output 't2' float32 [3, 4] does not match the computed shape [2, 4]");
}

TEST_CASE("gather_elements, gather_nd (batch_dims), scatter_elements / scatter_nd reductions") {
  for (DType d : {DType::kFloat32, DType::kInt64, DType::kFloat16, DType::kInt32}) {
    INFO(Name(d));
    vkt::Arena ar(vkt::Ctx(), 1 << 16);
    const Shape xs = {3, 4};
    Vals xv = Iota(12, 1);
    Tensor x = Input(ar, "x", d, xs, xv);
    // gather_elements axis 1, indices [3, 2] with a negative index.
    Tensor gi = Input(ar, "gi", DType::kInt64, {3, 2}, {0, 3, -1, 1, 2, 2});
    Tensor ge = Alloc(ar, "ge", d, {3, 2});
    // gather_nd: indices [2, 2] -> x[r, c]; batch_dims 1: indices [3, 1] -> x[b, idx].
    Tensor ni = Input(ar, "ni", DType::kInt32, {2, 2}, {2, 1, 0, -1});
    Tensor gn = Alloc(ar, "gn", d, {2});
    Tensor bi = Input(ar, "bi", DType::kInt32, {3, 1}, {3, 0, 2});
    Tensor gb = Alloc(ar, "gb", d, {3});
    Tensor ri = Input(ar, "ri", DType::kInt32, {1, 1}, {1});
    Tensor gr = Alloc(ar, "gr", d, {1, 4});  // row gather (M = 1 < rank)
    Run([&](msc_vk::Program& p) {
      ops::GatherElements(p, x, gi, ge, 1);
      ops::GatherND(p, x, ni, gn, 0);
      ops::GatherND(p, x, bi, gb, 1);
      ops::GatherND(p, x, ri, gr, 0);
    });
    ExpectValues(Read(ar, ge), {1, 4, 8, 6, 11, 11}, d, 0, "gather_elements");
    ExpectValues(Read(ar, gn), {10, 4}, d, 0, "gather_nd");
    ExpectValues(Read(ar, gb), {4, 5, 11}, d, 0, "gather_nd batch_dims 1");
    ExpectValues(Read(ar, gr), {5, 6, 7, 8}, d, 0, "gather_nd rows");
    // scatter_elements axis 0 with duplicate targets (sequential, TVM order).
    Tensor si = Input(ar, "si", DType::kInt64, {2, 4}, {0, 1, 2, -1, 0, 1, 2, 2});
    Tensor su = Input(ar, "su", d, {2, 4}, {10, 20, 30, 40, 50, 60, 70, 80});
    const char* reds[] = {"update", "add", "mul", "mean", "max", "min"};
    for (const char* red : reds) {
      INFO(std::string(red));
      Tensor y = Alloc(ar, "y", d, xs);
      Run([&](msc_vk::Program& p) { ops::ScatterElements(p, x, si, su, y, 0, red); });
      Vals want = xv;
      const int64_t idx[2][4] = {{0, 1, 2, 2}, {0, 1, 2, 2}};
      const double upd[2][4] = {{10, 20, 30, 40}, {50, 60, 70, 80}};
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) {
          double& t = want[idx[r][c] * 4 + c];
          const double u = upd[r][c];
          const std::string s = red;
          t = s == "update" ? u
              : s == "add"  ? t + u
              : s == "mul"  ? t * u
              : s == "mean" ? (IsFloat(d) ? (t + u) / 2 : std::trunc((t + u) / 2))
              : s == "max"  ? std::max(t, u)
                            : std::min(t, u);
        }
      for (double& v : want) v = Convert(d, v);
      ExpectValues(Read(ar, y), want, d, 1e-6, std::string("scatter_elements ") + red);
    }
    // scatter_nd: row updates (M = 1) with a duplicate row, and element updates (M = 2).
    Tensor ri2 = Input(ar, "ri2", DType::kInt32, {3, 1}, {2, 0, 2});
    Tensor ru = Input(ar, "ru", d, {3, 4}, Iota(12, 100));
    Tensor ei = Input(ar, "ei", DType::kInt64, {2, 2}, {1, 1, -1, 0});
    Tensor eu = Input(ar, "eu", d, {2}, {-5, -6});
    Tensor r_upd = Alloc(ar, "r_upd", d, xs), r_add = Alloc(ar, "r_add", d, xs),
           e_upd = Alloc(ar, "e_upd", d, xs);
    Run([&](msc_vk::Program& p) {
      ops::ScatterND(p, x, ri2, ru, r_upd, "update");
      ops::ScatterND(p, x, ri2, ru, r_add, "add");
      ops::ScatterND(p, x, ei, eu, e_upd);
    });
    Vals w_upd = xv, w_add = xv, w_e = xv;
    for (int c = 0; c < 4; ++c) {
      w_upd[8 + c] = 108 + c;
      w_upd[c] = 104 + c;
      w_add[8 + c] += 100 + c + 108 + c;
      w_add[c] += 104 + c;
    }
    w_e[5] = -5;
    w_e[8] = -6;
    ExpectValues(Read(ar, r_upd), w_upd, d, 0, "scatter_nd update");
    ExpectValues(Read(ar, r_add), w_add, d, 0, "scatter_nd add");
    ExpectValues(Read(ar, e_upd), w_e, d, 0, "scatter_nd elements");
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("argmax / argmin (first occurrence, NaN), cumsum (exclusive, dtypes), topk") {
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  // argmax/argmin along axis 1 of [2, 4, 3] with ties, and over the flattened tensor.
  const Shape xs = {2, 4, 3};
  Vals xv = RandomVals(24, 11, -3, 3, true);
  for (DType d : {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kFloat16, DType::kBool}) {
    INFO(Name(d));
    Vals v = xv;
    for (double& e : v) e = Convert(d, d == DType::kBool ? e > 0 : e);
    Tensor x = Input(ar, "x", d, xs, v);
    Tensor mx = Alloc(ar, "mx", DType::kInt64, {2, 3}),
           mn = Alloc(ar, "mn", DType::kInt32, {2, 1, 3});
    Tensor all = Alloc(ar, "all", DType::kInt64, {});
    Run([&](msc_vk::Program& p) {
      ops::ArgMax(p, x, mx, 1, false);
      ops::ArgMin(p, x, mn, -2, true);
      ops::ArgMax(p, x, all, std::nullopt, false);
    });
    Vals wmx, wmn;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 3; ++k) {
        int bmx = 0, bmn = 0;
        for (int j = 1; j < 4; ++j) {
          if (v[(i * 4 + j) * 3 + k] > v[(i * 4 + bmx) * 3 + k]) bmx = j;
          if (v[(i * 4 + j) * 3 + k] < v[(i * 4 + bmn) * 3 + k]) bmn = j;
        }
        wmx.push_back(bmx);
        wmn.push_back(bmn);
      }
    ExpectValues(Read(ar, mx), wmx, DType::kInt64, 0, "argmax");
    ExpectValues(Read(ar, mn), wmn, DType::kInt32, 0, "argmin");
    ExpectValues(Read(ar, all),
                 {static_cast<double>(std::max_element(v.begin(), v.end()) - v.begin())},
                 DType::kInt64, 0, "argmax flat");
  }
  Tensor nanx = Input(ar, "nanx", DType::kFloat32, {5}, {1, kNaN, 3, kNaN, -1});
  Tensor nmx = Alloc(ar, "nmx", DType::kInt64, {}), nmn = Alloc(ar, "nmn", DType::kInt64, {});
  Run([&](msc_vk::Program& p) {
    ops::ArgMax(p, nanx, nmx, 0, false);
    ops::ArgMin(p, nanx, nmn, 0, false);
  });
  ExpectValues(Read(ar, nmx), {1}, DType::kInt64, 0, "argmax NaN");
  ExpectValues(Read(ar, nmn), {1}, DType::kInt64, 0, "argmin NaN");

  // cumsum: float axis 1 (inclusive, exclusive), int32 -> int64 beyond int32, bool -> int64.
  Tensor cx = Input(ar, "cx", DType::kFloat32, {2, 3, 2}, Iota(12, 1));
  Tensor c1 = Alloc(ar, "c1", DType::kFloat32, {2, 3, 2}),
         c2 = Alloc(ar, "c2", DType::kFloat32, {2, 3, 2});
  Tensor ci = Input(ar, "ci", DType::kInt32, {3}, {2000000000, 2000000000, -5});
  Tensor co = Alloc(ar, "co", DType::kInt64, {3});
  Tensor cb = Input(ar, "cb", DType::kBool, {2, 2}, {1, 0, 1, 1});
  Tensor cbo = Alloc(ar, "cbo", DType::kInt64, {4});
  Run([&](msc_vk::Program& p) {
    ops::Cumsum(p, cx, c1, 1);
    ops::Cumsum(p, cx, c2, -2, true);
    ops::Cumsum(p, ci, co, 0);
    ops::Cumsum(p, cb, cbo, std::nullopt);
  });
  ExpectValues(Read(ar, c1), {1, 2, 4, 6, 9, 12, 7, 8, 16, 18, 27, 30}, DType::kFloat32, 0);
  ExpectValues(Read(ar, c2), {0, 0, 1, 2, 4, 6, 0, 0, 7, 8, 16, 18}, DType::kFloat32, 0);
  ExpectValues(Read(ar, co), {2e9, 4e9, 4e9 - 5}, DType::kInt64, 0);
  ExpectValues(Read(ar, cbo), {1, 1, 2, 3}, DType::kInt64, 0);

  // topk: ties (stable: lower index first), NaN largest, smallest, values-only / indices-only.
  Tensor tx = Input(ar, "tx", DType::kFloat32, {2, 6}, {3, 1, 3, kNaN, -2, 3, 5, 5, 1, 0, 5, -1});
  Tensor tv = Alloc(ar, "tv", DType::kFloat32, {2, 3}), ti = Alloc(ar, "ti", DType::kInt64, {2, 3});
  Tensor sv = Alloc(ar, "sv", DType::kFloat32, {2, 2}), si = Alloc(ar, "si", DType::kInt32, {2, 2});
  Tensor ax0 = Input(ar, "ax0", DType::kInt64, {4, 2}, {5, 1, 7, 1, 6, 9, 7, 2});
  Tensor a0v = Alloc(ar, "a0v", DType::kInt64, {2, 2});
  Run([&](msc_vk::Program& p) {
    ops::TopK(p, tx, &tv, &ti, 3, -1, true);
    ops::TopK(p, tx, nullptr, &si, 2, 1, false);
    ops::TopK(p, tx, &sv, nullptr, 2, 1, false);
    ops::TopK(p, ax0, &a0v, nullptr, 2, 0, true);
  });
  ExpectValues(Read(ar, tv), {kNaN, 3, 3, 5, 5, 5}, DType::kFloat32, 0, "topk values");
  ExpectValues(Read(ar, ti), {3, 0, 2, 0, 1, 4}, DType::kInt64, 0, "topk indices");
  ExpectValues(Read(ar, si), {4, 1, 5, 3}, DType::kInt32, 0, "topk smallest indices");
  ExpectValues(Read(ar, sv), {-2, 1, -1, 0}, DType::kFloat32, 0, "topk smallest values");
  ExpectValues(Read(ar, a0v), {7, 9, 7, 2}, DType::kInt64, 0, "topk axis 0");
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError([&] { ops::TopK(p, tx, &tv, nullptr, 7, -1, true); },
                   "topk 'tv': k = 7 is outside [1, 6]");
  vkt::ExpectError([&] { ops::ArgMax(p, tx, Alloc(ar, "am", DType::kFloat32, {2}), 1, false); },
                   "argmax 'am': output 'am' float32 [2] must be int64 or int32");
}

TEST_CASE("+ext kernels need optional device features; float32/int32 kernels do not") {
  msc_vk::ContextOptions o;
  o.validation = true;
  o.disable_optional_features = true;
  msc_vk::Context ctx(o);
  CHECK_FALSE(ctx.features().shader_int64);
  vkt::Arena ar(ctx, 1 << 16);
  Tensor a = Input(ar, "a", DType::kInt32, {4}, {1, 2, 3, 4});
  Tensor s = Alloc(ar, "s", DType::kInt32, {4}), f = Alloc(ar, "f", DType::kFloat32, {4});
  Run(
      [&](msc_vk::Program& p) {
        ops::Add(p, a, a, s);
        ops::Astype(p, a, f);
      },
      ctx);
  ExpectValues(Read(ar, s), {2, 4, 6, 8}, DType::kInt32);
  ExpectValues(Read(ar, f), {1, 2, 3, 4}, DType::kFloat32);
  msc_vk::Program p(ctx);
  vkt::ExpectError([&] { ops::Astype(p, a, Alloc(ar, "as_bool", DType::kBool, {4})); },
                   "kernel 'as_bool' (shader 'unary+ext'): needs the Vulkan device feature "
                   "shaderInt64 (64-bit integer arithmetic), which device " +
                       ctx.info().name + " does not support");
  vkt::ExpectNoValidationMessages(ctx);
  if (vkt::Ctx().features().shader_int64) {
    CHECK(vkt::Ctx().features().storage_buffer_8bit_access);
    CHECK(vkt::Ctx().features().storage_buffer_16bit_access);
  }
}
