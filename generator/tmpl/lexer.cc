#include "generator/tmpl/lexer.h"

#include <cstdlib>
#include <cstring>

#include "generator/tmpl/error.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

// Length of the Python whitespace character at s[i] (0 if none).
size_t SpaceLen(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return pystr::IsSpace(c) ? 1 : 0;
  size_t j = i + 1;
  while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
  std::u32string u = pystr::Decode(s.substr(i, j - i));
  return (u.size() == 1 && pystr::IsSpace(u[0])) ? j - i : 0;
}

size_t SkipSpace(const std::string& s, size_t i) {
  size_t n;
  while (i < s.size() && (n = SpaceLen(s, i)) > 0) i += n;
  return i;
}

// Python str.rstrip() on a byte range [b, e): returns the new end.
size_t RStripEnd(const std::string& s, size_t b, size_t e) {
  while (e > b) {
    size_t start = e - 1;
    while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (SpaceLen(s, start) != e - start) break;
    e = start;
  }
  return e;
}

class Lexer {
 public:
  Lexer(const std::string& src, const std::string& file) : s_(src), file_(file) {}

  std::vector<Token> Run() {
    size_t pos = 0;
    while (pos < s_.size()) pos = LexData(pos);
    Token eof;
    eof.type = Tok::kEof;
    SetPos(eof, s_.size());
    out_.push_back(eof);
    return std::move(out_);
  }

 private:
  [[noreturn]] void Fail(size_t at, const std::string& msg) {
    Token t;
    SetPos(t, at);
    throw TemplateError(file_ + ":" + std::to_string(t.line) + ":" + std::to_string(t.col) + ": " +
                        msg);
  }

  void SetPos(Token& t, size_t at) {
    if (at < cur_off_) cur_off_ = 0, cur_line_ = 1, cur_col_ = 1;
    while (cur_off_ < at && cur_off_ < s_.size()) {
      char c = s_[cur_off_];
      if (c == '\n') {
        ++cur_line_;
        cur_col_ = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++cur_col_;
      }
      ++cur_off_;
    }
    // cur_col_ counts the code point starting at cur_off_ only after we pass its lead byte.
    t.line = cur_line_;
    t.col = cur_col_;
  }

  void Emit(Tok type, std::string text, size_t at) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    SetPos(t, at);
    out_.push_back(std::move(t));
  }

  // Matches "{%[-+]? raw [-]?%}" at pos; returns end offset or 0.
  size_t MatchRawBegin(size_t pos, char* sign, bool* strip_after) {
    size_t i = pos + 2;
    *sign = 0;
    if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) *sign = s_[i++];
    i = SkipSpace(s_, i);
    if (s_.compare(i, 3, "raw") != 0) return 0;
    i = SkipSpace(s_, i + 3);
    *strip_after = false;
    if (s_.compare(i, 3, "-%}") == 0) {
      *strip_after = true;
      return SkipSpace(s_, i + 3);
    }
    if (s_.compare(i, 2, "%}") == 0) return i + 2;
    return 0;
  }

  size_t LexData(size_t pos) {
    size_t tag = pos;
    while (true) {
      tag = s_.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= s_.size()) {
        Emit(Tok::kData, s_.substr(pos), pos);
        return s_.size();
      }
      char c = s_[tag + 1];
      if (c == '{' || c == '%' || c == '#') break;
      ++tag;
    }
    char kind = s_[tag + 1];
    char sign =
        (tag + 2 < s_.size() && (s_[tag + 2] == '-' || s_[tag + 2] == '+')) ? s_[tag + 2] : 0;
    bool raw_strip_after = false;
    char raw_sign = 0;
    size_t raw_end = kind == '%' ? MatchRawBegin(tag, &raw_sign, &raw_strip_after) : 0;
    if (raw_end) sign = raw_sign;
    size_t data_end = sign == '-' ? RStripEnd(s_, pos, tag) : tag;
    if (data_end > pos) Emit(Tok::kData, s_.substr(pos, data_end - pos), pos);
    if (raw_end) return LexRaw(tag, raw_end);
    size_t body = tag + 2 + (sign ? 1 : 0);
    if (kind == '#') return LexComment(tag, body);
    return LexTag(tag, body, kind == '{');
  }

  size_t LexRaw(size_t tag, size_t pos) {
    // (.*?)({%[-+]?\s*endraw\s*(-%}\s*|%}|+%})
    size_t search = pos;
    while (true) {
      size_t t = s_.find("{%", search);
      if (t == std::string::npos) Fail(tag, "missing end of raw directive");
      size_t i = t + 2;
      char sign = 0;
      if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) sign = s_[i++];
      i = SkipSpace(s_, i);
      if (s_.compare(i, 6, "endraw") == 0) {
        i = SkipSpace(s_, i + 6);
        size_t end = 0;
        if (s_.compare(i, 3, "-%}") == 0)
          end = SkipSpace(s_, i + 3);
        else if (s_.compare(i, 3, "+%}") == 0)
          end = i + 3;
        else if (s_.compare(i, 2, "%}") == 0)
          end = i + 2;
        if (end) {
          size_t data_end = sign == '-' ? RStripEnd(s_, pos, t) : t;
          if (data_end > pos) Emit(Tok::kData, s_.substr(pos, data_end - pos), pos);
          return end;
        }
      }
      search = t + 2;
    }
  }

  size_t LexComment(size_t tag, size_t pos) {
    size_t e = s_.find("#}", pos);
    if (e == std::string::npos) Fail(tag, "missing end of comment tag");
    if (e > pos && s_[e - 1] == '-') return SkipSpace(s_, e + 2);
    return e + 2;
  }

  size_t LexTag(size_t tag, size_t pos, bool variable) {
    Emit(variable ? Tok::kVarBegin : Tok::kBlockBegin, variable ? "{{" : "{%", tag);
    const char* end = variable ? "}}" : "%}";
    std::vector<char> balance;
    size_t i = pos;
    while (true) {
      i = SkipSpace(s_, i);
      if (i >= s_.size()) return i;  // parser reports the missing end tag
      if (balance.empty()) {
        size_t end_at = 0;
        if (s_.compare(i, 2, end) == 0)
          end_at = i + 2;
        else if ((s_[i] == '-' || (s_[i] == '+' && !variable)) && s_.compare(i + 1, 2, end) == 0)
          end_at = s_[i] == '-' ? SkipSpace(s_, i + 3) : i + 3;
        if (end_at) {
          Emit(variable ? Tok::kVarEnd : Tok::kBlockEnd, end, i);
          return end_at;
        }
      }
      i = LexToken(i, balance);
    }
  }

  size_t LexNumber(size_t i) {
    // Float: digits(_digits)* ( .digits [e[+-]digits] | e[+-]digits )
    auto digits = [&](size_t j) {  // (\d+_)*\d+ ; returns end or j if none
      size_t k = j;
      if (k >= s_.size() || !IsDigit(s_[k])) return j;
      while (true) {
        while (k < s_.size() && IsDigit(s_[k])) ++k;
        if (k + 1 < s_.size() && s_[k] == '_' && IsDigit(s_[k + 1])) {
          ++k;
          continue;
        }
        return k;
      }
    };
    auto exponent = [&](size_t j) {
      if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
        size_t k = j + 1;
        if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
        size_t d = digits(k);
        if (d > k) return d;
      }
      return j;
    };
    size_t mant = digits(i);
    size_t fend = i;
    if (mant < s_.size() && s_[mant] == '.' && mant + 1 < s_.size() && IsDigit(s_[mant + 1])) {
      size_t frac = digits(mant + 1);
      fend = exponent(frac);
    } else {
      size_t e = exponent(mant);
      if (e > mant) fend = e;
    }
    if (fend > i && !(i > 0 && s_[i - 1] == '.')) {
      std::string txt;
      for (size_t k = i; k < fend; ++k)
        if (s_[k] != '_') txt.push_back(s_[k]);
      Token t;
      t.type = Tok::kFloat;
      t.text = s_.substr(i, fend - i);
      t.fval = std::strtod(txt.c_str(), nullptr);
      SetPos(t, i);
      out_.push_back(t);
      return fend;
    }
    // Integer.
    int base = 10;
    size_t k = i;
    std::string txt;
    if (s_[i] == '0' && i + 1 < s_.size() && strchr("bBoOxX", s_[i + 1])) {
      char p = static_cast<char>(s_[i + 1] | 0x20);
      base = p == 'b' ? 2 : p == 'o' ? 8 : 16;
      auto ok = [&](char c) {
        int d = IsDigit(c)                               ? c - '0'
                : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                         : 99;
        return d < base;
      };
      k = i + 2;
      while (true) {
        if (k < s_.size() && ok(s_[k]))
          txt.push_back(s_[k++]);
        else if (k + 1 < s_.size() && s_[k] == '_' && ok(s_[k + 1]))
          ++k;
        else
          break;
      }
      if (txt.empty()) k = i + 1, txt = "0", base = 10;  // just "0"
    } else if (s_[i] == '0') {
      k = i + 1;
      txt = "0";
      while (true) {
        if (k < s_.size() && s_[k] == '0')
          ++k;
        else if (k + 1 < s_.size() && s_[k] == '_' && s_[k + 1] == '0')
          k += 2;
        else
          break;
      }
    } else {
      k = digits(i);
      for (size_t m = i; m < k; ++m)
        if (s_[m] != '_') txt.push_back(s_[m]);
    }
    Token t;
    t.type = Tok::kInt;
    t.text = s_.substr(i, k - i);
    SetPos(t, i);
    if (!pystr::ParseInt(txt, base, &t.ival))
      Fail(i, "integer literal " + t.text + " is out of the supported 64-bit range");
    out_.push_back(t);
    return k;
  }

  size_t LexString(size_t i) {
    char q = s_[i];
    size_t k = i + 1;
    std::string raw;
    while (k < s_.size() && s_[k] != q) {
      if (s_[k] == '\\') {
        if (k + 1 >= s_.size()) break;
        raw.push_back(s_[k++]);
      }
      raw.push_back(s_[k++]);
    }
    if (k >= s_.size()) Fail(i, std::string("unexpected char '") + q + "'");
    Token t;
    t.type = Tok::kString;
    t.text = Unescape(raw, i);
    SetPos(t, i);
    out_.push_back(std::move(t));
    return k + 1;
  }

  std::string Unescape(const std::string& r, size_t at) {
    std::string out;
    for (size_t k = 0; k < r.size(); ++k) {
      if (r[k] != '\\' || k + 1 >= r.size()) {
        out.push_back(r[k]);
        continue;
      }
      char c = r[++k];
      switch (c) {
        case '\n':
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '\'':
          out.push_back('\'');
          break;
        case '"':
          out.push_back('"');
          break;
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case 'x':
        case 'u':
        case 'U': {
          size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (size_t m = 1; m <= n; ++m) {
            char h = k + m < r.size() ? r[k + m] : 'g';
            int d = IsDigit(h)                               ? h - '0'
                    : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10
                                                             : -1;
            if (d < 0) Fail(at, "invalid \\" + std::string(1, c) + " escape in string literal");
            cp = cp * 16 + d;
          }
          if (cp > 0x10FFFF) Fail(at, "invalid \\U escape in string literal");
          pystr::AppendCodePoint(out, cp);
          k += n;
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            uint32_t cp = c - '0';
            for (int m = 0; m < 2 && k + 1 < r.size() && r[k + 1] >= '0' && r[k + 1] <= '7'; ++m)
              cp = cp * 8 + (r[++k] - '0');
            pystr::AppendCodePoint(out, cp);
          } else {
            out.push_back('\\');
            out.push_back(c);
          }
      }
    }
    return out;
  }

  size_t LexToken(size_t i, std::vector<char>& balance) {
    char c = s_[i];
    if (IsDigit(c)) return LexNumber(i);
    if (IsNameStart(c)) {
      size_t k = i;
      while (k < s_.size() && IsNameChar(s_[k])) ++k;
      Emit(Tok::kName, s_.substr(i, k - i), i);
      return k;
    }
    if (c == '\'' || c == '"') return LexString(i);
    static const char* const kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/",
                                       "*",  "%",  "~",  "[",  "]",  "(",  ")", "{", "}",
                                       ">",  "<",  "=",  ".",  ":",  "|",  ",", ";"};
    for (const char* op : kOps) {
      size_t n = strlen(op);
      if (s_.compare(i, n, op) != 0) continue;
      if (c == '(' || c == '[' || c == '{') {
        balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      } else if (c == ')' || c == ']' || c == '}') {
        if (balance.empty()) Fail(i, std::string("unexpected '") + c + "'");
        if (balance.back() != c)
          Fail(i, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
        balance.pop_back();
      }
      Emit(Tok::kOp, op, i);
      return i + n;
    }
    size_t n = 1;
    while (i + n < s_.size() && (static_cast<unsigned char>(s_[i + n]) & 0xC0) == 0x80) ++n;
    Fail(i, "unexpected char '" + s_.substr(i, n) + "'");
  }

  const std::string& s_;
  const std::string& file_;
  std::vector<Token> out_;
  size_t cur_off_ = 0;
  int cur_line_ = 1;
  int cur_col_ = 1;
};

}  // namespace

std::vector<Token> Lex(const std::string& source, const std::string& file) {
  // Normalize newlines and drop one trailing newline (keep_trailing_newline=False).
  std::string s;
  s.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      s.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      s.push_back(source[i]);
    }
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return Lexer(s, file).Run();
}

std::string Describe(const Token& t) {
  switch (t.type) {
    case Tok::kData:
      return "template data";
    case Tok::kVarBegin:
      return "begin of print statement";
    case Tok::kVarEnd:
      return "end of print statement";
    case Tok::kBlockBegin:
      return "begin of statement block";
    case Tok::kBlockEnd:
      return "end of statement block";
    case Tok::kName:
      return "'" + t.text + "'";
    case Tok::kString:
      return "string " + pystr::Repr(t.text);
    case Tok::kInt:
    case Tok::kFloat:
      return "number " + t.text;
    case Tok::kOp:
      return "'" + t.text + "'";
    case Tok::kEof:
      return "end of template";
  }
  return "token";
}

}  // namespace msc::tmpl
