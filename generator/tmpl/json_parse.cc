// JSON text -> native template values in one pass (ParseJsonValue), and nlohmann JSON -> native
// values (FromJsonDeep).
//
// The grammar is RFC 8259 (what nlohmann::json and Python's json.loads both accept): no comments,
// no trailing commas, no NaN/Infinity, strings are valid UTF-8 without raw control characters,
// \u escapes may form surrogate pairs but not lone surrogates; a UTF-8 byte order mark is skipped.
// Numbers without fraction/exponent are ints (Python's int; beyond 64 bits is an error here),
// others floats (correctly rounded; beyond the double range gives inf/0 as Python does).
// Object keys are shared: every occurrence of the same key text is one string with its hash
// computed once, interned process-wide when short (InternKey), which is what makes attribute
// lookups in the render a pointer compare. Objects of one shape (the same keys in the same order,
// the usual case) are parsed without hashing their keys: the key expected next is checked first.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <new>
#include <string>

#include "generator/tmpl/utf8.h"
#include "generator/tmpl/value.h"

namespace msc::tmpl {
namespace {

class JsonParser {
 public:
  JsonParser(std::string_view text, Arena* arena)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), arena_(arena) {
    // The items of the open arrays wait here: room for a long array up front (address space:
    // only the part used is touched), so that growing it does not copy it into fresh pages.
    list_stack_.reserve(std::min<size_t>(text.size() / 8, size_t{1} << 20) + 16);
  }

  Value ParseDocument() {
    if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF &&
        static_cast<unsigned char>(p_[1]) == 0xBB && static_cast<unsigned char>(p_[2]) == 0xBF)
      p_ += 3;
    SkipSpace();
    Value v = ParseValue(0);
    SkipSpace();
    if (p_ != end_) Fail("unexpected data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    int line = 1, col = 1;
    for (const char* q = begin_; q < p_ && q < end_; ++q) {
      if (*q == '\n') {
        ++line;
        col = 1;
      } else if ((static_cast<unsigned char>(*q) & 0xC0) != 0x80) {
        ++col;
      }
    }
    throw OpError("line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }

  void SkipSpace() {
    while (p_ < end_) {
      const char c = *p_;
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
        ++p_;
      else
        return;
    }
  }

  bool Literal(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }

  Value ParseValue(int depth) {
    if (p_ == end_) Fail("unexpected end of input (expected a value)");
    switch (*p_) {
      case '{':
        return ParseObject(depth + 1);
      case '[':
        return ParseArray(depth + 1);
      case '"':  // (values are not interned: a new string is cheaper than a lookup, which
                 // misses the cache on large documents; measured on tests/tmpl/bench.py)
        return Str(StringToken());
      case 't':
        if (Literal("true")) return Value::Bool(true);
        break;
      case 'f':
        if (Literal("false")) return Value::Bool(false);
        break;
      case 'n':
        if (Literal("null")) return Value();
        break;
      default:
        if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return ParseNumber();
    }
    Fail("unexpected character '" + std::string(1, *p_) + "' (expected a value)");
  }

  void CheckDepth(int depth) {
    if (depth > kMaxValueDepth)
      Fail("nesting too deep (more than " + std::to_string(kMaxValueDepth) + " levels)");
  }

  Value ParseArray(int depth) {
    CheckDepth(depth);
    ++p_;  // [
    const size_t base = list_stack_.size();
    SkipSpace();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return Value::Boxed(Value::Kind::kList, ListBox::Make(0, arena_));
    }
    while (true) {
      SkipSpace();
      list_stack_.push_back(ParseValue(depth));
      SkipSpace();
      if (p_ == end_) Fail("unexpected end of input (expected ',' or ']')");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != ']') Fail("expected ',' or ']'");
      ++p_;
      break;
    }
    ListBox* box = ListBox::Make(list_stack_.size() - base, arena_, list_stack_.data() + base);
    list_stack_.resize(base);
    return Value::Boxed(Value::Kind::kList, box);
  }

  Value ParseObject(int depth) {
    CheckDepth(depth);
    ++p_;  // {
    const size_t base = dict_stack_.size();
    SkipSpace();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return Value::Boxed(Value::Kind::kDict, DictBox::Make(0, arena_));
    }
    // Keys seen in this object by a bit each (key id mod 64): a repeated key meets its bit set.
    uint64_t seen = 0;
    bool maybe_repeated = false;
    uint32_t prev = kNoKey;  // the previous key of this object
    while (true) {
      SkipSpace();
      if (p_ == end_ || *p_ != '"') Fail("expected a string key");
      // Objects at one depth usually have the same keys in the same order: the key expected
      // here is the one that followed the previous key last time (or began the last object).
      const int d = std::min(depth, kPredictDepth - 1);
      const uint32_t id = Key(prev == kNoKey ? first_key_[d] : slots_[prev].next);
      if (prev == kNoKey)
        first_key_[d] = id;
      else
        slots_[prev].next = id;
      prev = id;
      const KeySlot& ks = slots_[id];
      const uint64_t bit = uint64_t{1} << (id & 63);
      maybe_repeated |= (seen & bit) != 0;
      seen |= bit;
      Value key = ks.global ? Value::Interned(ks.box) : Value::Boxed(Value::Kind::kString, ks.box);
      const uint64_t h = ks.box->hash;
      SkipSpace();
      if (p_ == end_ || *p_ != ':') Fail("expected ':' after an object key");
      ++p_;
      SkipSpace();
      Value v = ParseValue(depth);
      dict_stack_.push_back({std::move(key), std::move(v), h, false});
      SkipSpace();
      if (p_ == end_) Fail("unexpected end of input (expected ',' or '}')");
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != '}') Fail("expected ',' or '}'");
      ++p_;
      break;
    }
    // A repeated key: Python's dict keeps the first position and the last value.
    const size_t n = dict_stack_.size() - base;
    size_t unique = n;
    if (maybe_repeated) unique = MergeDuplicates(base);
    DictBox* box = DictBox::Make(unique, arena_, /*construct=*/false);
    size_t k = 0;
    for (size_t m = base; m < dict_stack_.size(); ++m) {
      Entry& e = dict_stack_[m];
      if (e.dup) continue;
      new (&box->entries()[k].key) Value(std::move(e.key));
      new (&box->entries()[k].value) Value(std::move(e.value));
      ++k;
    }
    box->BuildIndex();
    dict_stack_.resize(base);
    return Value::Boxed(Value::Kind::kDict, box);
  }

  // Marks later occurrences of a key in dict_stack_[base..] as duplicates (their value moved to
  // the first occurrence); returns the number of distinct keys.
  size_t MergeDuplicates(size_t base) {
    const size_t n = dict_stack_.size() - base;
    size_t unique = n;
    if (n <= 16) {
      for (size_t i = base + 1; i < dict_stack_.size(); ++i) {
        for (size_t j = base; j < i; ++j) {
          Entry& a = dict_stack_[j];
          Entry& b = dict_stack_[i];
          if (a.hash == b.hash && !a.dup && a.key.identity() == b.key.identity()) {  // interned
            a.value = std::move(b.value);
            b.dup = true;
            --unique;
            break;
          }
        }
      }
      return unique;
    }
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    std::vector<uint32_t> index(cap, 0);
    for (size_t i = base; i < dict_stack_.size(); ++i) {
      Entry& b = dict_stack_[i];
      size_t p = b.hash & (cap - 1);
      for (;; p = (p + 1) & (cap - 1)) {
        if (!index[p]) {
          index[p] = static_cast<uint32_t>(i - base + 1);
          break;
        }
        Entry& a = dict_stack_[base + index[p] - 1];
        if (a.hash == b.hash && a.key.s() == b.key.s()) {
          a.value = std::move(b.value);
          b.dup = true;
          --unique;
          break;
        }
      }
    }
    return unique;
  }

  // An object key (p_ at its opening quote): the id of its slot. `expect` is the key predicted
  // here (kNoKey: none): when the text matches it byte for byte (a plain key), it is taken
  // without decoding, hashing or a table lookup.
  uint32_t Key(uint32_t expect) {
    if (expect != kNoKey && slots_[expect].plain) {
      const std::string& t = slots_[expect].box->s;
      if (static_cast<size_t>(end_ - p_) > t.size() + 1 && p_[1 + t.size()] == '"' &&
          SameText(std::string_view(p_ + 1, t.size()), t)) {
        p_ += t.size() + 2;
        return expect;
      }
    }
    const std::string_view text = StringToken();
    return Intern(text, HashStr(text));
  }

  // The slot of the one shared string for `text` (hash `h`): keys are interned (a few distinct
  // texts, each repeated in many objects), so they take no more memory and carry their hash;
  // short ones process-wide (InternKey: an attribute lookup then compares pointers), longer
  // ones (or past InternKey's limit) in this document.
  uint32_t Intern(std::string_view text, uint64_t h) {
    if (index_.empty()) index_.assign(64, 0);
    size_t mask = index_.size() - 1;
    size_t p = h & mask;
    for (; index_[p]; p = (p + 1) & mask) {
      const KeySlot& k = slots_[index_[p] - 1];
      if (k.box->hash == h && SameText(k.box->s, text)) return index_[p] - 1;
    }
    KeySlot slot;
    if (const StrBox* global = InternKey(text, h)) {
      slot.box = global;
      slot.global = true;
    } else {
      StrBox* box = NewStr(text);
      box->hash = h;
      slot.box = box;
    }
    slot.plain = true;  // matches its JSON text as it is (no escapes, quotes, non-ASCII)
    for (unsigned char c : text)
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') slot.plain = false;
    const uint32_t id = static_cast<uint32_t>(slots_.size());
    slots_.push_back(slot);
    index_[p] = id + 1;
    if (slots_.size() * 2 > index_.size()) Grow();
    return id;
  }

  StrBox* NewStr(std::string_view text) {
    StrBox* box = new (arena_->Alloc(sizeof(StrBox))) StrBox(text);
    arena_->AdoptString(box);
    return box;
  }
  Value Str(std::string_view text) { return Value::Boxed(Value::Kind::kString, NewStr(text)); }

  // A string token's text: a view of the source when it has no escapes (the common case),
  // else decoded into scratch_.
  std::string_view StringToken() {
    const char* start = ++p_;  // after the quote
    while (true) {
      // Find the next byte that is '"', '\\', a control character or non-ASCII, 8 bytes at a
      // time (the first flagged byte of each word is exact).
      if (end_ - p_ >= 8) {
        uint64_t w;
        std::memcpy(&w, p_, 8);
        constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
        const uint64_t quote = w ^ (kOnes * '"'), slash = w ^ (kOnes * '\\');
        const uint64_t special = (((quote - kOnes) & ~quote) | ((slash - kOnes) & ~slash) |
                                  ((w - kOnes * 0x20) & ~w) | w) &
                                 kHigh;
        if (!special) {
          p_ += 8;
          continue;
        }
        p_ += __builtin_ctzll(special) >> 3;
      } else {
        while (p_ < end_) {
          const unsigned char c = static_cast<unsigned char>(*p_);
          if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
          ++p_;
        }
        if (p_ == end_) break;
      }
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        const std::string_view text(start, static_cast<size_t>(p_ - start));
        ++p_;
        return text;
      }
      if (c < 0x80) break;  // an escape or a control character
      const size_t n = Utf8Len();
      if (!n) break;
      p_ += n;
    }
    p_ = start - 1;  // escapes or an error: decode (and report) from the start
    ParseString(&scratch_);
    return scratch_;
  }

  void Grow() {
    index_.assign(index_.size() * 2, 0);
    const size_t mask = index_.size() - 1;
    for (uint32_t id = 0; id < slots_.size(); ++id) {
      size_t p = slots_[id].box->hash & mask;
      while (index_[p]) p = (p + 1) & mask;
      index_[p] = id + 1;
    }
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  uint32_t ParseU4() {
    if (end_ - p_ < 4) Fail("incomplete \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      int d = Hex(p_[k]);
      if (d < 0) Fail("invalid \\u escape (expected 4 hex digits)");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    p_ += 4;
    return v;
  }

  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // Length of the valid UTF-8 sequence at p_ (a lead byte >= 0x80), or 0 if invalid.
  /// Length of the UTF-8 sequence at p_ (a byte >= 0x80), 0 when it is not well-formed.
  size_t Utf8Len() const {
    return Utf8SequenceLength(reinterpret_cast<const unsigned char*>(p_),
                              static_cast<size_t>(end_ - p_));
  }

  void ParseString(std::string* out) {
    out->clear();
    ++p_;  // "
    while (true) {
      const char* run = p_;
      while (p_ < end_) {
        unsigned char c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++p_;
      }
      out->append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) Fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return;
      }
      if (c < 0x20)
        Fail(std::string("control character U+00") + "0123456789ABCDEF"[c >> 4] +
             "0123456789ABCDEF"[c & 15] + " in a string (must be escaped)");
      if (c >= 0x80) {
        size_t n = Utf8Len();
        if (!n) Fail("invalid UTF-8 in a string");
        out->append(p_, n);
        p_ += n;
        continue;
      }
      ++p_;  // backslash
      if (p_ == end_) Fail("unterminated string");
      char e = *p_++;
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp = ParseU4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) Fail("lone low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
              Fail("high surrogate in a \\u escape without its low surrogate");
            p_ += 2;
            uint32_t lo = ParseU4();
            if (lo < 0xDC00 || lo > 0xDFFF)
              Fail("high surrogate in a \\u escape without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          --p_;
          Fail("invalid escape '\\" + std::string(1, e) + "' in a string");
      }
    }
  }

  Value ParseNumber() {
    const char* start = p_;
    bool neg = false;
    if (*p_ == '-') {
      neg = true;
      ++p_;
    }
    if (p_ == end_ || *p_ < '0' || *p_ > '9') Fail("invalid number");
    const char* digits = p_;
    // The integer digits, accumulated as they are scanned (at most 19 of them fit for sure).
    uint64_t u = 0;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9' && p_ - digits < 19)
        u = u * 10 + static_cast<uint64_t>(*p_++ - '0');
      if (p_ < end_ && *p_ >= '0' && *p_ <= '9') {  // a 20th digit and more: checked below
        const char* more = p_;
        while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
        if (p_ == end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E')) {
          for (const char* q = more; q < p_; ++q) {
            if (u > (UINT64_MAX - 9) / 10) {
              const size_t n = static_cast<size_t>(q - start);
              p_ = start;
              Fail("integer " + std::string(start, n) + "... is out of the supported 64-bit range");
            }
            u = u * 10 + static_cast<uint64_t>(*q - '0');
          }
        }
      }
    }
    bool is_float = false;
    if (p_ < end_ && *p_ == '.') {
      is_float = true;
      ++p_;
      if (p_ == end_ || *p_ < '0' || *p_ > '9') Fail("invalid number (digits expected after '.')");
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_float = true;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || *p_ < '0' || *p_ > '9')
        Fail("invalid number (digits expected in exponent)");
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (!is_float) {
      const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
      if (u > limit) {
        std::string text(start, static_cast<size_t>(p_ - start));
        p_ = start;
        Fail("integer " + text + " is out of the supported 64-bit range");
      }
      return Value::Int(neg ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u));
    }
    double d = 0;
    auto r = std::from_chars(start, p_, d);
    if (r.ec == std::errc::result_out_of_range) {  // Python: inf, or 0.0 on underflow
      std::string text(start, static_cast<size_t>(p_ - start));
      d = std::strtod(text.c_str(), nullptr);
    } else if (r.ec != std::errc() || r.ptr != p_) {
      p_ = start;
      Fail("invalid number");
    }
    return Value::Float(d);
  }

  struct Entry {
    Value key;
    Value value;
    uint64_t hash;
    bool dup;  // a later occurrence of an earlier key (MergeDuplicates)
  };

  const char* begin_;
  const char* p_;
  const char* end_;
  Arena* arena_;
  std::string scratch_;
  // The distinct keys seen so far (ids: indexes), with a hash index over them (open
  // addressing, a power of two slots; entry = id + 1, 0 = empty).
  struct KeySlot {
    const StrBox* box = nullptr;
    bool global = false;     // interned process-wide (InternKey), else an arena string
    bool plain = false;      // printable ASCII without '"' or '\\': its JSON text is the key
    uint32_t next = kNoKey;  // the key that followed this one in the last object
  };
  static constexpr uint32_t kNoKey = UINT32_MAX;
  static constexpr int kPredictDepth = 16;
  std::vector<KeySlot> slots_;
  std::vector<uint32_t> index_;
  uint32_t first_key_[kPredictDepth] = {kNoKey, kNoKey, kNoKey, kNoKey, kNoKey, kNoKey,
                                        kNoKey, kNoKey, kNoKey, kNoKey, kNoKey, kNoKey,
                                        kNoKey, kNoKey, kNoKey, kNoKey};  // by depth
  std::vector<Value> list_stack_;
  std::vector<Entry> dict_stack_;
};

}  // namespace

Value ParseJsonValue(std::string_view text, Arena* arena) {
  // Parsed data takes 3-5x its text (up to ~9x for arrays of one-digit numbers). Address space
  // is reserved generously: only the pages written get memory, and what does not fit goes to
  // small blocks, which cost a page fault per 4 KiB instead of one per 2 MiB huge page.
  arena->Reserve(text.size() * 8);
  return JsonParser(text, arena).ParseDocument();
}

Value FromJsonDeep(const Json& j) {
  ValueDepthGuard guard;
  switch (j.type()) {
    case Json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const Json& x : j) items.push_back(FromJsonDeep(x));
      return Value::List(std::move(items));
    }
    case Json::value_t::object: {
      ValueDict items;
      items.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        items.emplace_back(Value::Str(it.key()), FromJsonDeep(it.value()));
      return Value::Dict(std::move(items));
    }
    case Json::value_t::string:
      return Value::Str(j.get<std::string>());
    default:
      return Value::ViewJson(j);  // other scalars are converted, not viewed
  }
}

}  // namespace msc::tmpl
