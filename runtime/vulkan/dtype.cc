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
