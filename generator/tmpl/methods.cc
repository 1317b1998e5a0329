// Python methods callable on str/dict/list values, and the builtin global functions.
#include <algorithm>
#include <unordered_set>

#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

std::string StrFormat(const std::string& fmt, const ValueList& args,
                      const Kwargs& kwargs);  // format.cc

namespace {

// dict.items()/keys()/values() views: iterable, printed as Python does.
class DictView : public Object {
 public:
  DictView(std::string kind, ValueList items) : kind_(std::move(kind)), items_(std::move(items)) {}
  std::string TypeName() const override { return kind_; }
  std::string Repr() const override {
    return kind_ + "(" + msc::tmpl::Repr(Value::List(items_)) + ")";
  }
  bool Iter(ValueList* out) const override {
    *out = items_;
    return true;
  }

 private:
  std::string kind_;
  ValueList items_;
};

const std::unordered_set<std::string>& StrMethods() {
  static const std::unordered_set<std::string> s = {
      "capitalize",   "casefold",    "center",    "count",      "encode",       "endswith",
      "expandtabs",   "find",        "format",    "format_map", "index",        "isalnum",
      "isalpha",      "isascii",     "isdecimal", "isdigit",    "isidentifier", "islower",
      "isnumeric",    "isprintable", "isspace",   "istitle",    "isupper",      "join",
      "ljust",        "lower",       "lstrip",    "maketrans",  "partition",    "removeprefix",
      "removesuffix", "replace",     "rfind",     "rindex",     "rjust",        "rpartition",
      "rsplit",       "rstrip",      "split",     "splitlines", "startswith",   "strip",
      "swapcase",     "title",       "translate", "upper",      "zfill"};
  return s;
}
const std::unordered_set<std::string>& DictMethods() {
  static const std::unordered_set<std::string> s = {"clear",      "copy",   "fromkeys", "get",
                                                    "items",      "keys",   "pop",      "popitem",
                                                    "setdefault", "update", "values"};
  return s;
}
const std::unordered_set<std::string>& ListMethods() {
  static const std::unordered_set<std::string> s = {"append", "clear",   "copy",   "count",
                                                    "extend", "index",   "insert", "pop",
                                                    "remove", "reverse", "sort"};
  return s;
}

BoundArgs Bind(const char* fn, std::initializer_list<const char*> names, size_t required,
               ValueList& args, Kwargs& kwargs, ArgFlags* given = nullptr) {
  return BindArgs(ArgSpec{fn, names, required}, args, kwargs, given);
}

const std::string& StrArg(const Value& v, const char* fn) {
  if (v.is_undefined()) ThrowUndefined(v);
  if (!v.is_string())
    throw OpError(std::string(fn) + "() argument must be str, not " + TypeName(v));
  return v.s();
}

bool AllChars(const std::string& s, bool (*pred)(char32_t)) {
  std::u32string u = pystr::Decode(s);
  if (u.empty()) return false;
  return std::all_of(u.begin(), u.end(), pred);
}

Value Justify(const std::string& s, const std::string& name, ValueList& args, Kwargs& kw) {
  ArgFlags given;
  auto a = Bind(name.c_str(), {"width", "fillchar"}, 1, args, kw, &given);
  int64_t width = ToInt(a[0], "width");
  std::string fill = given[1] ? StrArg(a[1], name.c_str()) : " ";
  if (pystr::Length(fill) != 1)
    throw OpError("The fill character must be exactly one character long");
  int64_t len = static_cast<int64_t>(pystr::Length(s));
  if (width <= len) return Value::Str(s);
  int64_t pad = width - len, left = 0;
  if (name == "rjust")
    left = pad;
  else if (name == "center")
    left = pad / 2 + (pad & width & 1);
  auto rep = [&](int64_t n) {
    std::string r;
    for (int64_t k = 0; k < n; ++k) r += fill;
    return r;
  };
  return Value::Str(rep(left) + s + rep(pad - left));
}

Value StrMethod(const std::string& s, const std::string& m, ValueList& args, Kwargs& kw) {
  const char* fn = m.c_str();
  if (m == "format") return Value::Str(StrFormat(s, args, kw));
  if (m == "upper" || m == "lower" || m == "casefold" || m == "capitalize" || m == "title" ||
      m == "swapcase") {
    Bind(fn, {}, 0, args, kw);
    if (m == "upper") return Value::Str(pystr::Upper(s));
    if (m == "lower" || m == "casefold") return Value::Str(pystr::Lower(s));
    if (m == "capitalize") return Value::Str(pystr::Capitalize(s));
    if (m == "title") return Value::Str(pystr::Title(s));
    return Value::Str(pystr::SwapCase(s));
  }
  if (m == "strip" || m == "lstrip" || m == "rstrip") {
    auto a = Bind(fn, {"chars"}, 0, args, kw);
    std::string chars = a[0].is_none() ? "" : StrArg(a[0], fn);
    return Value::Str(
        pystr::Strip(s, a[0].is_none() ? nullptr : &chars, m != "rstrip", m != "lstrip"));
  }
  if (m == "split" || m == "rsplit") {
    auto a = Bind(fn, {"sep", "maxsplit"}, 0, args, kw);
    std::string sep = a[0].is_none() ? "" : StrArg(a[0], fn);
    if (!a[0].is_none() && sep.empty()) throw OpError("empty separator");
    int64_t maxsplit = a[1].is_none() ? -1 : ToInt(a[1], "maxsplit");
    const std::string* sp = a[0].is_none() ? nullptr : &sep;
    ValueList out;
    for (auto& part : m == "split" ? pystr::Split(s, sp, maxsplit) : pystr::RSplit(s, sp, maxsplit))
      out.push_back(Value::Str(std::move(part)));
    return Value::List(std::move(out));
  }
  if (m == "splitlines") {
    auto a = Bind(fn, {"keepends"}, 0, args, kw);
    ValueList out;
    for (auto& part : pystr::SplitLines(s, !a[0].is_none() && Truthy(a[0])))
      out.push_back(Value::Str(std::move(part)));
    return Value::List(std::move(out));
  }
  if (m == "startswith" || m == "endswith") {
    auto a = Bind(fn, {"prefix"}, 1, args, kw);
    ValueList options = a[0].is_tuple() ? Iterate(a[0]) : ValueList{a[0]};
    for (const Value& o : options) {
      const std::string& p = StrArg(o, fn);
      bool hit = m == "startswith"
                     ? s.compare(0, p.size(), p) == 0
                     : s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
      if (hit) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (m == "replace") {
    auto a = Bind(fn, {"old", "new", "count"}, 2, args, kw);
    int64_t count = a[2].is_none() ? -1 : ToInt(a[2], "count");
    return Value::Str(pystr::Replace(s, StrArg(a[0], fn), StrArg(a[1], fn), count));
  }
  if (m == "join") {
    auto a = Bind(fn, {"iterable"}, 1, args, kw);
    std::string out;
    bool first = true;
    for (const Value& v : Iterate(a[0])) {
      if (!first) out += s;
      first = false;
      if (!v.is_string())
        throw OpError("sequence item: expected str instance, " + TypeName(v) + " found");
      out += v.s();
    }
    return Value::Str(std::move(out));
  }
  if (m == "find" || m == "rfind" || m == "index" || m == "rindex") {
    auto a = Bind(fn, {"sub"}, 1, args, kw);
    int64_t r = pystr::Find(s, StrArg(a[0], fn), m[0] == 'r');
    if (r < 0 && (m == "index" || m == "rindex")) throw OpError("substring not found");
    return Value::Int(r);
  }
  if (m == "count") {
    auto a = Bind(fn, {"sub"}, 1, args, kw);
    return Value::Int(pystr::Count(s, StrArg(a[0], fn)));
  }
  if (m == "center" || m == "ljust" || m == "rjust") return Justify(s, m, args, kw);
  if (m == "zfill") {
    auto a = Bind(fn, {"width"}, 1, args, kw);
    int64_t width = ToInt(a[0], "width"), len = static_cast<int64_t>(pystr::Length(s));
    if (width <= len) return Value::Str(s);
    size_t sign = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    return Value::Str(s.substr(0, sign) + std::string(static_cast<size_t>(width - len), '0') +
                      s.substr(sign));
  }
  if (m == "removeprefix" || m == "removesuffix") {
    auto a = Bind(fn, {"affix"}, 1, args, kw);
    const std::string& p = StrArg(a[0], fn);
    if (m == "removeprefix" && s.compare(0, p.size(), p) == 0)
      return Value::Str(s.substr(p.size()));
    if (m == "removesuffix" && !p.empty() && s.size() >= p.size() &&
        s.compare(s.size() - p.size(), p.size(), p) == 0)
      return Value::Str(s.substr(0, s.size() - p.size()));
    return Value::Str(s);
  }
  if (m == "partition" || m == "rpartition") {
    auto a = Bind(fn, {"sep"}, 1, args, kw);
    const std::string& sep = StrArg(a[0], fn);
    if (sep.empty()) throw OpError("empty separator");
    size_t f = m == "partition" ? s.find(sep) : s.rfind(sep);
    if (f == std::string::npos)
      return m == "partition" ? Value::Tuple({Value::Str(s), Value::Str(""), Value::Str("")})
                              : Value::Tuple({Value::Str(""), Value::Str(""), Value::Str(s)});
    return Value::Tuple(
        {Value::Str(s.substr(0, f)), Value::Str(sep), Value::Str(s.substr(f + sep.size()))});
  }
  if (m.compare(0, 2, "is") == 0) {
    Bind(fn, {}, 0, args, kw);
    if (m == "isdigit" || m == "isdecimal" || m == "isnumeric")
      return Value::Bool(AllChars(s, pystr::IsDigitChar));
    if (m == "isalpha") return Value::Bool(AllChars(s, pystr::IsAlphaChar));
    if (m == "isalnum")
      return Value::Bool(
          AllChars(s, [](char32_t c) { return pystr::IsAlphaChar(c) || pystr::IsDigitChar(c); }));
    if (m == "isspace") return Value::Bool(AllChars(s, pystr::IsSpace));
    if (m == "isascii")
      return Value::Bool(std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; }));
    if (m == "isprintable") {
      std::u32string u = pystr::Decode(s);
      return Value::Bool(std::all_of(u.begin(), u.end(), [](char32_t c) {
        return c == ' ' || (c > 0x20 && pystr::IsPrintable(c));
      }));
    }
    if (m == "isidentifier") {
      std::u32string u = pystr::Decode(s);
      bool ok = !u.empty() && (u[0] == '_' || pystr::IsAlphaChar(u[0]));
      for (char32_t c : u) ok = ok && (c == '_' || pystr::IsAlphaChar(c) || (c >= '0' && c <= '9'));
      return Value::Bool(ok);
    }
    if (m == "islower") return Value::Bool(pystr::IsLowerStr(s));
    if (m == "isupper") return Value::Bool(pystr::IsUpperStr(s));
    if (m == "istitle") return Value::Bool(s == pystr::Title(s) && s != pystr::Lower(s));
  }
  throw OpError("str." + m + "() is not supported");
}

Value DictMethod(const Value& d, const std::string& m, ValueList& args, Kwargs& kw) {
  const char* fn = m.c_str();
  if (m == "items" || m == "keys" || m == "values") {
    Bind(fn, {}, 0, args, kw);
    ValueList out;
    for (auto& kv : d.Items()) {
      if (m == "items")
        out.push_back(Value::Tuple({kv.first, kv.second}));
      else
        out.push_back(m == "keys" ? kv.first : kv.second);
    }
    return Value::Obj(MakeRc<DictView>("dict_" + m, std::move(out)));
  }
  if (m == "get") {
    auto a = Bind(fn, {"key", "default"}, 1, args, kw);
    Value v;
    if (d.Get(a[0], &v)) return v;
    return a[1];
  }
  if (m == "copy") {
    Bind(fn, {}, 0, args, kw);
    return Value::Dict(d.Items());
  }
  throw OpError("dict." + m + "() is not supported (template values are immutable)");
}

Value ListMethod(const Value& l, const std::string& m, ValueList& args, Kwargs& kw) {
  const char* fn = m.c_str();
  if (m == "count" || m == "index") {
    auto a = Bind(fn, {"value"}, 1, args, kw);
    int64_t n = 0;
    for (size_t i = 0; i < l.size(); ++i) {
      if (Equals(l.at(i), a[0])) {
        if (m == "index") return Value::Int(static_cast<int64_t>(i));
        ++n;
      }
    }
    if (m == "index") throw OpError(Repr(a[0]) + " is not in list");
    return Value::Int(n);
  }
  if (m == "copy") {
    Bind(fn, {}, 0, args, kw);
    return Value::List(Iterate(l));
  }
  throw OpError(TypeName(l) + "." + m + "() is not supported (template values are immutable)");
}

}  // namespace

bool HasMethod(const Value& recv, const std::string& name) {
  switch (recv.kind()) {
    case Value::Kind::kString:
      return StrMethods().count(name) > 0;
    case Value::Kind::kDict:
      return DictMethods().count(name) > 0;
    case Value::Kind::kList:
      return ListMethods().count(name) > 0;
    case Value::Kind::kTuple:
      return name == "count" || name == "index";
    default:
      return false;
  }
}

uint8_t MethodMask(const std::string& name) {
  uint8_t m = 0;
  if (StrMethods().count(name)) m |= kStrMethod;
  if (DictMethods().count(name)) m |= kDictMethod;
  if (ListMethods().count(name)) m |= kListMethod;
  if (name == "count" || name == "index") m |= kTupleMethod;
  return m;
}

Value CallMethod(Interp&, const Value& recv, const std::string& name, ValueList& args,
                 Kwargs& kwargs) {
  for (const Value& a : args)
    if (a.is_undefined() && !a.is_lenient_undefined()) ThrowUndefined(a);
  if (recv.is_string()) return StrMethod(recv.s(), name, args, kwargs);
  if (recv.is_dict()) return DictMethod(recv, name, args, kwargs);
  return ListMethod(recv, name, args, kwargs);
}

// ---- builtin globals: range, dict, namespace, joiner, cycler ----
namespace {

class Cycler : public Object {
 public:
  explicit Cycler(ValueList items) : items_(std::move(items)) {}
  std::string TypeName() const override { return "Cycler"; }
  bool GetAttr(const std::string& name, Value* out) const override {
    auto self = Rc<Cycler>(const_cast<Cycler*>(this));
    if (name == "current") {
      *out = items_[pos_];
    } else if (name == "next") {
      *out = Value::Obj(MakeRc<NativeFunction>("next", [self](Interp&, ValueList&, Kwargs&) {
        Value v = self->items_[self->pos_];
        self->pos_ = (self->pos_ + 1) % self->items_.size();
        return v;
      }));
    } else if (name == "reset") {
      *out = Value::Obj(MakeRc<NativeFunction>("reset", [self](Interp&, ValueList&, Kwargs&) {
        self->pos_ = 0;
        return Value();
      }));
    } else {
      return false;
    }
    return true;
  }

 private:
  ValueList items_;
  size_t pos_ = 0;
};

Value Fn(const char* name, NativeFn fn) {
  return Value::Obj(MakeRc<NativeFunction>(name, std::move(fn)));
}

}  // namespace

void AddBuiltinGlobals(std::unordered_map<std::string, Value>& globals) {
  globals["range"] = Fn("range", [](Interp&, ValueList& args, Kwargs& kw) {
    if (!kw.empty()) throw OpError("range() takes no keyword arguments");
    if (args.empty() || args.size() > 3)
      throw OpError("range expected 1 to 3 arguments, got " + std::to_string(args.size()));
    int64_t start = 0, stop, step = 1;
    if (args.size() == 1) {
      stop = ToInt(args[0], "range() argument");
    } else {
      start = ToInt(args[0], "range() argument");
      stop = ToInt(args[1], "range() argument");
      if (args.size() == 3) step = ToInt(args[2], "range() argument");
    }
    if (step == 0) throw OpError("range() arg 3 must not be zero");
    __int128 count = step > 0 ? (static_cast<__int128>(stop) - start + step - 1) / step
                              : (static_cast<__int128>(start) - stop - step - 1) / -step;
    if (count > 10000000) throw OpError("range() is too large (more than 10000000 items)");
    return Value::Obj(MakeRc<Range>(start, stop, step));
  });
  globals["dict"] = Fn("dict", [](Interp&, ValueList& args, Kwargs& kw) {
    ValueDict d;
    if (args.size() > 1) throw OpError("dict expected at most 1 argument");
    if (args.size() == 1) {
      if (args[0].is_dict())
        d = args[0].Items();
      else
        for (const Value& pair : Iterate(args[0])) {
          ValueList kv = Iterate(pair);
          if (kv.size() != 2) throw OpError("dictionary update sequence element has wrong length");
          d.emplace_back(kv[0], kv[1]);
        }
    }
    for (auto& kv : kw) {
      auto it = std::find_if(d.begin(), d.end(), [&](auto& e) {
        return e.first.is_string() && e.first.s() == kv.first;
      });
      if (it != d.end())
        it->second = kv.second;
      else
        d.emplace_back(Value::Str(kv.first), kv.second);
    }
    return Value::Dict(std::move(d));
  });
  globals["namespace"] = Fn("namespace", [](Interp& in, ValueList& args, Kwargs& kw) {
    auto ns = MakeRc<Namespace>();
    if (args.size() > 1) throw OpError("namespace expected at most 1 positional argument");
    if (args.size() == 1) {
      if (!args[0].is_dict()) throw OpError("namespace argument must be a mapping");
      for (auto& kv : args[0].Items()) ns->SetAttr(ToStr(kv.first), kv.second);
    }
    for (auto& kv : kw) ns->SetAttr(kv.first, kv.second);
    in.Register(ns);
    return Value::Obj(ns);
  });
  globals["joiner"] = Fn("joiner", [](Interp&, ValueList& args, Kwargs& kw) {
    auto a = BindArgs(ArgSpec{"joiner", {"sep"}, 0}, args, kw);
    std::string sep = a[0].is_none() && args.empty() && kw.empty() ? ", " : ToStr(a[0]);
    auto used = std::make_shared<bool>(false);
    return Fn("joiner", [sep, used](Interp&, ValueList&, Kwargs&) {
      if (!*used) {
        *used = true;
        return Value::Str("");
      }
      return Value::Str(sep);
    });
  });
  globals["cycler"] = Fn("cycler", [](Interp&, ValueList& args, Kwargs&) {
    if (args.empty()) throw OpError("at least one item has to be provided");
    return Value::Obj(MakeRc<Cycler>(args));
  });
}

}  // namespace msc::tmpl
