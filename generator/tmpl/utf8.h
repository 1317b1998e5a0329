// UTF-8 well-formedness for the engine's JSON reader (json_parse.cc).
//
// Well-formed UTF-8 as the Unicode Standard defines it (ch. 3, table 3-7 "Well-Formed UTF-8 Byte
// Sequences"; RFC 3629): no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF,
// no truncated sequence: what Python's json.loads and nlohmann::json accept. The rest of the
// generator uses this one too (generator/common/utf8.h).
#pragma once

#include <cstddef>

namespace msc::tmpl {

/// Length (1..4) of the well-formed UTF-8 sequence starting at `p`, of which `left` >= 1 bytes
/// are readable; 0 when none starts there (a continuation or overlong lead byte, 0xF5..0xFF, a
/// bad continuation, a surrogate, a value above U+10FFFF, or a sequence cut off by `left`).
inline size_t Utf8SequenceLength(const unsigned char* p, size_t left) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (table 3-7)
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong 3-byte forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong 4-byte forms
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;  // 0x80..0xC1 (continuation or overlong lead), 0xF5..0xFF
  }
  if (len > left || p[1] < lo || p[1] > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  }
  return len;
}

}  // namespace msc::tmpl
