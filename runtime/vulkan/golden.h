// Golden-data comparison: per-output max absolute / max relative error and a pass/fail verdict.
//
// An element passes iff |actual - expected| <= atol + rtol * |expected| (numpy.allclose's rule);
// NaN matches only NaN (assert_allclose's equal_nan), equal infinities pass. Defaults for float32
// (and float16, compared after widening to float32): atol = rtol = 1e-3. Integer and bool outputs
// compare exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace msc_vk {

struct Tolerance {
  double atol = 1e-3;
  double rtol = 1e-3;
};

struct CompareResult {
  std::string name;
  size_t count = 0;          // elements compared
  size_t mismatches = 0;     // elements outside tolerance (NaN included)
  double max_abs_error = 0;  // max |actual - expected| over finite pairs
  double max_rel_error = 0;  // max |actual - expected| / |expected| over expected != 0
  size_t worst_index = 0;    // element with the largest excess over the tolerance
  double worst_actual = 0, worst_expected = 0;
  Tolerance tol;
  bool pass() const { return mismatches == 0; }
  // "output 'y' (1000 values): max_abs=1.19e-07 max_rel=2.38e-07 (atol=0.001 rtol=0.001) PASS",
  // plus the first worst element and the mismatch count when it fails.
  std::string Summary() const;
};

// Compares n float32 values. Sizes are the caller's business (see RunMain for shape checks).
CompareResult CompareFloat32(const std::string& name, const float* actual, const float* expected,
                             size_t n, Tolerance tol = {});
// Compares n float16 values (IEEE half bits) with the float32 rule above, after widening.
CompareResult CompareFloat16(const std::string& name, const uint16_t* actual,
                             const uint16_t* expected, size_t n, Tolerance tol = {});
// Compares raw bytes exactly (integer and bool outputs): mismatches = differing elements.
CompareResult CompareExact(const std::string& name, const uint8_t* actual, const uint8_t* expected,
                           size_t n, size_t element_size);

}  // namespace msc_vk
