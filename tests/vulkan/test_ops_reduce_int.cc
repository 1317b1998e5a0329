// Numerical tests of the reductions (runtime/vulkan/ops_reduce.cc, shaders/common/reduce.glsl)
// on int32, int64, bool and float16 tensors against CPU loops written here: integers compared
// exactly (sum / prod wrap as two's complement, as numpy / TVM), with values beyond 2^24 (int32)
// and 2^53 (int64) so that a float32 (or double) accumulation would fail; bool sum / prod / max /
// min are any / all / any / all; float16 within half-precision rounding. Run under validation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::DType;
using msc_vk::Shape;
using msc_vk::Tensor;

namespace {

enum Op { kSum, kProd, kMax, kMin, kMean, kVariance, kStd };
const char* const kOpNames[] = {"sum", "prod", "max", "min", "mean", "variance", "std"};

void Call(msc_vk::Program& p, Op op, const Tensor& x, const Tensor& y,
          const std::vector<int64_t>& axes, bool keepdims) {
  switch (op) {
    case kSum:
      return ops::Sum(p, x, y, axes, keepdims);
    case kProd:
      return ops::Prod(p, x, y, axes, keepdims);
    case kMax:
      return ops::Max(p, x, y, axes, keepdims);
    case kMin:
      return ops::Min(p, x, y, axes, keepdims);
    case kMean:
      return ops::Mean(p, x, y, axes, keepdims);
    case kVariance:
      return ops::Variance(p, x, y, axes, keepdims);
    default:
      return ops::Std(p, x, y, axes, keepdims);
  }
}

// A tensor of dtype d and shape s in the test arena (allocated as float32 words, then retyped).
Tensor Alloc(vkt::Arena& ar, const std::string& name, DType d, const Shape& s) {
  const int64_t bytes = msc_vk::NumElements(s) * static_cast<int64_t>(msc_vk::DTypeSize(d));
  Tensor t = ar.Alloc(name, {std::max<int64_t>(1, (bytes + 3) / 4)});
  t.dtype = d;
  t.shape = s;
  return t;
}

// Integer / bool tensors hold their values as int64 here; stored in the tensor's width.
Tensor InputInts(vkt::Arena& ar, const std::string& name, DType d, const Shape& s,
                 const std::vector<int64_t>& v) {
  Tensor t = Alloc(ar, name, d, s);
  const size_t es = msc_vk::DTypeSize(d);
  std::vector<uint8_t> b(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    if (d == DType::kInt64) {
      std::memcpy(b.data() + i * 8, &v[i], 8);
    } else if (d == DType::kInt32) {
      const int32_t w = static_cast<int32_t>(v[i]);
      std::memcpy(b.data() + i * 4, &w, 4);
    } else {
      b[i] = v[i] != 0 ? 1 : 0;
    }
  }
  ar.buffer().Upload(t.offset, b.data(), b.size());
  return t;
}

std::vector<int64_t> ReadInts(vkt::Arena& ar, const Tensor& t) {
  std::vector<uint8_t> b(t.bytes());
  ar.buffer().Download(t.offset, b.data(), b.size());
  std::vector<int64_t> v(t.numel());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t.dtype == DType::kInt64) {
      std::memcpy(&v[i], b.data() + i * 8, 8);
    } else if (t.dtype == DType::kInt32) {
      int32_t w;
      std::memcpy(&w, b.data() + i * 4, 4);
      v[i] = w;
    } else {
      CHECK_MESSAGE(b[i] <= 1, "bool byte " << int(b[i]) << " at " << i);
      v[i] = b[i];
    }
  }
  return v;
}

// For each element of x (row-major), the row-major index of its output (reduced dims dropped).
std::vector<int64_t> OutputIndex(const Shape& xs, const std::vector<bool>& red, Shape* ys,
                                 bool keepdims) {
  ys->clear();
  for (size_t d = 0; d < xs.size(); ++d) {
    if (!red[d])
      ys->push_back(xs[d]);
    else if (keepdims)
      ys->push_back(1);
  }
  std::vector<int64_t> out(msc_vk::NumElements(xs));
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (int d = static_cast<int>(xs.size()) - 1; d >= 0; --d) {
      const int64_t c = rest % xs[d];
      rest /= xs[d];
      if (!red[d]) {
        o += c * scale;
        scale *= xs[d];
      }
    }
    out[i] = o;
  }
  return out;
}

// Integer reference: 64-bit two's complement arithmetic (unsigned, no overflow UB), then
// truncated to `bits` (32: int32 wraps the same way, its result is the low word). Bool (bits
// 1): the integer result != 0.
std::vector<int64_t> RefInts(Op op, const std::vector<int64_t>& x, const std::vector<int64_t>& oi,
                             size_t ny, int bits) {
  std::vector<uint64_t> acc(ny);
  std::vector<int64_t> m(ny);
  for (size_t j = 0; j < ny; ++j) {
    acc[j] = op == kProd ? 1 : 0;
    m[j] = op == kMax ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t j = oi[i];
    const uint64_t u = static_cast<uint64_t>(x[i]);
    if (op == kSum) acc[j] += u;
    if (op == kProd) acc[j] *= u;
    if (op == kMax) m[j] = std::max(m[j], x[i]);
    if (op == kMin) m[j] = std::min(m[j], x[i]);
  }
  std::vector<int64_t> y(ny);
  for (size_t j = 0; j < ny; ++j) {
    const int64_t v = (op == kMax || op == kMin) ? m[j] : static_cast<int64_t>(acc[j]);
    y[j] = bits == 64 ? v : (bits == 32 ? static_cast<int32_t>(static_cast<uint32_t>(v)) : v != 0);
  }
  return y;
}

struct Case {
  Shape x;
  std::vector<int64_t> axes;
  bool keepdims;
};
// Covers: one invocation per output and the cooperative path (innermost reduced run >= 64; on
// CPU devices also at most 8 outputs of >= 8192 elements: the last two), strided rows, all axes,
// a 6-D alternating pattern.
const Case kCases[] = {
    {{2, 3, 4, 5, 2, 3}, {1, 3, 5}, false},
    {{4, 130}, {1}, false},
    {{70, 3, 90}, {0, 2}, true},
    {{300, 4}, {}, false},
    {{5, 6}, {0}, true},
    {{3, 100}, {0}, false},
    {{3, 8200}, {1}, false},
    {{91, 100}, {}, false},
};

std::vector<bool> Reduced(const Case& c) {
  std::vector<bool> red(c.x.size(), c.axes.empty());
  for (int64_t a : c.axes) red[a < 0 ? a + c.x.size() : a] = true;
  return red;
}

// Values of dtype d for op: int32 around +-2^30 (sums wrap; a float32 sum or max would lose the
// low bits), int64 around +-2^62 / 2^40 (beyond 2^53), prod factors small odd numbers and some
// large ones so products wrap. bool: by output oi[i] % 3 all true, all false or random, so any
// and all take both values.
std::vector<int64_t> Values(DType d, Op op, const std::vector<int64_t>& oi, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> v(oi.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t r = rng();
    if (d == DType::kBool) {
      const int64_t cls = oi[i] % 3;
      v[i] = cls == 0 ? 1 : (cls == 1 ? 0 : static_cast<int64_t>(r & 1));
    } else if (op == kProd) {
      const int64_t small = static_cast<int64_t>(r % 7) - 3;  // -3..3
      v[i] = (r >> 60) == 0 ? static_cast<int64_t>(r >> 8) - (int64_t{1} << 54) + 1
                            : (small == 0 ? 1 : small);
    } else if (d == DType::kInt32) {
      v[i] = static_cast<int32_t>(static_cast<uint32_t>(r)) / 2 + 16777217;  // |v| ~ 2^30
    } else {
      v[i] = (r >> 63) ? static_cast<int64_t>(r >> 1)  // ~2^62 (sums wrap)
                       : static_cast<int64_t>(r >> 23) - (int64_t{1} << 40) + 3;  // ~2^40
    }
    if (d == DType::kInt32) v[i] = static_cast<int32_t>(static_cast<uint32_t>(v[i]));
  }
  return v;
}

}  // namespace

TEST_CASE("reduce: sum/prod/max/min exact on int32 / int64, any/all on bool") {
  uint32_t seed = 4000;
  for (DType d : {DType::kInt32, DType::kInt64, DType::kBool}) {
    const int bits = d == DType::kInt64 ? 64 : (d == DType::kInt32 ? 32 : 1);
    for (const Case& c : kCases) {
      const std::vector<bool> red = Reduced(c);
      Shape ys;
      const std::vector<int64_t> oi = OutputIndex(c.x, red, &ys, c.keepdims);
      for (Op op : {kSum, kProd, kMax, kMin}) {
        INFO(kOpNames[op] << " " << msc_vk::DTypeName(d) << " of " << msc_vk::ShapeToString(c.x));
        vkt::Arena ar(vkt::Ctx(), 1 << 20);
        const std::vector<int64_t> xv = Values(d, op, oi, ++seed);
        Tensor x = InputInts(ar, "x", d, c.x, xv), y = Alloc(ar, kOpNames[op], d, ys);
        msc_vk::Program p(vkt::Ctx());
        Call(p, op, x, y, c.axes, c.keepdims);
        CHECK(p.num_dispatches() == 1);
        p.Run();
        const std::vector<int64_t> want = RefInts(op, xv, oi, msc_vk::NumElements(ys), bits);
        const std::vector<int64_t> got = ReadInts(ar, y);
        size_t bad = 0, first = 0;
        for (size_t j = 0; j < want.size(); ++j) {
          if (got[j] != want[j] && bad++ == 0) first = j;
        }
        CHECK_MESSAGE(bad == 0, bad << " of " << want.size() << " outputs differ, first at "
                                    << first << ": got " << got[first] << ", want " << want[first]);
      }
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("reduce: hand-checked integer extremes") {
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  // int32: 2^24 + 1 is not a float32; the sum wraps past 2^31.
  Tensor x32 = InputInts(ar, "x32", DType::kInt32, {4}, {16777217, 16777216, 2147483647, 2});
  Tensor s32 = Alloc(ar, "s32", DType::kInt32, {}), mx32 = Alloc(ar, "mx32", DType::kInt32, {2}),
         mn32 = Alloc(ar, "mn32", DType::kInt32, {2});
  Tensor x32b = x32;
  x32b.shape = {2, 2};
  // int64: 2^53 + 1 is not a double; the product wraps past 2^63.
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor x64 = InputInts(ar, "x64", DType::kInt64, {3}, {big, big, -1});
  Tensor s64 = Alloc(ar, "s64", DType::kInt64, {1}), p64 = Alloc(ar, "p64", DType::kInt64, {}),
         mx64 = Alloc(ar, "mx64", DType::kInt64, {});
  msc_vk::Program p(vkt::Ctx());
  ops::Sum(p, x32, s32, {}, false);
  ops::Max(p, x32b, mx32, {1}, false);
  ops::Min(p, x32b, mn32, {0}, false);
  ops::Sum(p, x64, s64, {0}, true);
  ops::Prod(p, x64, p64, {}, false);
  ops::Max(p, x64, mx64, {-1}, false);
  p.Run();
  // 16777217 + 16777216 + 2147483647 + 2 = 2181038082 -> wraps to -2113929214.
  CHECK(ReadInts(ar, s32) == std::vector<int64_t>{-2113929214});
  CHECK(ReadInts(ar, mx32) == std::vector<int64_t>{16777217, 2147483647});
  CHECK(ReadInts(ar, mn32) == std::vector<int64_t>{16777217, 2});  // a float path: 16777216
  CHECK(ReadInts(ar, s64) == std::vector<int64_t>{2 * big - 1});
  // (2^53 + 1)^2 * -1 mod 2^64 = -(2^106 + 2^54 + 1) mod 2^64 = -(2^54 + 1).
  CHECK(ReadInts(ar, p64) == std::vector<int64_t>{-((int64_t{1} << 54) + 1)});
  CHECK(ReadInts(ar, mx64) == std::vector<int64_t>{big});
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("reduce: float16 in and out, computed in float32") {
  uint32_t seed = 5000;
  for (const Case& c : kCases) {
    const std::vector<bool> red = Reduced(c);
    Shape ys;
    const std::vector<int64_t> oi = OutputIndex(c.x, red, &ys, c.keepdims);
    const size_t ny = msc_vk::NumElements(ys);
    for (Op op : {kSum, kProd, kMax, kMin, kMean, kVariance, kStd}) {
      INFO(kOpNames[op] << " float16 of " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      const std::vector<float> xf = op == kProd ? vkt::Random(oi.size(), ++seed, 0.97f, 1.03f)
                                                : vkt::Random(oi.size(), ++seed, -2.0f, 3.0f);
      std::vector<uint16_t> xh(xf.size());
      std::vector<double> xd(xf.size());
      for (size_t i = 0; i < xf.size(); ++i) {
        xh[i] = msc_vk::FloatToHalf(xf[i]);
        xd[i] = msc_vk::HalfToFloat(xh[i]);
      }
      Tensor x = Alloc(ar, "x", DType::kFloat16, c.x), y = Alloc(ar, "y", DType::kFloat16, ys);
      ar.buffer().Upload(x.offset, xh.data(), xh.size() * 2);
      msc_vk::Program p(vkt::Ctx());
      Call(p, op, x, y, c.axes, c.keepdims);
      p.Run();
      // Double reference over the widened inputs.
      std::vector<double> acc(ny, op == kProd ? 1.0 : 0.0), cnt(ny, 0.0);
      const double inf = std::numeric_limits<double>::infinity();
      if (op == kMax) acc.assign(ny, -inf);
      if (op == kMin) acc.assign(ny, inf);
      for (size_t i = 0; i < xd.size(); ++i) {
        double& a = acc[oi[i]];
        a = op == kProd
                ? a * xd[i]
                : (op == kMax ? std::max(a, xd[i]) : (op == kMin ? std::min(a, xd[i]) : a + xd[i]));
        cnt[oi[i]] += 1;
      }
      if (op >= kMean) {
        std::vector<double> sq(ny, 0.0);
        for (size_t i = 0; i < xd.size(); ++i) {
          const double dv = xd[i] - acc[oi[i]] / cnt[oi[i]];
          sq[oi[i]] += dv * dv;
        }
        for (size_t j = 0; j < ny; ++j) {
          const double mean = acc[j] / cnt[j], var = sq[j] / cnt[j];
          acc[j] = op == kMean ? mean : (op == kVariance ? var : std::sqrt(var));
        }
      }
      std::vector<uint16_t> yh(ny);
      ar.buffer().Download(y.offset, yh.data(), yh.size() * 2);
      std::vector<float> got(ny), want(ny);
      for (size_t j = 0; j < ny; ++j) {
        got[j] = msc_vk::HalfToFloat(yh[j]);
        want[j] = static_cast<float>(acc[j]);
      }
      // Max / min select an input: exact. Else the float16 rounding of the output (2^-11
      // relative) plus float32 accumulation.
      if (op == kMax || op == kMin)
        vkt::ExpectClose(got, want, 0.0, 0.0, kOpNames[op]);
      else
        vkt::ExpectClose(got, want, 2e-3, 1e-3, kOpNames[op]);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("reduce: dtype errors") {
  vkt::Arena ar(vkt::Ctx(), 1 << 16);
  msc_vk::Program p(vkt::Ctx());
  Tensor i32 = Alloc(ar, "i32", DType::kInt32, {2, 3}), b = Alloc(ar, "b", DType::kBool, {2, 3});
  vkt::ExpectError([&] { ops::Mean(p, i32, Alloc(ar, "m", DType::kInt32, {2}), {1}, false); },
                   "mean 'm': takes float32 or float16 tensors, got 'i32' int32 [2, 3]");
  vkt::ExpectError([&] { ops::Std(p, b, Alloc(ar, "s", DType::kBool, {2}), {1}, false); },
                   "std 's': takes float32 or float16 tensors");
  vkt::ExpectError([&] { ops::Variance(p, i32, Alloc(ar, "v", DType::kInt32, {2}), {1}, false); },
                   "variance 'v': takes float32 or float16 tensors");
  vkt::ExpectError(
      [&] { ops::Sum(p, i32, Alloc(ar, "s64", DType::kInt64, {2}), {1}, false); },
      "sum 's64': input 'i32' int32 [2, 3] and output 's64' int64 [2] differ in dtype");
  vkt::ExpectError(
      [&] {
        ops::Max(p, Alloc(ar, "u8", DType::kUInt8, {4}), Alloc(ar, "mu", DType::kUInt8, {}), {},
                 false);
      },
      "the Vulkan kernels take float32, float16, int32, int64 and bool");
  CHECK(p.num_dispatches() == 0);
}
