// IEEE 754 binary16 (float16) and bfloat16 <-> float32 conversions, as numpy and torch do them:
// round to nearest even, overflow to +-inf, NaN kept NaN (quiet). The generated Vulkan runtime has
// its own copy (runtime/vulkan/dtype.cc): it ships standalone and cannot include generator code.
#pragma once

#include <cstdint>
#include <cstring>

namespace msc {

/// binary16 bits -> float (exact: every half is a float).
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);  // normal: rebias 15 -> 127
  } else if (man == 0) {
    bits = sign;  // +-0
  } else {        // subnormal half: normalize
    exp = 113;
    while (!(man & 0x400u)) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// float -> binary16 bits, rounded to nearest even; beyond 65504 (after rounding) gives +-inf.
inline uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf / NaN (a NaN stays a quiet NaN with the top payload bits)
    return sign |
           (abs > 0x7f800000u ? static_cast<uint16_t>(0x7e00u | ((abs >> 13) & 0x3ffu)) : 0x7c00u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  if (abs < 0x38800000u) {                        // the result is subnormal (or zero)
    if (abs < 0x33000000u) return sign;           // at most half the smallest subnormal
    const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - (abs >> 23);  // 14..24
    uint32_t h = man >> shift;
    const uint32_t rest = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u))) ++h;
    return sign | static_cast<uint16_t>(h);
  }
  uint32_t h = (abs >> 13) - (112u << 10);  // rebias the exponent, keep 10 mantissa bits
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
  return sign | static_cast<uint16_t>(h);
}

/// float -> bfloat16 bits (the top 16 bits of the float), rounded to nearest even.
inline uint16_t FloatToBfloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace msc
