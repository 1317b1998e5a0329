// Builtin tests for `x is name(args)` (Jinja2 3.x semantics).
#include <cmath>
#include <unordered_map>

#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {
namespace {

Value Arg(const char* test, ValueList& args, Kwargs& kw, const char* name) {
  return BindArgs(ArgSpec{test, {name}, 1}, args, kw)[0];
}

void NoArgs(const char* test, ValueList& args, Kwargs& kw) {
  if (!args.empty() || !kw.empty()) BindArgs(ArgSpec{test, {}, 0}, args, kw);  // the error
}

#define SIMPLE_TEST(fn, expr)                                     \
  bool fn(Interp&, const Value& v, ValueList& args, Kwargs& kw) { \
    NoArgs(#fn, args, kw);                                        \
    return (expr);                                                \
  }

SIMPLE_TEST(T_defined, !v.is_undefined())
SIMPLE_TEST(T_undefined, v.is_undefined())
SIMPLE_TEST(T_none, v.is_none())
SIMPLE_TEST(T_boolean, v.is_bool())
SIMPLE_TEST(T_true, v.is_bool() && v.b())
SIMPLE_TEST(T_false, v.is_bool() && !v.b())
SIMPLE_TEST(T_number, v.is_number())
SIMPLE_TEST(T_integer, v.is_int())
SIMPLE_TEST(T_float, v.is_float())
SIMPLE_TEST(T_string, v.is_string())
SIMPLE_TEST(T_mapping, v.is_dict())
SIMPLE_TEST(T_callable, v.is_object() && v.obj()->IsCallable())
SIMPLE_TEST(T_escaped, ((void)v, false))

bool T_sequence(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("sequence", args, kw);
  if (v.is_string() || v.is_seq() || v.is_dict()) return true;
  return v.is_object() && dynamic_cast<const Range*>(v.obj()) != nullptr;
}

bool T_iterable(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("iterable", args, kw);
  if (v.is_undefined() && !v.is_lenient_undefined()) ThrowUndefined(v);
  if (v.is_string() || v.is_seq() || v.is_dict() || v.is_lenient_undefined()) return true;
  ValueList unused;
  return v.is_object() && v.obj()->Iter(&unused);
}

bool Mod(const Value& v, const Value& n, int64_t want) {
  Value r = BinaryOp(BinOp::kMod, v, n);
  return Equals(r, Value::Int(want));
}

bool T_divisibleby(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Mod(v, Arg("divisibleby", args, kw, "num"), 0);
}
bool T_even(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("even", args, kw);
  return Mod(v, Value::Int(2), 0);
}
bool T_odd(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("odd", args, kw);
  return Mod(v, Value::Int(2), 1);
}

bool T_eq(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Equals(v, Arg("eq", args, kw, "other"));
}
bool T_ne(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return !Equals(v, Arg("ne", args, kw, "other"));
}

bool Order(const Value& a, const Value& b, const char* op) {
  if (a.is_number() && b.is_number() && (std::isnan(a.f()) || std::isnan(b.f()))) return false;
  int c = Compare(a, b, op);
  std::string o = op;
  return o == "<" ? c < 0 : o == "<=" ? c <= 0 : o == ">" ? c > 0 : c >= 0;
}
bool T_lt(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Order(v, Arg("lt", args, kw, "other"), "<");
}
bool T_le(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Order(v, Arg("le", args, kw, "other"), "<=");
}
bool T_gt(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Order(v, Arg("gt", args, kw, "other"), ">");
}
bool T_ge(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Order(v, Arg("ge", args, kw, "other"), ">=");
}

bool T_in(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  return Contains(Arg("in", args, kw, "seq"), v);
}

bool T_sameas(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  Value o = Arg("sameas", args, kw, "other");
  if (v.kind() != o.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kBool:
      return v.b() == o.b();
    case Value::Kind::kInt:
      return v.i() == o.i() && v.i() >= -5 && v.i() <= 256;  // CPython small ints
    case Value::Kind::kFloat:
      return v.f() == o.f();
    case Value::Kind::kString:
      return v.s() == o.s();
    default:
      return v.identity() == o.identity();
  }
}

bool CaseTest(const Value& v, bool lower) {
  std::string s = ToStr(v);
  return lower ? pystr::IsLowerStr(s) : pystr::IsUpperStr(s);
}
bool T_lower(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("lower", args, kw);
  return CaseTest(v, true);
}
bool T_upper(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("upper", args, kw);
  return CaseTest(v, false);
}

bool T_filter(Interp& in, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("filter", args, kw);
  return v.is_string() && (FindBuiltinFilter(v.s()) || in.env().filters.count(v.s()));
}
bool T_test(Interp&, const Value& v, ValueList& args, Kwargs& kw) {
  NoArgs("test", args, kw);
  return v.is_string() && FindBuiltinTest(v.s());
}

const std::unordered_map<std::string, TestImpl>& Table() {
  static const std::unordered_map<std::string, TestImpl> table = {
      {"defined", T_defined},
      {"undefined", T_undefined},
      {"none", T_none},
      {"boolean", T_boolean},
      {"true", T_true},
      {"false", T_false},
      {"number", T_number},
      {"integer", T_integer},
      {"float", T_float},
      {"string", T_string},
      {"mapping", T_mapping},
      {"callable", T_callable},
      {"escaped", T_escaped},
      {"sequence", T_sequence},
      {"iterable", T_iterable},
      {"divisibleby", T_divisibleby},
      {"even", T_even},
      {"odd", T_odd},
      {"eq", T_eq},
      {"equalto", T_eq},
      {"==", T_eq},
      {"ne", T_ne},
      {"!=", T_ne},
      {"lt", T_lt},
      {"lessthan", T_lt},
      {"<", T_lt},
      {"le", T_le},
      {"<=", T_le},
      {"gt", T_gt},
      {"greaterthan", T_gt},
      {">", T_gt},
      {"ge", T_ge},
      {">=", T_ge},
      {"in", T_in},
      {"sameas", T_sameas},
      {"lower", T_lower},
      {"upper", T_upper},
      {"filter", T_filter},
      {"test", T_test},
  };
  return table;
}

}  // namespace

TestImpl FindBuiltinTest(const std::string& name) {
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : it->second;
}

}  // namespace msc::tmpl
