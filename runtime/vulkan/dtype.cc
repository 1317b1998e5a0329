#include "dtype.h"

#include <cstring>

#include "error.h"

namespace msc_vk {
namespace {

struct DTypeInfo {
  DType dtype;
  size_t size;
  const char* msc_name;
  const char* st_name;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, 4, "float32", "F32"}, {DType::kFloat16, 2, "float16", "F16"},
    {DType::kFloat64, 8, "float64", "F64"}, {DType::kInt8, 1, "int8", "I8"},
    {DType::kInt16, 2, "int16", "I16"},     {DType::kInt32, 4, "int32", "I32"},
    {DType::kInt64, 8, "int64", "I64"},     {DType::kUInt8, 1, "uint8", "U8"},
    {DType::kBool, 1, "bool", "BOOL"},
};

const DTypeInfo& Info(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info;
  }
  throw Error("unknown DType value " + std::to_string(static_cast<int>(dtype)));
}

}  // namespace

size_t DTypeSize(DType dtype) { return Info(dtype).size; }
const char* DTypeName(DType dtype) { return Info(dtype).msc_name; }
const char* SafetensorsDTypeName(DType dtype) { return Info(dtype).st_name; }

bool ParseSafetensorsDType(const std::string& name, DType* dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (name == info.st_name) {
      *dtype = info.dtype;
      return true;
    }
  }
  return false;
}

float HalfToFloat(uint16_t h) {
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

uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // inf / NaN (quiet NaN keeps the top payload bits)
    return sign |
           (abs > 0x7f800000u ? static_cast<uint16_t>(0x7e00u | ((abs >> 13) & 0x3ffu)) : 0x7c00u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  if (abs < 0x38800000u) {                        // result is subnormal (or zero)
    if (abs < 0x33000000u) return sign;           // below half the smallest subnormal
    const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - (abs >> 23);  // 14..24
    uint32_t h = man >> shift;
    const uint32_t rest = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u))) ++h;
    return sign | static_cast<uint16_t>(h);
  }
  uint32_t h = ((abs >> 13) - (112u << 10));  // rebias exponent, keep 10 mantissa bits
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
  return sign | static_cast<uint16_t>(h);
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace msc_vk
