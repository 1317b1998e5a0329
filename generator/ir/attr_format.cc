#include "generator/ir/attr_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace msc::ir {

namespace {

template <typename T>
std::string FloatStr(T value, int max_digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%f", static_cast<double>(value));
  if (static_cast<T>(std::strtod(buf, nullptr)) == value) return buf;
  for (int digits = 1; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(value));
    if (static_cast<T>(std::strtod(buf, nullptr)) == value) break;
  }
  return buf;
}

template <typename T, typename F>
std::string Join(const std::vector<T>& values, F fmt) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    out += fmt(values[i]);
    if (values.size() == 1 || i + 1 < values.size()) out += ",";
  }
  return out;
}

}  // namespace

std::string AttrInt(int64_t value) { return std::to_string(value); }
std::string AttrBool(bool value) { return value ? "1" : "0"; }
std::string AttrFloat(float value) { return FloatStr<float>(value, 9); }
std::string AttrDouble(double value) { return FloatStr<double>(value, 17); }
std::string AttrInts(const std::vector<int64_t>& values) { return Join(values, AttrInt); }
std::string AttrFloats(const std::vector<float>& values) { return Join(values, AttrFloat); }
std::string AttrStrs(const std::vector<std::string>& values) {
  return Join(values, [](const std::string& s) { return s; });
}

}  // namespace msc::ir
