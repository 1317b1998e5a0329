// UTF-8 validation for text read from files: YAML (opdefs, backend.yaml) and ONNX names, on the
// template engine's Utf8SequenceLength (generator/tmpl/utf8.h).
//
// Well-formed UTF-8 as the Unicode Standard defines it (ch. 3, table 3-7 "Well-Formed UTF-8 Byte
// Sequences"; RFC 3629): no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF,
// no truncated sequence. This is what nlohmann::json accepts when it dumps a string, so text that
// passes here can be written to graph.json / safetensors headers without its type_error.316.
#pragma once

#include <cstddef>
#include <string>

#include "generator/tmpl/utf8.h"

namespace msc {

/// Length (1..4) of the well-formed UTF-8 sequence at `p` (`left` >= 1 bytes readable), 0 when
/// none starts there: the template engine's function (the engine depends on nothing outside
/// generator/tmpl, so the one definition lives there).
using tmpl::Utf8SequenceLength;

/// Byte offset of the first byte of `s` that does not start (or continue) a well-formed UTF-8
/// sequence, or std::string::npos when all of `s` is well-formed UTF-8.
inline size_t FindInvalidUtf8(const std::string& s) {
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(u + i, s.size() - i);
    if (!len) return i;
    i += len;
  }
  return std::string::npos;
}

/// "0x8B": the byte at `offset` of `s` in hex, for error messages.
inline std::string HexByte(const std::string& s, size_t offset) {
  static const char* digits = "0123456789ABCDEF";
  const unsigned char c = static_cast<unsigned char>(s[offset]);
  return std::string("0x") + digits[c >> 4] + digits[c & 0xF];
}

}  // namespace msc
