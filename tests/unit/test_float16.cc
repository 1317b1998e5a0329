// generator/common/float16.h: float16 / bfloat16 conversions as numpy / torch do them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "generator/common/float16.h"

namespace {
float Bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
}  // namespace

TEST_CASE("float16: round trip of every finite half and the rounding edges (numpy float16)") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (nan) continue;
    CHECK(msc::FloatToHalf(msc::HalfToFloat(static_cast<uint16_t>(h))) == h);
  }
  CHECK(msc::FloatToHalf(1.0f) == 0x3c00);
  CHECK(msc::FloatToHalf(-0.0f) == 0x8000);
  CHECK(msc::FloatToHalf(65504.0f) == 0x7bff);                      // the largest half
  CHECK(msc::FloatToHalf(65519.0f) == 0x7bff);                      // rounds down
  CHECK(msc::FloatToHalf(65520.0f) == 0x7c00);                      // the tie rounds to even: inf
  CHECK(msc::FloatToHalf(std::ldexp(1.0f, -24)) == 0x0001);         // smallest subnormal
  CHECK(msc::FloatToHalf(std::ldexp(1.0f, -25)) == 0x0000);         // tie to even: 0
  CHECK(msc::FloatToHalf(3 * std::ldexp(1.0f, -25)) == 0x0002);     // tie to even: 2
  CHECK(msc::FloatToHalf(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie to even (down)
  CHECK(msc::FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie to even (up)
  CHECK(msc::FloatToHalf(-std::numeric_limits<float>::infinity()) == 0xfc00);
  const uint16_t qnan = msc::FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  CHECK((qnan & 0x7c00u) == 0x7c00u);
  CHECK((qnan & 0x3ffu) != 0);
  CHECK(std::isnan(msc::HalfToFloat(qnan)));
}

TEST_CASE("bfloat16: round to nearest even on the top 16 bits, NaN stays NaN") {
  CHECK(msc::FloatToBfloat16(1.0f) == 0x3f80);
  CHECK(msc::FloatToBfloat16(Bits(0x3f808000u)) == 0x3f80);      // tie, even below
  CHECK(msc::FloatToBfloat16(Bits(0x3f818000u)) == 0x3f82);      // tie, even above
  CHECK(msc::FloatToBfloat16(Bits(0x3f808001u)) == 0x3f81);      // above the tie
  CHECK(msc::FloatToBfloat16(Bits(0x7f7fffffu)) == 0x7f80);      // FLT_MAX rounds to inf
  const uint16_t nan = msc::FloatToBfloat16(Bits(0x7f800001u));  // a signalling NaN
  CHECK((nan & 0x7f80u) == 0x7f80u);
  CHECK((nan & 0x7fu) != 0);
}
