#include "generator/emit/naming.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace msc::emit {

std::string IdentifierPool::Make(const std::string& name, const std::string& fallback) {
  std::string id;
  for (unsigned char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (ok) {
      id += static_cast<char>(c);
    } else if (id.empty() || id.back() != '_') {
      id += '_';
    }
  }
  // Trim separators that came from punctuation at the ends ("../x" -> "x"), keep real ones.
  while (id.size() > 1 && id.back() == '_' && name.back() != '_') id.pop_back();
  size_t start = 0;
  while (start < id.size() && id[start] == '_' && name[start] != '_') ++start;
  id = id.substr(start);
  if (id.empty() || id == "_") id = fallback;
  if (id[0] >= '0' && id[0] <= '9') id = "n_" + id;
  if (id.size() > 1 && id[0] == '_' && (id[1] == '_' || (id[1] >= 'A' && id[1] <= 'Z')))
    id = "n" + id;
  if (id.size() > 80) id = id.substr(0, 80);
  if (reserved_.count(id)) id += "_";
  std::string candidate = id;
  for (int k = 1; used_.count(candidate) || reserved_.count(candidate); ++k)
    candidate = id + "_" + std::to_string(k);
  used_.insert(candidate);
  return candidate;
}

namespace {

/// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8Length(const std::string& s, size_t i) {
  unsigned char c = s[i];
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 0;
  return len;
}

std::string Hex2(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02x", c);
  return buf;
}

}  // namespace

std::string PyStringLiteral(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f)
      out += "\\x" + Hex2(c);
    else if (c < 0x80)
      out += static_cast<char>(c);
    else {
      size_t len = Utf8Length(s, i);
      if (len == 0) {
        out += "\\udc" + Hex2(c);  // Python's surrogateescape for an undecodable byte
        ++i;
        continue;
      }
      // U+2028/U+2029 and other separators are fine inside Python string literals.
      out += s.substr(i, len);
      i += len;
      continue;
    }
    ++i;
  }
  return out + "\"";
}

std::string CStringLiteral(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c == '?')
      out += "\\?";  // no trigraphs, ever
    else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string PyFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[40];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf = "d.ddde[+-]XX": digits and exponent.
  std::string s(buf);
  size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::atoi(s.c_str() + e + 1);
  bool neg = mant[0] == '-';
  if (neg) mant = mant.substr(1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof(eb), "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(-exp - 1, '0') + digits;
  } else if (static_cast<int>(digits.size()) <= exp + 1) {
    out = digits + std::string(exp + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
  }
  return neg ? "-" + out : out;
}

std::string PyLiteral(const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::null:
      return "None";
    case nlohmann::ordered_json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
      return v.dump();
    case nlohmann::ordered_json::value_t::number_float: {
      double d = v.get<double>();
      if (std::isinf(d)) return d > 0 ? "float(\"inf\")" : "float(\"-inf\")";
      if (std::isnan(d)) return "float(\"nan\")";
      return PyFloatRepr(d);
    }
    case nlohmann::ordered_json::value_t::string:
      return PyStringLiteral(v.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + PyLiteral(v[i]);
      return out + "]";
    }
    case nlohmann::ordered_json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out += (first ? "" : ", ") + PyStringLiteral(it.key()) + ": " + PyLiteral(it.value());
        first = false;
      }
      return out + "}";
    }
    default:
      return "None";
  }
}

std::string CLiteral(const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::null:
      return "nullptr";
    case nlohmann::ordered_json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
      return v.dump();
    case nlohmann::ordered_json::value_t::number_float: {
      double d = v.get<double>();
      if (std::isinf(d)) return d > 0 ? "INFINITY" : "-INFINITY";
      if (std::isnan(d)) return "NAN";
      return PyFloatRepr(d);  // shortest round-trip digits are a valid C++ double literal
    }
    case nlohmann::ordered_json::value_t::string:
      return CStringLiteral(v.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::string out = "{";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + CLiteral(v[i]);
      return out + "}";
    }
    default:
      return CStringLiteral(v.dump());
  }
}

}  // namespace msc::emit
