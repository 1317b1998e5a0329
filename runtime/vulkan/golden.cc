#include "golden.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "dtype.h"

namespace msc_vk {

std::string CompareResult::Summary() const {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "output '%s' (%zu values): max_abs=%.3g max_rel=%.3g (atol=%g rtol=%g) %s",
                name.c_str(), count, max_abs_error, max_rel_error, tol.atol, tol.rtol,
                pass() ? "PASS" : "FAIL");
  std::string s = buf;
  if (!pass()) {
    std::snprintf(
        buf, sizeof(buf),
        "; %zu of %zu values outside tolerance, worst at index %zu: got %.9g, expected %.9g",
        mismatches, count, worst_index, worst_actual, worst_expected);
    s += buf;
  }
  return s;
}

CompareResult CompareFloat32(const std::string& name, const float* actual, const float* expected,
                             size_t n, Tolerance tol) {
  CompareResult r;
  r.name = name;
  r.count = n;
  r.tol = tol;
  double worst_excess = -1;
  for (size_t i = 0; i < n; ++i) {
    const double a = actual[i], b = expected[i];
    double excess;  // > 0: outside tolerance
    if (std::isnan(a) && std::isnan(b)) {
      excess = -1;  // NaN where NaN is expected (numpy.testing.assert_allclose's equal_nan)
    } else if (std::isnan(a) || std::isnan(b)) {
      excess = INFINITY;
    } else if (a == b) {
      excess = -1;  // includes equal infinities
    } else {
      const double diff = std::fabs(a - b);
      if (std::isfinite(diff)) {
        if (diff > r.max_abs_error) r.max_abs_error = diff;
        if (b != 0 && diff / std::fabs(b) > r.max_rel_error) r.max_rel_error = diff / std::fabs(b);
      } else {
        r.max_abs_error = INFINITY;
      }
      excess = diff - (tol.atol + tol.rtol * std::fabs(b));
      if (std::isnan(excess)) excess = INFINITY;
    }
    if (excess > 0) ++r.mismatches;
    if (excess > worst_excess) {
      worst_excess = excess;
      r.worst_index = i;
      r.worst_actual = a;
      r.worst_expected = b;
    }
  }
  return r;
}

CompareResult CompareFloat16(const std::string& name, const uint16_t* actual,
                             const uint16_t* expected, size_t n, Tolerance tol) {
  std::vector<float> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = HalfToFloat(actual[i]);
    b[i] = HalfToFloat(expected[i]);
  }
  return CompareFloat32(name, a.data(), b.data(), n, tol);
}

CompareResult CompareExact(const std::string& name, const uint8_t* actual, const uint8_t* expected,
                           size_t n, size_t element_size) {
  CompareResult r;
  r.name = name;
  r.count = n;
  r.tol = {0, 0};
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(actual + i * element_size, expected + i * element_size, element_size) != 0) {
      if (r.mismatches++ == 0) r.worst_index = i;
      r.max_abs_error = 1;
    }
  }
  return r;
}

}  // namespace msc_vk
