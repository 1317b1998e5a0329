// Names are data, never code: turning graph names (any UTF-8, quotes, '../', keywords) into
// identifiers and string literals that are always valid in the generated languages.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace msc::emit {

/// Hands out unique identifiers ([A-Za-z_][A-Za-z0-9_]*) derived from arbitrary names.
/// Every byte outside [A-Za-z0-9_] becomes '_' (runs collapsed), a leading digit gets 'n_'
/// prepended, a leading '_' + uppercase gets 'n' prepended (reserved in C++), reserved words
/// (the backend's `reserved_names`: language keywords, module names) get a '_' suffix, and
/// duplicates get "_1", "_2", ... Same sequence of requests -> same identifiers (deterministic).
class IdentifierPool {
 public:
  explicit IdentifierPool(std::set<std::string> reserved) : reserved_(std::move(reserved)) {}
  /// A fresh unique identifier for `name`; `fallback` is used when nothing of `name` survives.
  std::string Make(const std::string& name, const std::string& fallback = "v");

 private:
  std::set<std::string> reserved_;
  std::set<std::string> used_;
};

/// Python string literal in double quotes: escapes \\ \" \n \r \t, other control bytes as \xNN;
/// valid UTF-8 is kept as is (Python 3 source is UTF-8); an invalid byte becomes \udcNN, the
/// code point Python's surrogateescape decoding gives it.
std::string PyStringLiteral(const std::string& s);
/// C/C++ string literal in double quotes: escapes \\ \" \n \r \t, every other byte outside
/// printable ASCII as a 3-digit octal escape (bounded, unlike \x), so UTF-8 round-trips exactly.
std::string CStringLiteral(const std::string& s);
/// A JSON value as a Python literal: None/True/False, ints, floats as repr (1e-05, 0.5,
/// float("inf")), strings via PyStringLiteral, lists [..], objects {..}.
std::string PyLiteral(const nlohmann::ordered_json& v);
/// A JSON value as a C++ literal: true/false, ints, floats with enough digits to round-trip
/// (as double; "INFINITY" for infinities), strings via CStringLiteral, lists {..}.
std::string CLiteral(const nlohmann::ordered_json& v);
/// Python's repr() of a double (shortest round-trip digits, 'e' form outside [1e-4, 1e16)).
std::string PyFloatRepr(double v);

}  // namespace msc::emit
