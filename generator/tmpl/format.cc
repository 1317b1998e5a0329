// Text formatting helpers: tojson (Jinja's htmlsafe_json_dumps), HTML escaping, str.format().
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {
namespace {

void JsonString(std::string& out, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  auto u4 = [&](uint32_t c) {
    out += "\\u";
    for (int k = 3; k >= 0; --k) out.push_back(hex[(c >> (4 * k)) & 15]);
  };
  out.push_back('"');
  for (char32_t c : pystr::Decode(s)) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out.push_back(static_cast<char>(c));
        } else if (c < 0x10000) {
          u4(c);
        } else {
          uint32_t v = c - 0x10000;
          u4(0xD800 | (v >> 10));
          u4(0xDC00 | (v & 0x3FF));
        }
    }
  }
  out.push_back('"');
}

std::string JsonFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return pystr::FloatRepr(d);
}

std::string JsonKey(const Value& k) {
  switch (k.kind()) {
    case Value::Kind::kString:
      return k.s();
    case Value::Kind::kBool:
      return k.b() ? "true" : "false";
    case Value::Kind::kNone:
      return "null";
    case Value::Kind::kInt:
      return std::to_string(k.i());
    case Value::Kind::kFloat:
      return JsonFloat(k.f());
    default:
      throw OpError("keys must be str, int, float, bool or None, not " + TypeName(k));
  }
}

void Dump(std::string& out, const Value& v, const std::string* indent, int level) {
  ValueDepthGuard guard;
  auto newline = [&](int lvl) {
    out.push_back('\n');
    for (int i = 0; i < lvl; ++i) out += *indent;
  };
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      ThrowUndefined(v);
    case Value::Kind::kNone:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.b() ? "true" : "false";
      return;
    case Value::Kind::kInt:
      out += std::to_string(v.i());
      return;
    case Value::Kind::kFloat:
      out += JsonFloat(v.f());
      return;
    case Value::Kind::kString:
      JsonString(out, v.s());
      return;
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      if (v.size() == 0) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += indent ? "," : ", ";
        if (indent) newline(level + 1);
        Dump(out, v.at(i), indent, level + 1);
      }
      if (indent) newline(level);
      out.push_back(']');
      return;
    }
    case Value::Kind::kDict: {
      if (v.size() == 0) {
        out += "{}";
        return;
      }
      ValueDict items = v.Items();
      std::stable_sort(items.begin(), items.end(),
                       [](const auto& a, const auto& b) { return Compare(a.first, b.first) < 0; });
      out.push_back('{');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += indent ? "," : ", ";
        if (indent) newline(level + 1);
        JsonString(out, JsonKey(items[i].first));
        out += ": ";
        Dump(out, items[i].second, indent, level + 1);
      }
      if (indent) newline(level);
      out.push_back('}');
      return;
    }
    case Value::Kind::kObject:
      break;
  }
  throw OpError("Object of type " + TypeName(v) + " is not JSON serializable");
}

}  // namespace

std::string ToJsonText(const Value& v, const Value& indent) {
  if (v.is_string() && indent.is_none()) {  // fast path: printable ASCII needing no escapes
    const std::string& s = v.s();
    bool plain = true;
    for (unsigned char c : s) {
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' ||
          c == '\'') {
        plain = false;
        break;
      }
    }
    if (plain) {
      std::string out;
      out.reserve(s.size() + 2);
      out.push_back('"');
      out += s;
      out.push_back('"');
      return out;
    }
  }
  std::string ind;
  const std::string* ip = nullptr;
  if (indent.is_string()) {
    ind = indent.s();
    ip = &ind;
  } else if (!indent.is_none()) {
    int64_t n = ToInt(indent, "indent");
    ind = std::string(static_cast<size_t>(std::max<int64_t>(0, n)), ' ');
    ip = &ind;
  }
  std::string raw;
  Dump(raw, v, ip, 0);
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      case '\'':
        out += "\\u0027";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// ---- str.format ----
namespace {

std::string GroupDigits(const std::string& digits, char sep) {
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out.push_back(sep);
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatSpec(const Value& v, const std::string& spec);

// Appends format(v, spec) to out: the common specs (none; "d", ",", "_", ",d", "_d" on an int)
// in place, the others through FormatSpec.
void FormatSpecTo(std::string& out, const Value& v, std::string_view spec) {
  if (v.is_undefined()) {
    if (!v.is_lenient_undefined()) ThrowUndefined(v);
    // jinja2.Undefined has object.__format__: str() ('') for an empty spec, else a TypeError.
    if (!spec.empty()) throw OpError("unsupported format string passed to Undefined.__format__");
    return;
  }
  if (spec.empty()) {  // format(x, '') == str(x)
    AppendStr(out, v);
    return;
  }
  const char g = spec[0];
  if (v.is_int() && spec.size() <= 2 && (g == 'd' || g == ',' || g == '_') &&
      (spec.size() == 1 || (g != 'd' && spec[1] == 'd'))) {
    const int64_t x = v.i();
    const uint64_t u = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    char digits[24];
    const size_t nd =
        static_cast<size_t>(std::to_chars(digits, digits + sizeof(digits), u).ptr - digits);
    char text[40];  // sign, 20 digits, 6 separators
    size_t n = 0;
    if (x < 0) text[n++] = '-';
    for (size_t i = 0; i < nd; ++i) {
      if (g != 'd' && i && (nd - i) % 3 == 0) text[n++] = g;
      text[n++] = digits[i];
    }
    out.append(text, n);
    return;
  }
  out += FormatSpec(v, std::string(spec));
}

// Applies a Python format spec ([[fill]align][sign][#][0][width][,_][.precision][type]) to v.
std::string FormatSpec(const Value& v, const std::string& spec) {
  if (v.is_undefined()) ThrowUndefined(v);
  if (spec.empty()) return ToStr(v);  // format(x, '') == str(x)
  std::u32string sp = pystr::Decode(spec);
  size_t i = 0;
  char32_t fill = ' ';
  char align = 0;
  auto is_align = [](char32_t c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (sp.size() >= 2 && is_align(sp[1])) {
    fill = sp[0];
    align = static_cast<char>(sp[1]);
    i = 2;
  } else if (!sp.empty() && is_align(sp[0])) {
    align = static_cast<char>(sp[0]);
    i = 1;
  }
  char sign = '-';
  if (i < sp.size() && (sp[i] == '+' || sp[i] == '-' || sp[i] == ' '))
    sign = static_cast<char>(sp[i++]);
  bool alt = false;
  if (i < sp.size() && sp[i] == '#') alt = true, ++i;
  if (i < sp.size() && sp[i] == '0') {
    if (!align) fill = '0', align = '=';
    ++i;
  }
  int64_t width = -1, prec = -1;
  auto digits = [&](int64_t* dst) {
    if (i < sp.size() && sp[i] >= '0' && sp[i] <= '9') {
      *dst = 0;
      while (i < sp.size() && sp[i] >= '0' && sp[i] <= '9') {
        *dst = *dst * 10 + (sp[i++] - '0');
        if (*dst > 100000) throw OpError("format width/precision too big");
      }
    }
  };
  digits(&width);
  char group = 0;
  if (i < sp.size() && (sp[i] == ',' || sp[i] == '_')) group = static_cast<char>(sp[i++]);
  if (i < sp.size() && sp[i] == '.') {
    ++i;
    prec = 0;
    digits(&prec);
  }
  char type = 0;
  if (i < sp.size()) type = static_cast<char>(sp[i++]);
  if (i != sp.size()) throw OpError("Invalid format specifier");

  std::string body, prefix;
  bool numeric = v.is_number() && type != 's';
  if (!numeric) {
    if (type && type != 's')
      throw OpError(std::string("Unknown format code '") + type + "' for object of type '" +
                    TypeName(v) + "'");
    body = ToStr(v);
    if (prec >= 0) {
      std::vector<size_t> b = pystr::Boundaries(body);
      if (static_cast<size_t>(prec) + 1 < b.size()) body.resize(b[prec]);
    }
    if (!align) align = '<';
  } else {
    bool intlike = !v.is_float() && type != 'e' && type != 'E' && type != 'f' && type != 'F' &&
                   type != 'g' && type != 'G' && type != '%';
    double d = v.f();
    bool neg;
    if (intlike) {
      if (type && std::string("dbxXonc").find(type) == std::string::npos)
        throw OpError("Unknown format code");
      int64_t x = v.i();
      neg = x < 0;
      uint64_t u = neg ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
      int base = type == 'b' ? 2 : type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
      const char* dg = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
      do {
        body.insert(body.begin(), dg[u % base]);
        u /= base;
      } while (u);
      if (group) body = GroupDigits(body, group);
      if (alt && base != 10)
        prefix = base == 2 ? "0b" : base == 8 ? "0o" : type == 'X' ? "0X" : "0x";
    } else {
      neg = std::signbit(d) && !std::isnan(d);
      double a = std::fabs(d);
      char t = type ? type : 'g';
      // Only these reach printf (found by tests/fuzz/fuzz_tmpl: "{:n}" became "%n", "{:d}" read a
      // double as an int); 'n' is 'g' with the locale's separators, i.e. 'g' in the C locale.
      if (std::string("eEfFgGn%").find(t) == std::string::npos)
        throw OpError(std::string("Unknown format code '") + t + "' for object of type '" +
                      TypeName(v) + "'");
      if (t == 'n') t = 'g';
      if (t == '%') a *= 100.0;
      if (!type && prec < 0) {
        body = pystr::FloatRepr(a);
      } else {
        char cf = t == '%' ? 'f' : t;
        std::string f =
            std::string("%") + (alt ? "#" : "") + "." + std::to_string(prec >= 0 ? prec : 6) + cf;
        body.assign(static_cast<size_t>(std::snprintf(nullptr, 0, f.c_str(), a)) + 1, '\0');
        body.resize(static_cast<size_t>(std::snprintf(body.data(), body.size(), f.c_str(), a)));
        if (!type && body.find_first_of(".einf") == std::string::npos) body += ".0";
      }
      if (group) {
        size_t end = body.find_first_not_of("0123456789");
        body = GroupDigits(body.substr(0, end), group) +
               (end == std::string::npos ? "" : body.substr(end));
      }
      if (t == '%') body += "%";
    }
    prefix = (neg ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "") + prefix;
    if (!align) align = '>';
  }
  size_t len = pystr::Length(prefix) + pystr::Length(body);
  std::string fills;
  size_t pad = width > 0 && static_cast<size_t>(width) > len ? static_cast<size_t>(width) - len : 0;
  auto fill_n = [&](size_t n) {
    std::string f;
    for (size_t k = 0; k < n; ++k) pystr::AppendCodePoint(f, fill);
    return f;
  };
  switch (align) {
    case '<':
      return prefix + body + fill_n(pad);
    case '>':
      return fill_n(pad) + prefix + body;
    case '^':
      return fill_n(pad / 2) + prefix + body + fill_n(pad - pad / 2);
    default:
      return prefix + fill_n(pad) + body;  // '='
  }
}

}  // namespace

void StrFormatTo(std::string& out, std::string_view fmt, const Value* args, size_t nargs,
                 const Kwargs& kwargs) {
  size_t auto_idx = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out.push_back('}');
        ++i;
        continue;
      }
      throw OpError("Single '}' encountered in format string");
    }
    if (c != '{') {  // a run of plain text
      size_t end = fmt.find_first_of("{}", i);
      if (end == std::string_view::npos) end = fmt.size();
      out.append(fmt.data() + i, end - i);
      i = end - 1;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string_view::npos) throw OpError("Single '{' encountered in format string");
    std::string_view field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string_view spec, conv;
    size_t colon = field.find(':');
    if (colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    size_t bang = field.find('!');
    if (bang != std::string_view::npos) {
      conv = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    if (field.find_first_of(".[") != std::string_view::npos)
      throw OpError("attribute/index access in format fields is not supported");
    const Value* v;
    if (field.empty()) {
      if (auto_idx >= nargs)
        throw OpError("Replacement index " + std::to_string(auto_idx) +
                      " out of range for positional args tuple");
      v = &args[auto_idx++];
    } else if (field.find_first_not_of("0123456789") == std::string_view::npos) {
      size_t idx = std::stoul(std::string(field));
      if (idx >= nargs)
        throw OpError("Replacement index " + std::string(field) +
                      " out of range for positional args tuple");
      v = &args[idx];
    } else {
      auto it = std::find_if(kwargs.begin(), kwargs.end(),
                             [&](const auto& kv) { return kv.first == field; });
      if (it == kwargs.end()) throw OpError("KeyError: " + pystr::Repr(std::string(field)));
      v = &it->second;
    }
    if (conv.empty()) {
      FormatSpecTo(out, *v, spec);
    } else if (conv == "r" || conv == "a") {
      FormatSpecTo(out, Value::Str(Repr(*v)), spec);
    } else if (conv == "s") {
      FormatSpecTo(out, Value::Str(ToStr(*v)), spec);
    } else {
      throw OpError("Unknown conversion specifier " + std::string(conv));
    }
  }
}

std::string StrFormat(const std::string& fmt, const ValueList& args, const Kwargs& kwargs) {
  std::string out;
  StrFormatTo(out, fmt, args.data(), args.size(), kwargs);
  return out;
}

}  // namespace msc::tmpl
