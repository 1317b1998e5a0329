#include "generator/tmpl/pystr.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace msc::tmpl::pystr {
namespace {

// Decodes one code point at s[i], advancing i. Invalid sequences yield U+FFFD and skip one byte.
char32_t DecodeAt(const std::string& s, size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
  if (n < 0 || c >= 0xF8 || i + static_cast<size_t>(n) >= s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = c & (0x3F >> n);
  for (int k = 1; k <= n; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  i += n + 1;
  return cp;
}

bool IsAsciiLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsAsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }
char ToUpperC(char c) { return IsAsciiLower(c) ? static_cast<char>(c - 32) : c; }
char ToLowerC(char c) { return IsAsciiUpper(c) ? static_cast<char>(c + 32) : c; }

bool IsLineBreak(char32_t cp) {
  return cp == '\n' || cp == '\r' || cp == 0x0b || cp == 0x0c || cp == 0x1c || cp == 0x1d ||
         cp == 0x1e || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

}  // namespace

std::u32string Decode(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) out.push_back(DecodeAt(s, i));
  return out;
}

void AppendCodePoint(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Encode(const std::u32string& s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t cp : s) AppendCodePoint(out, cp);
  return out;
}

size_t Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<size_t> Boundaries(const std::string& s) {
  std::vector<size_t> b;
  b.reserve(s.size() + 1);
  size_t i = 0;
  while (i < s.size()) {
    b.push_back(i);
    DecodeAt(s, i);
  }
  b.push_back(s.size());
  return b;
}

bool IsPrintable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad) return false;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) ||
      (cp >= 0x205f && cp <= 0x206f) || cp == 0x3000 || cp == 0xfeff ||
      (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xd800 && cp <= 0xf8ff) ||
      (cp >= 0x600 && cp <= 0x605) || cp == 0x61c || cp == 0x6dd || cp == 0x70f || cp == 0x180e ||
      cp >= 0xf0000 || (cp >= 0xe0000 && cp <= 0xe0fff))
    return false;
  return true;
}

std::string Repr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  size_t i = 0;
  static const char* hex = "0123456789abcdef";
  while (i < s.size()) {
    char32_t cp = DecodeAt(s, i);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7f) {
      out += "\\x";
      out.push_back(hex[cp >> 4]);
      out.push_back(hex[cp & 15]);
    } else if (cp < 0x7f || IsPrintable(cp)) {
      AppendCodePoint(out, cp);
    } else {
      int digits = cp <= 0xff ? 2 : cp <= 0xffff ? 4 : 8;
      out += digits == 2 ? "\\x" : digits == 4 ? "\\u" : "\\U";
      for (int k = digits - 1; k >= 0; --k) out.push_back(hex[(cp >> (4 * k)) & 15]);
    }
  }
  out.push_back(quote);
  return out;
}

namespace {

// Recently printed floats: repr by bit pattern (direct-mapped; exact, as the key is the bits).
struct ReprCache {
  static constexpr size_t kSlots = 64;
  uint64_t bits[kSlots] = {};
  char text[kSlots][32] = {};
  uint8_t len[kSlots] = {};  // 0: empty
  static size_t Slot(uint64_t b) { return (b * 0x9E3779B97F4A7C15ull) >> 58; }
};
thread_local ReprCache g_repr_cache;

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof(b));
  return b;
}

void Remember(double d, const char* text, size_t n) {
  if (n == 0 || n >= sizeof(ReprCache::text[0])) return;
  ReprCache& c = g_repr_cache;
  const uint64_t b = Bits(d);
  const size_t s = ReprCache::Slot(b);
  c.bits[s] = b;
  std::memcpy(c.text[s], text, n);
  c.len[s] = static_cast<uint8_t>(n);
}

void AppendFloatReprUncached(std::string& out, double d);

}  // namespace

void NoteFloatRepr(double d, std::string_view repr) { Remember(d, repr.data(), repr.size()); }

void AppendFloatRepr(std::string& out, double d) {
  const ReprCache& c = g_repr_cache;
  const uint64_t b = Bits(d);
  const size_t s = ReprCache::Slot(b);
  if (c.len[s] && c.bits[s] == b) {
    out.append(c.text[s], c.len[s]);
    return;
  }
  const size_t start = out.size();
  AppendFloatReprUncached(out, d);
  Remember(d, out.data() + start, out.size() - start);
}

namespace {

void AppendFloatReprUncached(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "inf" : "-inf";
    return;
  }
  // Shortest round-trip digits (Python's repr uses the same), laid out by Python's rules:
  // positional for 1e-4 <= |d| < 1e16, else d.ddde[+-]XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  const char* p = buf;
  if (*p == '-') {
    out.push_back('-');
    ++p;
  }
  char digits[32];
  size_t nd = 0;
  const char* e = p;
  while (e < res.ptr && *e != 'e') {
    if (*e != '.') digits[nd++] = *e;
    ++e;
  }
  int exp10 = 0;
  std::from_chars(e + 1 + (e[1] == '+' ? 1 : 0), res.ptr, exp10);
  const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-decpt), '0');
      out.append(digits, nd);
    } else if (static_cast<size_t>(decpt) >= nd) {
      out.append(digits, nd);
      out.append(static_cast<size_t>(decpt) - nd, '0');
      out += ".0";
    } else {
      out.append(digits, static_cast<size_t>(decpt));
      out.push_back('.');
      out.append(digits + decpt, nd - static_cast<size_t>(decpt));
    }
  } else {
    out.push_back(digits[0]);
    if (nd > 1) {
      out.push_back('.');
      out.append(digits + 1, nd - 1);
    }
    const int x = decpt - 1;
    out += x < 0 ? "e-" : "e+";
    const int ax = x < 0 ? -x : x;
    if (ax < 10) out.push_back('0');
    char eb[8];
    auto r = std::to_chars(eb, eb + sizeof(eb), ax);
    out.append(eb, static_cast<size_t>(r.ptr - eb));
  }
}

}  // namespace

std::string FloatRepr(double d) {
  std::string out;
  AppendFloatRepr(out, d);
  return out;
}

bool IsSpace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

namespace {

bool IsAscii(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// Simple (1:1) case mappings for Latin-1, Latin Extended-A, Greek and Cyrillic; ß upper-cases
// to "SS" and İ lower-cases to "i̇" as in Python.
void AppendUpper(std::u32string& out, char32_t c) {
  if (c >= 'a' && c <= 'z') return out.push_back(c - 32);
  if (c < 0x80) return out.push_back(c);
  if (c == 0xDF) {
    out.append(U"SS");
    return;
  }
  if (c == 0xB5) return out.push_back(0x39C);
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return out.push_back(c - 0x20);
  if (c == 0xFF) return out.push_back(0x178);
  if (c == 0x131) return out.push_back('I');
  if (c == 0x17F) return out.push_back('S');
  if ((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
    return out.push_back(c & 1 ? c - 1 : c);
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
    return out.push_back(c & 1 ? c : c - 1);
  if ((c >= 0x3B1 && c <= 0x3C1) || (c >= 0x3C3 && c <= 0x3CB)) return out.push_back(c - 0x20);
  if (c == 0x3C2) return out.push_back(0x3A3);
  if (c == 0x3AC) return out.push_back(0x386);
  if (c >= 0x3AD && c <= 0x3AF) return out.push_back(c - 0x25);
  if (c == 0x3CC) return out.push_back(0x38C);
  if (c == 0x3CD || c == 0x3CE) return out.push_back(c - 0x3F);
  if (c >= 0x430 && c <= 0x44F) return out.push_back(c - 0x20);
  if (c >= 0x450 && c <= 0x45F) return out.push_back(c - 0x50);
  out.push_back(c);
}

void AppendLower(std::u32string& out, char32_t c) {
  if (c >= 'A' && c <= 'Z') return out.push_back(c + 32);
  if (c < 0x80) return out.push_back(c);
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return out.push_back(c + 0x20);
  if (c == 0x178) return out.push_back(0xFF);
  if (c == 0x130) {
    out.append(U"i\u0307");
    return;
  }
  if ((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
    return out.push_back(c & 1 ? c : c + 1);
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
    return out.push_back(c & 1 ? c + 1 : c);
  if ((c >= 0x391 && c <= 0x3A1) || (c >= 0x3A3 && c <= 0x3AB)) return out.push_back(c + 0x20);
  if (c == 0x386) return out.push_back(0x3AC);
  if (c >= 0x388 && c <= 0x38A) return out.push_back(c + 0x25);
  if (c == 0x38C) return out.push_back(0x3CC);
  if (c == 0x38E || c == 0x38F) return out.push_back(c + 0x3F);
  if (c >= 0x410 && c <= 0x42F) return out.push_back(c + 0x20);
  if (c >= 0x400 && c <= 0x40F) return out.push_back(c + 0x50);
  out.push_back(c);
}

bool IsUpperCp(char32_t c) {
  std::u32string l;
  AppendLower(l, c);
  return l.size() != 1 || l[0] != c;
}
bool IsLowerCp(char32_t c) {
  if (c == 0xDF || c == 0x138 || c == 0x149) return true;
  std::u32string u;
  AppendUpper(u, c);
  return u.size() != 1 || u[0] != c;
}

}  // namespace

bool IsCased(char32_t c) { return IsUpperCp(c) || IsLowerCp(c); }

bool IsDigitChar(char32_t c) {
  return (c >= '0' && c <= '9') || c == 0xB2 || c == 0xB3 || c == 0xB9 ||
         (c >= 0x660 && c <= 0x669) || (c >= 0xFF10 && c <= 0xFF19);
}

bool IsAlphaChar(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c < 0x100)
    return c == 0xAA || c == 0xB5 || c == 0xBA || (c >= 0xC0 && c != 0xD7 && c != 0xF7);
  if (c <= 0x2C1) return true;  // Latin Extended, IPA
  if (c >= 0x370 && c <= 0x3FF)
    return c != 0x375 && c != 0x37E && c != 0x384 && c != 0x385 && c != 0x387 && c != 0x3F6 &&
           c >= 0x376;
  if (c >= 0x400 && c <= 0x52F) return c <= 0x481 || c >= 0x48A;  // Cyrillic without marks
  if ((c >= 0x531 && c <= 0x556) || (c >= 0x561 && c <= 0x587)) return true;  // Armenian
  if ((c >= 0x5D0 && c <= 0x5EA) || (c >= 0x620 && c <= 0x64A)) return true;  // Hebrew, Arabic
  if (c >= 0x1E00 && c <= 0x1FFF) return true;  // Latin Extended Additional, Greek Extended
  if ((c >= 0x3041 && c <= 0x3096) || (c >= 0x30A1 && c <= 0x30FA)) return true;  // kana
  if ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF))
    return true;
  if ((c >= 0xFF21 && c <= 0xFF3A) || (c >= 0xFF41 && c <= 0xFF5A)) return true;
  return c >= 0x20000 && c <= 0x2FFFF;
}

bool IsWordChar(char32_t c) {
  return c == '_' || IsAlphaChar(c) || IsDigitChar(c) || c == 0xBC || c == 0xBD || c == 0xBE;
}

std::string Upper(const std::string& s) {
  if (IsAscii(s)) {
    std::string r = s;
    for (char& c : r) c = ToUpperC(c);
    return r;
  }
  std::u32string out;
  for (char32_t c : Decode(s)) AppendUpper(out, c);
  return Encode(out);
}

std::string Lower(const std::string& s) {
  if (IsAscii(s)) {
    std::string r = s;
    for (char& c : r) c = ToLowerC(c);
    return r;
  }
  std::u32string out;
  for (char32_t c : Decode(s)) AppendLower(out, c);
  return Encode(out);
}

std::string Capitalize(const std::string& s) {
  std::u32string u = Decode(s), out;
  for (size_t i = 0; i < u.size(); ++i) {
    if (i == 0)
      AppendUpper(out, u[i]);
    else
      AppendLower(out, u[i]);
  }
  return Encode(out);
}

std::string SwapCase(const std::string& s) {
  std::u32string out;
  for (char32_t c : Decode(s)) {
    if (IsUpperCp(c))
      AppendLower(out, c);
    else
      AppendUpper(out, c);
  }
  return Encode(out);
}

std::string Title(const std::string& s) {
  std::u32string out;
  bool prev_cased = false;
  for (char32_t c : Decode(s)) {
    bool cased = IsCased(c);
    if (prev_cased)
      AppendLower(out, c);
    else
      AppendUpper(out, c);
    prev_cased = cased;
  }
  return Encode(out);
}

bool IsLowerStr(const std::string& s) {
  bool cased = false;
  for (char32_t c : Decode(s)) {
    if (IsUpperCp(c)) return false;
    if (IsLowerCp(c)) cased = true;
  }
  return cased;
}

bool IsUpperStr(const std::string& s) {
  bool cased = false;
  for (char32_t c : Decode(s)) {
    if (IsLowerCp(c)) return false;
    if (IsUpperCp(c)) cased = true;
  }
  return cased;
}

std::string JinjaTitle(const std::string& s) {
  // "".join(item[0].upper() + item[1:].lower() for item in re.split(r"([-\s({\[<]+)", s) if item)
  std::u32string u = Decode(s);
  std::string out;
  auto is_sep = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || IsSpace(c);
  };
  size_t i = 0;
  while (i < u.size()) {
    size_t j = i;
    bool sep = is_sep(u[i]);
    while (j < u.size() && is_sep(u[j]) == sep) ++j;
    std::string item = Encode(u.substr(i, j - i));
    if (sep) {
      out += Upper(item.substr(0, 1)) + Lower(item.substr(1));
    } else {
      size_t first_len = 1;
      while (first_len < item.size() &&
             (static_cast<unsigned char>(item[first_len]) & 0xC0) == 0x80)
        ++first_len;
      out += Upper(item.substr(0, first_len)) + Lower(item.substr(first_len));
    }
    i = j;
  }
  return out;
}

std::string Strip(const std::string& s, const std::string* chars, bool left, bool right) {
  std::u32string u = Decode(s);
  std::u32string set = chars ? Decode(*chars) : std::u32string();
  auto strip_me = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : IsSpace(c);
  };
  size_t b = 0, e = u.size();
  if (left)
    while (b < e && strip_me(u[b])) ++b;
  if (right)
    while (e > b && strip_me(u[e - 1])) --e;
  return Encode(u.substr(b, e - b));
}

std::vector<std::string> Split(const std::string& s, const std::string* sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t f = s.find(*sep, pos);
      if (f == std::string::npos) break;
      out.push_back(s.substr(pos, f - pos));
      pos = f + sep->size();
    }
    out.push_back(s.substr(pos));
    return out;
  }
  std::u32string u = Decode(s);
  size_t i = 0;
  while (true) {
    while (i < u.size() && IsSpace(u[i])) ++i;
    if (i >= u.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.push_back(Encode(u.substr(i)));  // the remainder keeps its trailing whitespace
      break;
    }
    size_t j = i;
    while (j < u.size() && !IsSpace(u[j])) ++j;
    out.push_back(Encode(u.substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> RSplit(const std::string& s, const std::string* sep, int64_t maxsplit) {
  if (maxsplit < 0) return Split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t f = s.rfind(*sep, end - sep->size());
      if (f == std::string::npos) break;
      out.push_back(s.substr(f + sep->size(), end - f - sep->size()));
      end = f;
    }
    out.push_back(s.substr(0, end));
  } else {
    std::u32string u = Decode(s);
    size_t e = u.size();
    while (true) {
      while (e > 0 && IsSpace(u[e - 1])) --e;
      if (e == 0) break;
      if (static_cast<int64_t>(out.size()) >= maxsplit) {
        out.push_back(Encode(u.substr(0, e)));  // the remainder keeps its leading whitespace
        break;
      }
      size_t b = e;
      while (b > 0 && !IsSpace(u[b - 1])) --b;
      out.push_back(Encode(u.substr(b, e - b)));
      e = b;
    }
  }
  return std::vector<std::string>(out.rbegin(), out.rend());
}

std::vector<std::string> SplitLines(const std::string& s, bool keepends) {
  std::vector<std::string> out;
  std::u32string u = Decode(s);
  size_t i = 0, start = 0;
  while (i < u.size()) {
    if (IsLineBreak(u[i])) {
      size_t eol = i + 1;
      if (u[i] == '\r' && i + 1 < u.size() && u[i + 1] == '\n') eol = i + 2;
      out.push_back(Encode(u.substr(start, (keepends ? eol : i) - start)));
      start = i = eol;
    } else {
      ++i;
    }
  }
  if (start < u.size()) out.push_back(Encode(u.substr(start)));
  return out;
}

std::string Replace(const std::string& s, const std::string& old, const std::string& repl,
                    int64_t count) {
  std::string out;
  if (old.empty()) {
    std::vector<size_t> b = Boundaries(s);
    int64_t done = 0;
    for (size_t k = 0; k + 1 < b.size(); ++k) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      out.append(s, b[k], b[k + 1] - b[k]);
    }
    if (count < 0 || done < count) out += repl;
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t f = s.find(old, pos);
    if (f == std::string::npos) break;
    out.append(s, pos, f - pos);
    out += repl;
    pos = f + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

int64_t Count(const std::string& s, const std::string& sub) {
  if (sub.empty()) return static_cast<int64_t>(Length(s)) + 1;
  int64_t n = 0;
  size_t pos = 0;
  while ((pos = s.find(sub, pos)) != std::string::npos) {
    ++n;
    pos += sub.size();
  }
  return n;
}

int64_t Find(const std::string& s, const std::string& sub, bool reverse) {
  size_t f = reverse ? s.rfind(sub) : s.find(sub);
  if (f == std::string::npos) return -1;
  return static_cast<int64_t>(Length(s.substr(0, f)));
}

namespace {
// Strips Python whitespace and validates/removes digit-group underscores.
bool CleanNumber(const std::string& s, std::string* out) {
  std::string t = Strip(s, nullptr, true, true);
  out->clear();
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '_') {
      if (i == 0 || i + 1 >= t.size() || !std::isalnum(static_cast<unsigned char>(t[i - 1])) ||
          !std::isalnum(static_cast<unsigned char>(t[i + 1])))
        return false;
      continue;
    }
    out->push_back(t[i]);
  }
  return !out->empty();
}
}  // namespace

bool ParseInt(const std::string& s, int base, int64_t* out) {
  std::string t;
  if (!CleanNumber(s, &t)) return false;
  size_t i = 0;
  bool neg = false;
  if (t[i] == '+' || t[i] == '-') neg = t[i++] == '-';
  std::string low = Lower(t.substr(i));
  auto has_prefix = [&](const char* p) { return low.size() > 2 && low.compare(0, 2, p) == 0; };
  if (base == 0) {
    base = has_prefix("0x") ? 16 : has_prefix("0o") ? 8 : has_prefix("0b") ? 2 : 10;
    if (base == 10 && low.size() > 1 && low[0] == '0' &&
        low.find_first_not_of('0') != std::string::npos)
      return false;
  }
  if ((base == 16 && has_prefix("0x")) || (base == 8 && has_prefix("0o")) ||
      (base == 2 && has_prefix("0b")))
    low = low.substr(2);
  if (low.empty()) return false;
  unsigned __int128 v = 0;
  for (char c : low) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : 99;
    if (d >= base) return false;
    v = v * base + d;
    if (v > (static_cast<unsigned __int128>(1) << 64)) return false;
  }
  if (neg ? v > (static_cast<unsigned __int128>(1) << 63) : v > INT64_MAX) return false;
  *out = neg ? static_cast<int64_t>(-static_cast<__int128>(v)) : static_cast<int64_t>(v);
  return true;
}

bool ParseFloat(const std::string& s, double* out) {
  std::string t;
  if (!CleanNumber(s, &t)) return false;
  std::string low = Lower(t);
  size_t i = (low[0] == '+' || low[0] == '-') ? 1 : 0;
  std::string body = low.substr(i);
  if (body == "inf" || body == "infinity" || body == "nan") {
    double v = body == "nan" ? NAN : INFINITY;
    *out = low[0] == '-' ? -v : v;
    return true;
  }
  // digits [. digits] [e [sign] digits], at least one digit in mantissa
  size_t k = 0;
  bool mant = false;
  while (k < body.size() && std::isdigit(static_cast<unsigned char>(body[k]))) ++k, mant = true;
  if (k < body.size() && body[k] == '.') {
    ++k;
    while (k < body.size() && std::isdigit(static_cast<unsigned char>(body[k]))) ++k, mant = true;
  }
  if (!mant) return false;
  if (k < body.size() && body[k] == 'e') {
    ++k;
    if (k < body.size() && (body[k] == '+' || body[k] == '-')) ++k;
    size_t d0 = k;
    while (k < body.size() && std::isdigit(static_cast<unsigned char>(body[k]))) ++k;
    if (k == d0) return false;
  }
  if (k != body.size()) return false;
  *out = std::strtod(low.c_str(), nullptr);
  return true;
}

}  // namespace msc::tmpl::pystr
