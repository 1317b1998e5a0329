// Element types and shapes as the generated code and the weight/golden files name them.
//
// DType names follow MSC (`float32`, `int64`, ...); safetensors names (`F32`, `I64`, ...) are the
// on-disk spelling. Shapes are row-major (C order) int64 dimension lists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace msc_vk {

enum class DType { kFloat32, kFloat16, kFloat64, kInt8, kInt16, kInt32, kInt64, kUInt8, kBool };

using Shape = std::vector<int64_t>;

// Bytes per element (bool: 1).
size_t DTypeSize(DType dtype);
// MSC name: "float32", "int64", "bool", ...
const char* DTypeName(DType dtype);
// safetensors name: "F32", "I64", "BOOL", ...
const char* SafetensorsDTypeName(DType dtype);
// Parses a safetensors dtype name; returns false for names this runtime does not know.
bool ParseSafetensorsDType(const std::string& name, DType* dtype);

// IEEE 754 binary16 <-> binary32 (float16 tensors are stored as half bits; kernels compute in
// float32). FloatToHalf rounds to nearest even (as numpy/torch), overflows to +-inf, keeps NaN.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

// Product of the dimensions (1 for a scalar, i.e. an empty shape).
int64_t NumElements(const Shape& shape);
// "[1, 3, 224, 224]".
std::string ShapeToString(const Shape& shape);

}  // namespace msc_vk
