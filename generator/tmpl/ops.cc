// Python operator semantics: arithmetic, slicing and printf-style formatting.
#include <cmath>
#include <cstdio>

#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

std::string HtmlEscape(const std::string& s);  // format.cc

namespace {

constexpr size_t kMaxResultSize = size_t{256} << 20;  // refuse to build strings/lists above 256 MiB

void CheckUndef(const Value& a, const Value& b) {
  if (a.is_undefined()) ThrowUndefined(a);
  if (b.is_undefined()) ThrowUndefined(b);
}

[[noreturn]] void Unsupported(const std::string& op, const Value& a, const Value& b) {
  throw OpError("unsupported operand type(s) for " + op + ": '" + TypeName(a) + "' and '" +
                TypeName(b) + "'");
}

[[noreturn]] void Overflow() {
  throw OpError("integer overflow: results beyond 64 bits are not supported");
}

bool IsIntLike(const Value& v) { return v.is_int() || v.is_bool(); }

Value Repeat(const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    if (n > 0 && seq.s().size() * static_cast<uint64_t>(n) > kMaxResultSize)
      throw OpError("repeated string is too large");
    std::string out;
    out.reserve(seq.s().size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += seq.s();
    return Value::Str(std::move(out));
  }
  if (n > 0 && seq.size() * static_cast<uint64_t>(n) > kMaxResultSize / 64)
    throw OpError("repeated list is too large");
  ValueList out;
  for (int64_t i = 0; i < n; ++i)
    for (size_t k = 0; k < seq.size(); ++k) out.push_back(seq.at(k));
  return seq.is_tuple() ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

// Python float divmod.
void FloatDivMod(double vx, double wx, double* floordiv, double* mod) {
  double m = std::fmod(vx, wx);
  double div = (vx - m) / wx;
  if (m != 0.0) {
    if ((wx < 0) != (m < 0)) {
      m += wx;
      div -= 1.0;
    }
  } else {
    m = std::copysign(0.0, wx);
  }
  double fd;
  if (div != 0.0) {
    fd = std::floor(div);
    if (div - fd > 0.5) fd += 1.0;
  } else {
    fd = std::copysign(0.0, vx / wx);
  }
  *floordiv = fd;
  *mod = m;
}

Value Power(const Value& a, const Value& b) {
  if (IsIntLike(a) && IsIntLike(b)) {
    int64_t base = a.i(), exp = b.i();
    if (exp < 0) {
      if (base == 0) throw OpError("0.0 cannot be raised to a negative power");
      return Value::Float(std::pow(static_cast<double>(base), static_cast<double>(exp)));
    }
    int64_t result = 1;
    while (exp > 0) {
      if (exp & 1)
        if (__builtin_mul_overflow(result, base, &result)) Overflow();
      exp >>= 1;
      if (exp > 0 && __builtin_mul_overflow(base, base, &base))
        Overflow();  // |base| >= 2^32 is still needed
    }
    return Value::Int(result);
  }
  double x = a.f(), y = b.f();
  if (x == 0.0 && y < 0) throw OpError("0.0 cannot be raised to a negative power");
  if (x < 0 && std::isfinite(y) && y != std::floor(y))
    throw OpError("complex results are not supported");
  double r = std::pow(x, y);
  if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
    throw OpError("(34, 'Numerical result out of range')");
  return Value::Float(r);
}

}  // namespace

const char* BinOpName(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "+";
    case BinOp::kSub:
      return "-";
    case BinOp::kMul:
      return "*";
    case BinOp::kDiv:
      return "/";
    case BinOp::kFloorDiv:
      return "//";
    case BinOp::kMod:
      return "%";
    case BinOp::kPow:
      return "**";
  }
  return "?";
}

const char* CmpOpName(CmpOp op) {
  switch (op) {
    case CmpOp::kEq:
      return "==";
    case CmpOp::kNe:
      return "!=";
    case CmpOp::kLt:
      return "<";
    case CmpOp::kLe:
      return "<=";
    case CmpOp::kGt:
      return ">";
    case CmpOp::kGe:
      return ">=";
    case CmpOp::kIn:
      return "in";
    case CmpOp::kNotIn:
      return "not in";
  }
  return "?";
}

Value BinaryOp(BinOp op_code, const Value& a, const Value& b) {
  // Fast paths: int/float arithmetic.
  if (a.kind() == Value::Kind::kInt && b.kind() == Value::Kind::kInt) {
    int64_t r;
    switch (op_code) {
      case BinOp::kAdd:
        if (!__builtin_add_overflow(a.i(), b.i(), &r)) return Value::Int(r);
        break;
      case BinOp::kSub:
        if (!__builtin_sub_overflow(a.i(), b.i(), &r)) return Value::Int(r);
        break;
      case BinOp::kMul:
        if (!__builtin_mul_overflow(a.i(), b.i(), &r)) return Value::Int(r);
        break;
      default:
        break;
    }
  }
  const char* op = BinOpName(op_code);
  CheckUndef(a, b);
  const bool nums = a.is_number() && b.is_number();
  const bool anyf = a.is_float() || b.is_float();
  int64_t r;
  if (op_code == BinOp::kAdd) {
    if (nums) {
      if (anyf) return Value::Float(a.f() + b.f());
      if (__builtin_add_overflow(a.i(), b.i(), &r)) Overflow();
      return Value::Int(r);
    }
    if (a.is_string() && b.is_string()) {
      if (a.s().size() + b.s().size() > kMaxResultSize) throw OpError("string is too large");
      if (a.is_markup() != b.is_markup())  // Markup + str escapes the str
        return Value::Markup((a.is_markup() ? a.s() : HtmlEscape(a.s())) +
                             (b.is_markup() ? b.s() : HtmlEscape(b.s())));
      return a.is_markup() ? Value::Markup(a.s() + b.s()) : Value::Str(a.s() + b.s());
    }
    if (a.is_seq() && a.kind() == b.kind()) {
      ValueList out = Iterate(a);
      for (size_t k = 0; k < b.size(); ++k) out.push_back(b.at(k));
      return a.is_tuple() ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
    }
    if (a.is_string() || a.is_seq())
      throw OpError("can only concatenate " + TypeName(a) + " (not \"" + TypeName(b) + "\") to " +
                    TypeName(a));
    Unsupported(op, a, b);
  }
  if (op_code == BinOp::kSub) {
    if (!nums) Unsupported(op, a, b);
    if (anyf) return Value::Float(a.f() - b.f());
    if (__builtin_sub_overflow(a.i(), b.i(), &r)) Overflow();
    return Value::Int(r);
  }
  if (op_code == BinOp::kMul) {
    if (nums) {
      if (anyf) return Value::Float(a.f() * b.f());
      if (__builtin_mul_overflow(a.i(), b.i(), &r)) Overflow();
      return Value::Int(r);
    }
    if ((a.is_string() || a.is_seq()) && IsIntLike(b)) return Repeat(a, b.i());
    if ((b.is_string() || b.is_seq()) && IsIntLike(a)) return Repeat(b, a.i());
    if (a.is_string() || a.is_seq() || b.is_string() || b.is_seq())
      throw OpError("can't multiply sequence by non-int of type '" +
                    TypeName(a.is_string() || a.is_seq() ? b : a) + "'");
    Unsupported(op, a, b);
  }
  if (op_code == BinOp::kPow) {
    if (!nums) Unsupported("** or pow()", a, b);
    return Power(a, b);
  }
  if (op_code == BinOp::kDiv) {
    if (!nums) Unsupported(op, a, b);
    if (b.f() == 0.0) throw OpError("division by zero");
    return Value::Float(a.f() / b.f());
  }
  if (op_code == BinOp::kFloorDiv || op_code == BinOp::kMod) {
    const bool div = op_code == BinOp::kFloorDiv;
    if (!div && a.is_string()) return Value::Str(PercentFormat(a.s(), b));
    if (!nums) Unsupported(op, a, b);
    if (!anyf) {
      int64_t x = a.i(), y = b.i();
      if (y == 0) throw OpError("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) {
        if (div) Overflow();
        return Value::Int(0);
      }
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        q -= 1;
        m += y;
      }
      return Value::Int(div ? q : m);
    }
    if (b.f() == 0.0) throw OpError(div ? "float floor division by zero" : "float modulo");
    double fd, m;
    FloatDivMod(a.f(), b.f(), &fd, &m);
    return Value::Float(div ? fd : m);
  }
  throw OpError(std::string("unknown operator ") + op);
}

Value UnaryMinus(const Value& a) {
  if (a.is_undefined()) ThrowUndefined(a);
  if (a.is_float()) return Value::Float(-a.f());
  if (IsIntLike(a)) {
    if (a.i() == INT64_MIN) Overflow();
    return Value::Int(-a.i());
  }
  throw OpError("bad operand type for unary -: '" + TypeName(a) + "'");
}

Value Slice(const Value& v, const Value& start, const Value& stop, const Value& step) {
  for (const Value* p : {&v, &start, &stop, &step})
    if (p->is_undefined()) ThrowUndefined(*p);
  for (const Value* p : {&start, &stop, &step})
    if (!p->is_none() && !IsIntLike(*p))
      throw OpError("slice indices must be integers or None or have an __index__ method");
  int64_t st = step.is_none() ? 1 : step.i();
  if (st == 0) throw OpError("slice step cannot be zero");
  ValueList items;
  std::vector<size_t> bounds;
  int64_t n;
  if (v.is_string()) {
    bounds = pystr::Boundaries(v.s());
    n = static_cast<int64_t>(bounds.size()) - 1;
  } else if (v.is_seq() || v.is_object()) {
    items = Iterate(v);
    n = static_cast<int64_t>(items.size());
  } else {
    throw OpError("'" + TypeName(v) + "' object is not subscriptable");
  }
  int64_t lower = st > 0 ? 0 : -1, upper = st > 0 ? n : n - 1;
  auto norm = [&](const Value& x, int64_t dflt) {
    if (x.is_none()) return dflt;
    int64_t i = x.i();
    if (i < 0) {
      i += n;
      if (i < lower) i = lower;
    } else if (i > upper) {
      i = upper;
    }
    return i;
  };
  int64_t b = norm(start, st > 0 ? lower : upper);
  int64_t e = norm(stop, st > 0 ? upper : lower);
  if (v.is_string()) {
    std::string out;
    for (int64_t i = b; st > 0 ? i < e : i > e; i += st)
      out.append(v.s(), bounds[i], bounds[i + 1] - bounds[i]);
    // (markupsafe's Markup.__getitem__: a slice of Markup is Markup)
    return v.is_markup() ? Value::Markup(std::move(out)) : Value::Str(std::move(out));
  }
  ValueList out;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) out.push_back(items[static_cast<size_t>(i)]);
  return v.is_tuple() ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

// ---- printf-style formatting ----
namespace {

struct Spec {
  bool left = false, plus = false, space = false, alt = false, zero = false;
  int width = -1, prec = -1;
};

std::string Pad(std::string body, const Spec& sp, size_t len_cp) {
  if (sp.width < 0 || static_cast<size_t>(sp.width) <= len_cp) return body;
  std::string pad(static_cast<size_t>(sp.width) - len_cp, ' ');
  return sp.left ? body + pad : pad + body;
}

// Formats an integer given as sign + digits (so that floats beyond 64 bits can use %d too).
std::string FormatDigits(bool neg, std::string d, int base, bool upper, const Spec& sp) {
  if (sp.prec >= 0 && d.size() < static_cast<size_t>(sp.prec)) d.insert(0, sp.prec - d.size(), '0');
  std::string sign = neg ? "-" : sp.plus ? "+" : sp.space ? " " : "";
  std::string prefix;
  if (sp.alt && base == 16) prefix = upper ? "0X" : "0x";
  if (sp.alt && base == 8) prefix = "0o";
  std::string head = sign + prefix;
  if (sp.zero && !sp.left && sp.width > 0 && head.size() + d.size() < static_cast<size_t>(sp.width))
    d.insert(0, sp.width - head.size() - d.size(), '0');
  std::string body = head + d;
  return Pad(body, sp, body.size());
}

std::string FormatIntSpec(int64_t v, int base, bool upper, const Spec& sp) {
  bool neg = v < 0;
  uint64_t u = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string d;
  do {
    d.insert(d.begin(), digits[u % base]);
    u /= base;
  } while (u);
  return FormatDigits(neg, std::move(d), base, upper, sp);
}

std::string FormatFloatSpec(double x, char type, const Spec& sp) {
  if (std::isnan(x)) x = std::fabs(x);
  std::string f = "%";
  if (sp.left) f += '-';
  if (sp.plus) f += '+';
  if (sp.space) f += ' ';
  if (sp.alt) f += '#';
  if (sp.zero) f += '0';
  if (sp.width >= 0) f += std::to_string(sp.width);
  f += "." + std::to_string(sp.prec >= 0 ? sp.prec : 6);
  f += type;
  int n = std::snprintf(nullptr, 0, f.c_str(), x);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), f.c_str(), x);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::string PercentFormat(const std::string& fmt, const Value& args) {
  if (args.is_undefined()) ThrowUndefined(args);
  std::string out;
  if (args.is_tuple()) {
    ValueList items = Iterate(args);
    PercentFormatTo(out, fmt, items.data(), items.size(), false);
  } else {
    PercentFormatTo(out, fmt, &args, 1, args.is_dict());
  }
  return out;
}

void PercentFormatTo(std::string& out, const std::string& fmt, const Value* items, size_t n,
                     bool mapping) {
  const Value* dict = mapping ? &items[0] : nullptr;
  size_t next = 0;
  auto next_arg = [&]() -> Value {
    if (next >= n) throw OpError("not enough arguments for format string");
    return items[next++];
  };
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {  // a run of text
      size_t end = fmt.find('%', i);
      if (end == std::string::npos) end = fmt.size();
      out.append(fmt, i, end - i);
      i = end - 1;
      continue;
    }
    if (++i >= fmt.size()) throw OpError("incomplete format");
    Value val;
    bool have_val = false;
    if (fmt[i] == '(') {
      if (!mapping) throw OpError("format requires a mapping");
      int depth = 1;
      size_t k = i + 1;
      while (k < fmt.size() && depth) {
        if (fmt[k] == '(') ++depth;
        if (fmt[k] == ')') --depth;
        ++k;
      }
      if (depth) throw OpError("incomplete format key");
      std::string key = fmt.substr(i + 1, k - i - 2);
      if (!dict->Get(key, &val)) throw OpError("KeyError: " + pystr::Repr(key));
      have_val = true;
      i = k;
    }
    Spec sp;
    for (; i < fmt.size(); ++i) {
      char c = fmt[i];
      if (c == '-')
        sp.left = true;
      else if (c == '+')
        sp.plus = true;
      else if (c == ' ')
        sp.space = true;
      else if (c == '#')
        sp.alt = true;
      else if (c == '0')
        sp.zero = true;
      else
        break;
    }
    auto read_num = [&](int* dst) {
      if (i < fmt.size() && fmt[i] == '*') {
        Value w = next_arg();
        if (!IsIntLike(w)) throw OpError("* wants int");
        *dst = static_cast<int>(w.i());
        ++i;
        return;
      }
      if (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
        int n = 0;
        while (i < fmt.size() && std::isdigit(static_cast<unsigned char>(fmt[i]))) {
          n = n * 10 + (fmt[i++] - '0');
          if (n > 100000) throw OpError("width/precision too big");
        }
        *dst = n;
      }
    };
    read_num(&sp.width);
    if (sp.width < -1) {
      sp.left = true;
      sp.width = -sp.width;
    }
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      sp.prec = 0;
      read_num(&sp.prec);
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) throw OpError("incomplete format");
    char type = fmt[i];
    if (type == '%') {
      out.push_back('%');
      continue;
    }
    if (!have_val) val = next_arg();
    if (val.is_undefined() && !val.is_lenient_undefined()) ThrowUndefined(val);
    switch (type) {
      case 's':
        if (sp.prec < 0 && val.is_string()) {  // a str as it is, padded in place
          const std::string& s = val.s();
          const size_t len = sp.width > 0 ? pystr::Length(s) : 0;
          const size_t pad = sp.width > 0 && static_cast<size_t>(sp.width) > len
                                 ? static_cast<size_t>(sp.width) - len
                                 : 0;
          if (!sp.left) out.append(pad, ' ');
          out += s;
          if (sp.left) out.append(pad, ' ');
          break;
        }
        [[fallthrough]];
      case 'r':
      case 'a': {
        std::string s = type == 's' ? ToStr(val) : Repr(val);
        if (sp.prec >= 0) {
          std::vector<size_t> b = pystr::Boundaries(s);
          if (static_cast<size_t>(sp.prec) + 1 < b.size()) s.resize(b[sp.prec]);
        }
        out += Pad(s, sp, pystr::Length(s));
        break;
      }
      case 'd':
      case 'i':
      case 'u': {
        int64_t v;
        if (IsIntLike(val)) {
          v = val.i();
        } else if (val.is_float()) {
          double d = val.f();
          if (!std::isfinite(d))
            throw OpError(std::string("cannot convert float ") +
                          (std::isnan(d) ? "NaN" : "infinity") + " to integer");
          if (std::fabs(d) >=
              9.2e18) {  // Python: int(d) is exact; so is glibc's %.0f of an integral double
            char buf[400];
            std::snprintf(buf, sizeof(buf), "%.0f", std::fabs(std::trunc(d)));
            out += FormatDigits(d < 0, buf, 10, false, sp);
            break;
          }
          v = static_cast<int64_t>(d);
        } else {
          throw OpError(std::string("%") + type + " format: a real number is required, not " +
                        TypeName(val));
        }
        out += FormatIntSpec(v, 10, false, sp);
        break;
      }
      case 'x':
      case 'X':
      case 'o':
        if (!IsIntLike(val))
          throw OpError(std::string("%") + type + " format: an integer is required, not " +
                        TypeName(val));
        out += FormatIntSpec(val.i(), type == 'o' ? 8 : 16, type == 'X', sp);
        break;
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G':
        if (!val.is_number()) throw OpError("must be real number, not " + TypeName(val));
        out += FormatFloatSpec(val.f(), type, sp);
        break;
      case 'c': {
        std::string s;
        if (IsIntLike(val)) {
          if (val.i() < 0 || val.i() > 0x10FFFF) throw OpError("%c arg not in range(0x110000)");
          pystr::AppendCodePoint(s, static_cast<char32_t>(val.i()));
        } else if (val.is_string() && pystr::Length(val.s()) == 1) {
          s = val.s();
        } else {
          throw OpError("%c requires int or char");
        }
        out += Pad(s, sp, 1);
        break;
      }
      default:
        throw OpError(std::string("unsupported format character '") + type + "'");
    }
  }
  if (!mapping && next < n) throw OpError("not all arguments converted during string formatting");
}

// ---- argument binding helpers ----
BoundArgs BindArgs(const ArgSpec& spec, ValueList& args, Kwargs& kwargs, ArgFlags* given) {
  const size_t n = spec.names.size();
  if (n > BoundArgs::kMax) throw OpError(std::string(spec.fn) + "(): too many parameters");
  BoundArgs out;
  if (args.empty() && kwargs.empty() && spec.required == 0) {  // the common no-argument call
    if (given) given->bits = 0;
    return out;
  }
  uint32_t have = 0;
  if (args.size() > n)
    throw OpError(std::string(spec.fn) + "() takes at most " + std::to_string(n) +
                  " argument(s) (" + std::to_string(args.size()) + " given)");
  for (size_t i = 0; i < args.size(); ++i) {
    out.Set(i, args[i]);
    have |= 1u << i;
  }
  for (auto& kv : kwargs) {
    size_t idx = n;
    size_t i = 0;
    for (const char* name : spec.names) {
      if (kv.first == name) idx = i;
      ++i;
    }
    if (idx == n)
      throw OpError(std::string(spec.fn) + "() got an unexpected keyword argument '" + kv.first +
                    "'");
    if (have & (1u << idx))
      throw OpError(std::string(spec.fn) + "() got multiple values for argument '" + kv.first +
                    "'");
    out.Set(idx, kv.second);
    have |= 1u << idx;
  }
  for (size_t i = 0; i < spec.required; ++i)
    if (!(have & (1u << i)))
      throw OpError(std::string(spec.fn) + "() missing required argument '" +
                    spec.names.begin()[i] + "'");
  if (given) given->bits = have;
  return out;
}

int64_t ToInt(const Value& v, const char* what) {
  if (v.is_undefined()) ThrowUndefined(v);
  if (!IsIntLike(v)) throw OpError(std::string(what) + " must be an integer, not " + TypeName(v));
  return v.i();
}

}  // namespace msc::tmpl
