// Builtin filters (Jinja2 3.x semantics).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

std::string ToJsonText(const Value& v, const Value& indent);  // format.cc
std::string HtmlEscape(const std::string& s);                 // format.cc

namespace {

using Args = std::vector<Value>;

Args Bind(const char* fn, std::initializer_list<const char*> names, size_t required,
          ValueList& args, Kwargs& kwargs, std::vector<bool>* given = nullptr) {
  ArgSpec spec{fn, names, required};
  return BindArgs(spec, args, kwargs, given);
}

bool ArgBool(const Value& v) { return !v.is_none() && Truthy(v); }

// Result string of a str-method-like filter: Markup stays Markup (soft_str + str method).
Value KeepMarkup(const Value& in, std::string s) {
  return in.is_markup() ? Value::Markup(std::move(s)) : Value::Str(std::move(s));
}

Value IgnoreCase(const Value& v) { return v.is_string() ? Value::Str(pystr::Lower(v.s())) : v; }

// Jinja's make_attrgetter: "a.b.0" -> item["a"]["b"][0] (getitem semantics).
Value GetPath(Interp& in, const Value& item, const std::string& attribute,
              const Value* dflt = nullptr) {
  Value cur = item;
  size_t pos = 0;
  while (true) {
    size_t dot = attribute.find('.', pos);
    std::string part =
        attribute.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    int64_t idx;
    bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    Value key = digits && pystr::ParseInt(part, 10, &idx) ? Value::Int(idx) : Value::Str(part);
    cur = in.GetItem(cur, key);
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  if (dflt && cur.is_undefined()) return *dflt;
  return cur;
}

// Key function for sort/unique/min/max: optional attribute path(s) and case folding. With
// `multi`, "a,b" yields the list of both keys (Jinja's make_multi_attrgetter).
Value SortKey(Interp& in, const Value& item, const Value& attribute, bool case_sensitive,
              bool multi) {
  auto post = [&](const Value& v) { return case_sensitive ? v : IgnoreCase(v); };
  if (attribute.is_none()) return multi ? Value::List({post(item)}) : post(item);
  if (!attribute.is_string()) {
    Value v = post(in.GetItem(item, attribute));
    return multi ? Value::List({v}) : v;
  }
  if (!multi) return post(GetPath(in, item, attribute.s()));
  ValueList parts;
  const std::string& s = attribute.s();
  size_t pos = 0;
  while (true) {
    size_t comma = s.find(',', pos);
    parts.push_back(post(GetPath(
        in, item, s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos))));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return Value::List(std::move(parts));
}

Value F_abs(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("abs", {}, 0, args, kw);
  if (v.is_float()) return Value::Float(std::fabs(v.f()));
  if (v.is_int() || v.is_bool()) {
    if (v.i() == INT64_MIN) throw OpError("integer overflow");
    return Value::Int(v.i() < 0 ? -v.i() : v.i());
  }
  throw OpError("bad operand type for abs(): '" + TypeName(v) + "'");
}

Value F_attr(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("attr", {"name"}, 1, args, kw);
  if (!a[0].is_string()) throw OpError("attribute name must be a string");
  if (v.is_dict() && !HasMethod(v, a[0].s()))
    return Value::Undef("'dict object' has no attribute " + pystr::Repr(a[0].s()), in.here());
  return in.GetAttr(v, a[0].s());
}

Value F_batch(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("batch", {"linecount", "fill_with"}, 1, args, kw);
  int64_t n = ToInt(a[0], "linecount");
  ValueList out, tmp;
  for (Value& item : Iterate(v)) {
    if (static_cast<int64_t>(tmp.size()) == n) {
      out.push_back(Value::List(std::move(tmp)));
      tmp.clear();
    }
    tmp.push_back(std::move(item));
  }
  if (!tmp.empty()) {
    if (!a[1].is_none())
      while (static_cast<int64_t>(tmp.size()) < n) tmp.push_back(a[1]);
    out.push_back(Value::List(std::move(tmp)));
  }
  return Value::List(std::move(out));
}

Value F_capitalize(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("capitalize", {}, 0, args, kw);
  return KeepMarkup(v, pystr::Capitalize(ToStr(v)));
}

Value F_center(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("center", {"width"}, 0, args, kw, &given);
  ValueList margs{given[0] ? a[0] : Value::Int(80)};
  Kwargs none;
  return CallMethod(in, Value::Str(ToStr(v)), "center", margs, none);
}

Value F_length(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("length", {}, 0, args, kw);
  return Value::Int(Len(v));
}

Value F_default(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("default", {"default_value", "boolean"}, 0, args, kw, &given);
  Value dflt = given[0] ? a[0] : Value::Str("");
  if (v.is_undefined() || (ArgBool(a[1]) && !Truthy(v))) return dflt;
  return v;
}

Value F_dictsort(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("dictsort", {"case_sensitive", "by", "reverse"}, 0, args, kw, &given);
  if (!v.is_dict()) throw OpError("dictsort requires a mapping, got " + TypeName(v));
  std::string by = given[1] ? ToStr(a[1]) : "key";
  if (by != "key" && by != "value") throw OpError("You can only sort by either 'key' or 'value'");
  bool cs = ArgBool(a[0]), rev = ArgBool(a[2]);
  ValueDict items = v.Items();
  std::vector<std::pair<Value, size_t>> keys;
  for (size_t i = 0; i < items.size(); ++i) {
    const Value& k = by == "key" ? items[i].first : items[i].second;
    keys.emplace_back(cs ? k : IgnoreCase(k), i);
  }
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& x, const auto& y) {
    return rev ? Compare(y.first, x.first) < 0 : Compare(x.first, y.first) < 0;
  });
  ValueList out;
  for (const auto& k : keys)
    out.push_back(Value::Tuple({items[k.second].first, items[k.second].second}));
  return Value::List(std::move(out));
}

Value F_escape(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("escape", {}, 0, args, kw);
  if (v.is_markup()) return v;  // already escaped
  return Value::Markup(HtmlEscape(ToStr(v)));
}

Value F_forceescape(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("forceescape", {}, 0, args, kw);
  return Value::Markup(HtmlEscape(ToStr(v)));
}

Value F_first(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("first", {}, 0, args, kw);
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undef("No first item, sequence was empty.", in.here());
  return items.front();
}

Value F_last(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("last", {}, 0, args, kw);
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undef("No last item, sequence was empty.", in.here());
  return items.back();
}

Value F_float(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("float", {"default"}, 0, args, kw, &given);
  if (v.is_number()) return Value::Float(v.f());
  double d;
  if (v.is_string() && pystr::ParseFloat(v.s(), &d)) return Value::Float(d);
  return given[0] ? a[0] : Value::Float(0.0);
}

Value F_format(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  if (!args.empty() && !kw.empty())
    throw OpError("can't handle positional and keyword arguments at the same time");
  if (!kw.empty()) {
    ValueDict d;
    for (auto& kv : kw) d.emplace_back(Value::Str(kv.first), kv.second);
    return Value::Str(PercentFormat(ToStr(v), Value::Dict(std::move(d))));
  }
  return Value::Str(PercentFormat(ToStr(v), Value::Tuple(args)));
}

// Jinja's _GroupTuple(grouper, list): a 2-tuple with named fields.
class GroupTuple : public Object {
 public:
  GroupTuple(Value grouper, Value list) : grouper_(std::move(grouper)), list_(std::move(list)) {}
  std::string TypeName() const override { return "_GroupTuple"; }
  std::string Repr() const override { return msc::tmpl::Repr(Value::Tuple({grouper_, list_})); }
  bool GetAttr(const std::string& name, Value* out) const override {
    if (name == "grouper")
      *out = grouper_;
    else if (name == "list")
      *out = list_;
    else
      return false;
    return true;
  }
  bool Iter(ValueList* out) const override {
    *out = {grouper_, list_};
    return true;
  }

 private:
  Value grouper_, list_;
};

Value F_groupby(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("groupby", {"attribute", "default", "case_sensitive"}, 1, args, kw);
  bool cs = ArgBool(a[2]);
  auto key_of = [&](const Value& item, bool fold) {
    Value k = a[0].is_string() ? GetPath(in, item, a[0].s(), a[1].is_none() ? nullptr : &a[1])
                               : in.GetItem(item, a[0]);
    return fold ? IgnoreCase(k) : k;
  };
  ValueList items = Iterate(v);
  std::vector<std::pair<Value, size_t>> keys;
  for (size_t i = 0; i < items.size(); ++i) keys.emplace_back(key_of(items[i], !cs), i);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& x, const auto& y) { return Compare(x.first, y.first) < 0; });
  ValueList out;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i;
    ValueList group;
    while (j < keys.size() && Equals(keys[j].first, keys[i].first))
      group.push_back(items[keys[j++].second]);
    Value grouper = cs ? keys[i].first : key_of(group[0], false);
    out.push_back(Value::Obj(std::make_shared<GroupTuple>(grouper, Value::List(std::move(group)))));
    i = j;
  }
  return Value::List(std::move(out));
}

Value F_indent(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("indent", {"width", "first", "blank"}, 0, args, kw, &given);
  std::string ind;
  if (!given[0])
    ind = "    ";
  else if (a[0].is_string())
    ind = a[0].s();
  else
    ind = std::string(static_cast<size_t>(std::max<int64_t>(0, ToInt(a[0], "width"))), ' ');
  std::string s = ToStr(v) + "\n";
  std::vector<std::string> lines = pystr::SplitLines(s);
  std::string rv;
  if (ArgBool(a[2])) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : ind + lines[i]);
  }
  if (ArgBool(a[1])) rv = ind + rv;
  return Value::Str(rv);
}

Value F_int(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("int", {"default", "base"}, 0, args, kw, &given);
  Value dflt = given[0] ? a[0] : Value::Int(0);
  int base = given[1] ? static_cast<int>(ToInt(a[1], "base")) : 10;
  auto from_float = [&](double d) -> Value {
    if (std::isnan(d)) return dflt;
    if (std::isinf(d)) throw OpError("cannot convert float infinity to integer");
    if (std::fabs(d) >= 9.2e18)
      throw OpError("integer overflow: results beyond 64 bits are not supported");
    return Value::Int(static_cast<int64_t>(d));
  };
  if (v.is_int() || v.is_bool()) return Value::Int(v.i());
  if (v.is_float()) return from_float(v.f());
  if (v.is_string()) {
    int64_t i;
    if (pystr::ParseInt(v.s(), base, &i)) return Value::Int(i);
    double d;
    if (pystr::ParseFloat(v.s(), &d)) return from_float(d);
  }
  return dflt;
}

Value F_items(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("items", {}, 0, args, kw);
  if (v.is_undefined()) return Value::List({});
  if (!v.is_dict()) throw OpError("Can only get item pairs from a mapping.");
  ValueList out;
  for (auto& kv : v.Items()) out.push_back(Value::Tuple({kv.first, kv.second}));
  return Value::List(std::move(out));
}

Value F_join(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("join", {"d", "attribute"}, 0, args, kw, &given);
  std::string sep = given[0] ? ToStr(a[0]) : "";
  std::string out;
  bool first = true;
  for (const Value& item : Iterate(v)) {
    if (!first) out += sep;
    first = false;
    AppendStr(out, a[1].is_none()
                       ? item
                       : (a[1].is_string() ? GetPath(in, item, a[1].s()) : in.GetItem(item, a[1])));
  }
  return Value::Str(std::move(out));
}

Value F_list(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("list", {}, 0, args, kw);
  return Value::List(Iterate(v));
}

Value F_lower(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("lower", {}, 0, args, kw);
  return KeepMarkup(v, pystr::Lower(ToStr(v)));
}

Value F_upper(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("upper", {}, 0, args, kw);
  return KeepMarkup(v, pystr::Upper(ToStr(v)));
}

Value F_map(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  ValueList items = Iterate(v);
  ValueList out;
  bool by_attr = args.empty() &&
                 std::any_of(kw.begin(), kw.end(), [](auto& p) { return p.first == "attribute"; });
  if (by_attr) {
    Value attribute, dflt;
    for (auto& kv : kw) {
      if (kv.first == "attribute")
        attribute = kv.second;
      else if (kv.first == "default")
        dflt = kv.second;
      else
        throw OpError("Unexpected keyword argument " + pystr::Repr(kv.first));
    }
    for (const Value& item : items) {
      Value r =
          attribute.is_string() ? GetPath(in, item, attribute.s()) : in.GetItem(item, attribute);
      if (r.is_undefined() && !dflt.is_none()) r = dflt;
      out.push_back(r);
    }
    return Value::List(std::move(out));
  }
  if (args.empty()) throw OpError("map requires a filter argument");
  std::string name = ToStr(args[0]);
  ValueList rest(args.begin() + 1, args.end());
  for (const Value& item : items) {
    ValueList a = rest;
    Kwargs k = kw;
    out.push_back(in.ApplyFilter(name, item, a, k));
  }
  return Value::List(std::move(out));
}

Value MinMax(Interp& in, const Value& v, ValueList& args, Kwargs& kw, bool want_max,
             const char* fn) {
  Args a = Bind(fn, {"case_sensitive", "attribute"}, 0, args, kw);
  ValueList items = Iterate(v);
  if (items.empty()) return Value::Undef("No aggregated item, sequence was empty.", in.here());
  bool cs = ArgBool(a[0]);
  size_t best = 0;
  Value best_key = SortKey(in, items[0], a[1], cs, false);
  for (size_t i = 1; i < items.size(); ++i) {
    Value k = SortKey(in, items[i], a[1], cs, false);
    int c = Compare(k, best_key, want_max ? ">" : "<");
    if (want_max ? c > 0 : c < 0) {
      best = i;
      best_key = k;
    }
  }
  return items[best];
}

Value F_max(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  return MinMax(in, v, args, kw, true, "max");
}
Value F_min(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  return MinMax(in, v, args, kw, false, "min");
}

Value SelectReject(Interp& in, const Value& v, ValueList& args, Kwargs& kw, bool lookup_attr,
                   bool want) {
  ValueList items = Iterate(v);
  size_t off = 0;
  Value attr;
  if (lookup_attr) {
    if (args.empty()) throw OpError("Missing parameter for attribute name");
    attr = args[0];
    off = 1;
  }
  ValueList out;
  for (const Value& item : items) {
    Value x = !lookup_attr       ? item
              : attr.is_string() ? GetPath(in, item, attr.s())
                                 : in.GetItem(item, attr);
    bool r;
    if (args.size() > off) {
      ValueList targs(args.begin() + off + 1, args.end());
      Kwargs k = kw;
      r = in.ApplyTest(ToStr(args[off]), x, targs, k);
    } else {
      r = Truthy(x);
    }
    if (r == want) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Value F_select(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, false, true);
}
Value F_reject(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, false, false);
}
Value F_selectattr(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, true, true);
}
Value F_rejectattr(Interp& in, const Value& v, ValueList& a, Kwargs& k) {
  return SelectReject(in, v, a, k, true, false);
}

Value F_replace(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("replace", {"old", "new", "count"}, 2, args, kw);
  int64_t count = a[2].is_none() ? -1 : ToInt(a[2], "count");
  return Value::Str(pystr::Replace(ToStr(v), ToStr(a[0]), ToStr(a[1]), count));
}

Value F_reverse(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("reverse", {}, 0, args, kw);
  if (v.is_string()) {
    std::u32string u = pystr::Decode(v.s());
    std::reverse(u.begin(), u.end());
    return Value::Str(pystr::Encode(u));
  }
  ValueList items = Iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

double RoundHalfEven(double x, int64_t ndigits) {
  if (!std::isfinite(x)) return x;
  if (ndigits >= 0) {
    if (ndigits > 300) return x;
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(ndigits), x);
    return std::strtod(buf, nullptr);
  }
  if (ndigits < -308) return 0.0 * x;
  double p = std::pow(10.0, static_cast<double>(-ndigits));
  return std::nearbyint(x / p) * p;
}

Value F_round(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("round", {"precision", "method"}, 0, args, kw, &given);
  int64_t prec = given[0] ? ToInt(a[0], "precision") : 0;
  std::string method = given[1] ? ToStr(a[1]) : "common";
  if (method != "common" && method != "ceil" && method != "floor")
    throw OpError("method must be common, ceil or floor");
  if (!v.is_number()) throw OpError("type " + TypeName(v) + " doesn't define __round__ method");
  if (method == "common") {
    if (!v.is_float()) {
      if (prec >= 0) return Value::Int(v.i());
      double r = RoundHalfEven(static_cast<double>(v.i()), prec);
      return Value::Int(static_cast<int64_t>(r));
    }
    return Value::Float(RoundHalfEven(v.f(), prec));
  }
  if (prec < 0) throw OpError("negative precision is not supported with ceil/floor");
  double p = std::pow(10.0, static_cast<double>(prec));
  double scaled = v.f() * p;
  double r = method == "ceil" ? std::ceil(scaled) : std::floor(scaled);
  return Value::Float(r / p);
}

Value F_safe(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("safe", {}, 0, args, kw);
  return v.is_markup() ? v : Value::Markup(ToStr(v));
}

Value F_slice(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("slice", {"slices", "fill_with"}, 1, args, kw);
  ValueList seq = Iterate(v);
  int64_t slices = ToInt(a[0], "slices");
  if (slices <= 0) throw OpError("integer division or modulo by zero");
  int64_t length = static_cast<int64_t>(seq.size());
  int64_t per = length / slices, extra = length % slices, offset = 0;
  ValueList out;
  for (int64_t n = 0; n < slices; ++n) {
    int64_t start = offset + n * per;
    if (n < extra) ++offset;
    int64_t end = offset + (n + 1) * per;
    ValueList tmp(seq.begin() + start, seq.begin() + end);
    if (!a[1].is_none() && n >= extra) tmp.push_back(a[1]);
    out.push_back(Value::List(std::move(tmp)));
  }
  return Value::List(std::move(out));
}

Value F_sort(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("sort", {"reverse", "case_sensitive", "attribute"}, 0, args, kw);
  ValueList items = Iterate(v);
  bool rev = ArgBool(a[0]), cs = ArgBool(a[1]);
  std::vector<std::pair<Value, size_t>> keys;
  keys.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    keys.emplace_back(SortKey(in, items[i], a[2], cs, true), i);
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& x, const auto& y) {
    return rev ? Compare(y.first, x.first) < 0 : Compare(x.first, y.first) < 0;
  });
  ValueList out;
  out.reserve(items.size());
  for (const auto& k : keys) out.push_back(items[k.second]);
  return Value::List(std::move(out));
}

Value F_string(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("string", {}, 0, args, kw);
  return KeepMarkup(v, ToStr(v));
}

Value F_sum(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("sum", {"attribute", "start"}, 0, args, kw, &given);
  Value total = given[1] ? a[1] : Value::Int(0);
  for (const Value& item : Iterate(v)) {
    Value x = a[0].is_none()     ? item
              : a[0].is_string() ? GetPath(in, item, a[0].s())
                                 : in.GetItem(item, a[0]);
    total = BinaryOp("+", total, x);
  }
  return total;
}

Value F_title(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("title", {}, 0, args, kw);
  return Value::Str(pystr::JinjaTitle(ToStr(v)));
}

Value F_tojson(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("tojson", {"indent"}, 0, args, kw);
  return Value::Markup(ToJsonText(v, a[0]));
}

Value F_trim(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("trim", {"chars"}, 0, args, kw);
  std::string chars = a[0].is_none() ? "" : ToStr(a[0]);
  return KeepMarkup(v, pystr::Strip(ToStr(v), a[0].is_none() ? nullptr : &chars, true, true));
}

Value F_truncate(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  std::vector<bool> given;
  Args a = Bind("truncate", {"length", "killwords", "end", "leeway"}, 0, args, kw, &given);
  std::u32string s = pystr::Decode(ToStr(v));
  int64_t length = given[0] ? ToInt(a[0], "length") : 255;
  std::u32string end = pystr::Decode(given[2] ? ToStr(a[2]) : "...");
  int64_t leeway = given[3] && !a[3].is_none() ? ToInt(a[3], "leeway") : 5;
  if (length < static_cast<int64_t>(end.size()))
    throw OpError("expected length >= " + std::to_string(end.size()) + ", got " +
                  std::to_string(length));
  if (leeway < 0) throw OpError("expected leeway >= 0, got " + std::to_string(leeway));
  if (static_cast<int64_t>(s.size()) <= length + leeway) return Value::Str(pystr::Encode(s));
  std::u32string head = s.substr(0, static_cast<size_t>(length) - end.size());
  if (!ArgBool(a[1])) {
    size_t sp = head.rfind(U' ');
    if (sp != std::u32string::npos) head = head.substr(0, sp);
  }
  return Value::Str(pystr::Encode(head + end));
}

Value F_unique(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  Args a = Bind("unique", {"case_sensitive", "attribute"}, 0, args, kw);
  bool cs = ArgBool(a[0]);
  std::unordered_set<std::string> seen;
  ValueList out;
  for (const Value& item : Iterate(v)) {
    if (seen.insert(HashKey(SortKey(in, item, a[1], cs, false))).second) out.push_back(item);
  }
  return Value::List(std::move(out));
}

Value F_wordcount(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Bind("wordcount", {}, 0, args, kw);
  std::u32string s = pystr::Decode(ToStr(v));
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : s) {
    bool w = pystr::IsWordChar(c);
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::Int(n);
}

const std::unordered_map<std::string, FilterImpl>& Table() {
  static const std::unordered_map<std::string, FilterImpl> table = {
      {"abs", F_abs},
      {"attr", F_attr},
      {"batch", F_batch},
      {"capitalize", F_capitalize},
      {"center", F_center},
      {"count", F_length},
      {"d", F_default},
      {"default", F_default},
      {"dictsort", F_dictsort},
      {"e", F_escape},
      {"escape", F_escape},
      {"forceescape", F_forceescape},
      {"first", F_first},
      {"float", F_float},
      {"format", F_format},
      {"groupby", F_groupby},
      {"indent", F_indent},
      {"int", F_int},
      {"items", F_items},
      {"join", F_join},
      {"last", F_last},
      {"length", F_length},
      {"list", F_list},
      {"lower", F_lower},
      {"map", F_map},
      {"max", F_max},
      {"min", F_min},
      {"reject", F_reject},
      {"rejectattr", F_rejectattr},
      {"replace", F_replace},
      {"reverse", F_reverse},
      {"round", F_round},
      {"safe", F_safe},
      {"select", F_select},
      {"selectattr", F_selectattr},
      {"slice", F_slice},
      {"sort", F_sort},
      {"string", F_string},
      {"sum", F_sum},
      {"title", F_title},
      {"tojson", F_tojson},
      {"trim", F_trim},
      {"truncate", F_truncate},
      {"unique", F_unique},
      {"upper", F_upper},
      {"wordcount", F_wordcount},
  };
  return table;
}

}  // namespace

FilterImpl FindBuiltinFilter(const std::string& name) {
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : it->second;
}

}  // namespace msc::tmpl
