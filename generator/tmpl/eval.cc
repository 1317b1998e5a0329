// Expression evaluation: names, attribute/item access, calls, filters, tests, operators.
#include <algorithm>
#include <cmath>

#include "generator/tmpl/error.h"
#include "generator/tmpl/interp.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {
namespace {

// A Python method bound to a str/dict/list value (e.g. the result of `d.items`).
class BoundMethod : public Object {
 public:
  BoundMethod(Value recv, std::string name) : recv_(std::move(recv)), name_(std::move(name)) {}
  std::string TypeName() const override { return "builtin_function_or_method"; }
  std::string Repr() const override {
    return "<built-in method " + name_ + " of " + msc::tmpl::TypeName(recv_) + " object>";
  }
  bool IsCallable() const override { return true; }
  Value Call(Interp& in, ValueList& args, Kwargs& kwargs) override {
    return CallMethod(in, recv_, name_, args, kwargs);
  }

 private:
  Value recv_;
  std::string name_;
};

std::string ObjectTypeRepr(const Value& v) {
  if (v.is_none()) return "None";
  return TypeName(v) + " object";
}

// Source-like text of a name / attribute / constant-index path (`node.attrs.x`, `l[0]`), for
// messages; false for other expressions.
bool PathText(const Expr& e, std::string* out) {
  switch (e.kind) {
    case Expr::K::kName:
      *out += e.name;
      return true;
    case Expr::K::kGetAttr:
      if (!PathText(*e.items[0], out)) return false;
      *out += "." + e.name;
      return true;
    case Expr::K::kGetItem:
      if (e.items[1]->kind != Expr::K::kConst || !PathText(*e.items[0], out)) return false;
      *out += "[" + Repr(e.items[1]->value) + "]";
      return true;
    default:
      return false;
  }
}

}  // namespace

void Interp::CheckCallable(const Expr& callee, const Value& fn) const {
  if (fn.is_undefined() || (fn.is_object() && fn.obj()->IsCallable())) return;
  std::string path;
  if (!PathText(callee, &path)) throw OpError("'" + TypeName(fn) + "' object is not callable");
  std::string what = "None";
  if (!fn.is_none()) {
    const std::string type = TypeName(fn);
    const bool vowel = std::string("aeiouAEIOU").find(type[0]) != std::string::npos;
    what = (vowel ? "an " : "a ") + type;
  }
  throw OpError("'" + path + "' is not callable (" + what + ")");
}

Value Interp::Lookup(const std::string& name, const Scope& scope, int line, int col) {
  Value v;
  if (scope.Find(name, HashStr(name), &v)) return v;
  return LookupGlobal(name, line, col);
}

Value Interp::EvalAttrOn(const Expr& e, const Value& obj) {
  here_ = Pos(e.line, e.col);
  if (obj.is_dict() && !(e.methods & kDictMethod)) {  // a key, unless it names a method
    if (const DictBox* d = obj.native_dict()) {
      if (const Value* v = DictAttr(*d, e)) return *v;
    } else {
      Value v;
      if (obj.Get(e.name, e.hash, &v)) return v;
    }
  }
  return GetAttr(obj, e.name);
}

Value Interp::EvalAttr(const Expr& e, const Value& obj) {
  try {
    return EvalAttrOn(e, obj);
  } catch (const OpError& err) {
    Fail(e.line, e.col, err.what());
  }
}

Value Interp::EvalNameSlow(const Expr& e, const Scope& scope) {
  Value v;
  if (scope.Find(e.name, e.hash, &v)) return v;
  return LookupGlobal(e.name, e.line, e.col);
}

Value Interp::LookupGlobal(const std::string& name, int line, int col) {
  if (name == "self" && ctx_.scope) {  // Jinja2's TemplateReference(context)
    Register(ctx_.scope);              // it holds the context scope, which may come to hold it
    return Value::Obj(MakeRc<TemplateReference>(ctx_));
  }
  auto it = env_.globals.find(name);
  if (it != env_.globals.end()) return it->second;
  return Value::Undef("undefined variable '" + name + "'", Pos(line, col));
}

Value Interp::GetAttr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined:
      ThrowUndefined(obj);
    case Value::Kind::kDict: {
      if (HasMethod(obj, name)) return Value::Obj(MakeRc<BoundMethod>(obj, name));
      Value v;
      if (obj.Get(name, &v)) return v;
      break;
    }
    case Value::Kind::kString:
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      if (HasMethod(obj, name)) return Value::Obj(MakeRc<BoundMethod>(obj, name));
      break;
    case Value::Kind::kObject: {
      Value v;
      if (obj.obj()->GetAttr(name, &v)) return v;
      break;
    }
    default:
      break;
  }
  return Value::Undef(pystr::Repr(ObjectTypeRepr(obj)) + " has no attribute " + pystr::Repr(name),
                      here_);
}

Value Interp::GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) ThrowUndefined(obj);
  if (key.is_undefined()) ThrowUndefined(key);
  switch (obj.kind()) {
    case Value::Kind::kDict: {
      Value v;
      if (obj.Get(key, &v)) return v;
      break;
    }
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      if (key.is_int() || key.is_bool()) {
        int64_t i = key.i(), n = static_cast<int64_t>(obj.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return obj.at(static_cast<size_t>(i));
      }
      break;
    case Value::Kind::kString:
      if (key.is_int() || key.is_bool()) {
        std::vector<size_t> b = pystr::Boundaries(obj.s());
        int64_t i = key.i(), n = static_cast<int64_t>(b.size()) - 1;
        if (i < 0) i += n;
        if (i >= 0 && i < n) {  // (Markup's items are Markup)
          std::string item = obj.s().substr(b[i], b[i + 1] - b[i]);
          return obj.is_markup() ? Value::Markup(std::move(item)) : Value::Str(std::move(item));
        }
      }
      break;
    case Value::Kind::kObject: {
      ValueList items;
      if ((key.is_int() || key.is_bool()) && obj.obj()->Iter(&items)) {
        int64_t i = key.i(), n = static_cast<int64_t>(items.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return items[static_cast<size_t>(i)];
      }
      break;
    }
    default:
      break;
  }
  if (key.is_string()) {
    if (obj.is_object()) {
      Value v;
      if (obj.obj()->GetAttr(key.s(), &v)) return v;
    } else if (HasMethod(obj, key.s())) {
      return Value::Obj(MakeRc<BoundMethod>(obj, key.s()));
    }
    return Value::Undef(
        pystr::Repr(ObjectTypeRepr(obj)) + " has no attribute " + pystr::Repr(key.s()), here_);
  }
  return Value::Undef(ObjectTypeRepr(obj) + " has no element " + Repr(key), here_);
}

Value Interp::CallValue(const Value& callee, ValueList& args, Kwargs& kwargs, std::string* sink,
                        bool* printed) {
  if (callee.is_undefined()) ThrowUndefined(callee);
  if (!callee.is_object() || !callee.obj()->IsCallable())
    throw OpError("'" + TypeName(callee) + "' object is not callable");
  Object* obj = callee.obj();
  if (Macro* m = obj->AsMacro()) {
    if (!sink) {
      std::string text;
      CallMacro(*m, args.data(), args.size(), kwargs, text);
      return Value::Str(std::move(text));
    }
    CallMacro(*m, args.data(), args.size(), kwargs, *sink);
    *printed = true;
    return Value();
  }
  return obj->Call(*this, args, kwargs);
}

void Interp::CallMacro(Macro& m, const Value* args, size_t nargs, Kwargs& kwargs,
                       std::string& out) {
  const SourcePos call_pos = here_;
  try {
    m.CallInto(*this, args, nargs, kwargs, out);
  } catch (const TemplateError& e) {
    std::string msg = e.what();
    if (std::count(msg.begin(), msg.end(), '\n') < 8) {
      std::string where = FormatPos(call_pos);
      where.resize(where.size() - 2);
      msg += "\n  in macro '" + m.name() + "' called from " + where;
    }
    throw TemplateError(msg);
  }
}

void Interp::EvalArgs(const Expr& e, const ScopePtr& scope, ValueList& args, Kwargs& kwargs) {
  if (!e.args.empty()) {
    args.reserve(e.args.size());
    for (const auto& a : e.args) {
      if (const Value* p = Peek(*a, *scope))
        args.push_back(*p);
      else
        args.push_back(Eval(*a, scope));
    }
  }
  if (e.dyn_args) {
    Value extra = Eval(*e.dyn_args, scope);
    for (Value& v : Iterate(extra)) args.push_back(std::move(v));
  }
  for (const auto& kv : e.kwargs) kwargs.emplace_back(kv.first, Eval(*kv.second, scope));
  if (e.dyn_kwargs) {
    Value extra = Eval(*e.dyn_kwargs, scope);
    if (extra.is_undefined()) ThrowUndefined(extra);
    if (!extra.is_dict())
      throw OpError("argument after ** must be a mapping, not " + TypeName(extra));
    for (auto& kv : extra.Items()) {
      if (!kv.first.is_string()) throw OpError("keywords must be strings");
      kwargs.emplace_back(kv.first.s(), kv.second);
    }
  }
}

Value Interp::EvalCall(const Expr& e, const ScopePtr& scope, std::string* sink, bool* printed) {
  const Expr& callee = *e.items[0];
  ValueList args;
  Kwargs kwargs;
  Value fn;
  if (callee.kind == Expr::K::kGetAttr) {
    Value recv_tmp;
    const Value& recv = EvalRef(*callee.items[0], scope, recv_tmp);
    const uint8_t bit = recv.is_string()  ? kStrMethod
                        : recv.is_dict()  ? kDictMethod
                        : recv.is_list()  ? kListMethod
                        : recv.is_tuple() ? kTupleMethod
                                          : 0;
    if (callee.methods & bit) {
      EvalArgs(e, scope, args, kwargs);
      here_ = Pos(e.line, e.col);
      return CallMethod(*this, recv, callee.name, args, kwargs);
    }
    here_ = Pos(callee.line, callee.col);
    fn = GetAttr(recv, callee.name);
  } else if (const Value* f = Peek(callee, *scope)) {  // a macro by name: no copy
    Macro* m = f->is_object() ? f->obj()->AsMacro() : nullptr;
    if (m && sink && e.kwargs.empty() && !e.dyn_args && !e.dyn_kwargs &&
        e.args.size() <= kInlineArgs) {
      // Positional arguments only, printed: the arguments on the stack, straight to the macro.
      InlineArgs argv;
      for (const auto& a : e.args) {
        const Value* p = Peek(*a, *scope);
        argv.Push(p ? *p : Eval(*a, scope));
      }
      here_ = Pos(e.line, e.col);
      CallMacro(*m, argv.data(), argv.size(), kwargs, *sink);
      *printed = true;
      return Value();
    }
    EvalArgs(e, scope, args, kwargs);
    here_ = Pos(e.line, e.col);
    CheckCallable(callee, *f);
    return CallValue(*f, args, kwargs, sink, printed);
  } else {
    fn = Eval(callee, scope);
  }
  EvalArgs(e, scope, args, kwargs);
  here_ = Pos(e.line, e.col);
  CheckCallable(callee, fn);
  return CallValue(fn, args, kwargs, sink, printed);
}

void Interp::Print(const Expr& e, const ScopePtr& scope, std::string& out, const Expr* at) {
  const Expr& pos = at ? *at : e;  // where str() errors are reported
  if (const Value* p = Peek(e, *scope)) {
    if (p->is_string()) {  // the common case
      out += p->s();
      return;
    }
    try {
      AppendStr(out, *p);
    } catch (const OpError& err) {
      Fail(pos.line, pos.col, err.what());
    }
    return;
  }
  if (e.kind == Expr::K::kCond) {  // print the branch taken (so that it prints in place too)
    bool take;
    try {
      take = Cond(*e.items[0], scope);
    } catch (const OpError& err) {
      Fail(e.line, e.col, err.what());
    }
    if (take) {
      Print(*e.items[1], scope, out, &pos);
    } else if (e.items[2]) {
      Print(*e.items[2], scope, out, &pos);
    }  // else: a lenient undefined, which prints as ''
    return;
  }
  Value v;
  if (e.str_format) {  // "literal".format(...): formatted straight into the output
    try {
      ValueList args;
      Kwargs kwargs;
      EvalArgs(e, scope, args, kwargs);
      here_ = Pos(e.line, e.col);
      for (const Value& a : args)  // as CallMethod
        if (a.is_undefined() && !a.is_lenient_undefined()) ThrowUndefined(a);
      StrFormatTo(out, e.items[0]->items[0]->value.s(), args.data(), args.size(), kwargs);
    } catch (const OpError& err) {
      Fail(e.line, e.col, err.what());
    }
    return;
  }
  if (e.kind == Expr::K::kCall) {
    bool printed = false;
    try {
      v = EvalCall(e, scope, &out, &printed);
    } catch (const OpError& err) {
      Fail(e.line, e.col, err.what());
    }
    if (printed) return;
  } else if (e.kind == Expr::K::kFilter && e.filter_append && e.items[0] &&
             (env_.filters.empty() || !env_.filters.count(e.name))) {
    Value tmp;
    const Value& input = EvalRef(*e.items[0], scope, tmp);
    ValueList args;
    Kwargs kwargs;
    try {
      EvalArgs(e, scope, args, kwargs);
      here_ = Pos(e.line, e.col);
      if (input.is_undefined() && !input.is_lenient_undefined()) ThrowUndefined(input);
      e.filter_append(*this, input, args, kwargs, out);
    } catch (const OpError& err) {
      Fail(e.line, e.col, err.what());
    }
    return;
  } else {
    v = Eval(e, scope);
  }
  try {
    AppendStr(out, v);
  } catch (const OpError& err) {
    Fail(pos.line, pos.col, err.what());
  }
}

bool Interp::Cond(const Expr& e, const ScopePtr& scope) {
  if (e.kind == Expr::K::kCompare && e.ops.size() == 1 && e.ops[0] != CmpOp::kLt &&
      e.ops[0] != CmpOp::kLe && e.ops[0] != CmpOp::kGt && e.ops[0] != CmpOp::kGe) {
    // ==, !=, in, not in with the operands in place (what EvalCompare computes, without the
    // bool value)
    Value ltmp, rtmp;
    const Value& left = EvalRef(*e.items[0], scope, ltmp);
    const Value& right = EvalRef(*e.items[1], scope, rtmp);
    try {
      switch (e.ops[0]) {
        case CmpOp::kEq:
          return EqualsFast(left, right);
        case CmpOp::kNe:
          return !EqualsFast(left, right);
        case CmpOp::kIn:
          return ContainsFast(right, left);
        default:
          return !ContainsFast(right, left);
      }
    } catch (const OpError& err) {
      Fail(e.line, e.col, err.what());
    }
  }
  if (e.kind == Expr::K::kNot) return !Cond(*e.items[0], scope);
  Value tmp;
  if (e.kind == Expr::K::kTest && e.test) {  // EvalTest without the bool value
    const Value& input = EvalRef(*e.items[0], scope, tmp);
    ValueList args;
    Kwargs kwargs;
    try {
      EvalArgs(e, scope, args, kwargs);
      here_ = Pos(e.line, e.col);
      return e.test(*this, input, args, kwargs);
    } catch (const OpError& err) {
      Fail(e.line, e.col, err.what());
    }
  }
  return Truthy(EvalRef(e, scope, tmp));
}

Value Interp::EvalCompare(const Expr& e, const ScopePtr& scope) {
  if (e.ops.size() == 1) {  // a single comparison: operands in place
    Value ltmp, rtmp;
    const Value& left = EvalRef(*e.items[0], scope, ltmp);
    const Value& right = EvalRef(*e.items[1], scope, rtmp);
    const CmpOp op = e.ops[0];
    switch (op) {
      case CmpOp::kEq:
        return Value::Bool(Equals(left, right));
      case CmpOp::kNe:
        return Value::Bool(!Equals(left, right));
      case CmpOp::kIn:
        return Value::Bool(Contains(right, left));
      case CmpOp::kNotIn:
        return Value::Bool(!Contains(right, left));
      default: {
        if (left.is_number() && right.is_number() &&
            (std::isnan(left.f()) || std::isnan(right.f())))
          return Value::Bool(false);
        const int c = Compare(left, right, CmpOpName(op));
        return Value::Bool(op == CmpOp::kLt   ? c < 0
                           : op == CmpOp::kLe ? c <= 0
                           : op == CmpOp::kGt ? c > 0
                                              : c >= 0);
      }
    }
  }
  Value left = Eval(*e.items[0], scope);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = Eval(*e.items[i + 1], scope);
    const CmpOp op = e.ops[i];
    bool r;
    if (op == CmpOp::kEq) {
      r = Equals(left, right);
    } else if (op == CmpOp::kNe) {
      r = !Equals(left, right);
    } else if (op == CmpOp::kIn) {
      r = Contains(right, left);
    } else if (op == CmpOp::kNotIn) {
      r = !Contains(right, left);
    } else {
      if (left.is_number() && right.is_number() && (std::isnan(left.f()) || std::isnan(right.f())))
        return Value::Bool(false);
      int c = Compare(left, right, CmpOpName(op));
      r = op == CmpOp::kLt ? c < 0 : op == CmpOp::kLe ? c <= 0 : op == CmpOp::kGt ? c > 0 : c >= 0;
    }
    if (!r) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

Value Interp::EvalSeq(const Expr& e, const ScopePtr& scope) {
  ValueList items;
  items.reserve(e.items.size());
  for (const auto& c : e.items) items.push_back(Eval(*c, scope));
  return e.kind == Expr::K::kList ? Value::List(std::move(items)) : Value::Tuple(std::move(items));
}

Value Interp::EvalDict(const Expr& e, const ScopePtr& scope) {
  ValueDict d;
  for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
    Value k = Eval(*e.items[i], scope);
    Value v = Eval(*e.items[i + 1], scope);
    if (k.is_undefined()) ThrowUndefined(k);
    if (k.is_seq() && k.is_list()) throw OpError("unhashable type: 'list'");
    if (k.is_dict()) throw OpError("unhashable type: 'dict'");
    bool replaced = false;
    for (auto& kv : d) {
      if (Equals(kv.first, k)) {
        kv.second = v;
        replaced = true;
        break;
      }
    }
    if (!replaced) d.emplace_back(std::move(k), std::move(v));
  }
  return Value::Dict(std::move(d));
}

Value Interp::EvalGetItem(const Expr& e, const ScopePtr& scope) {
  Value obj = Eval(*e.items[0], scope);
  const Expr& idx = *e.items[1];
  if (idx.kind == Expr::K::kSlice) {
    Value parts[3];
    for (int k = 0; k < 3; ++k)
      if (idx.items[k]) parts[k] = Eval(*idx.items[k], scope);
    return Slice(obj, parts[0], parts[1], parts[2]);
  }
  Value key = Eval(idx, scope);
  here_ = Pos(e.line, e.col);
  return GetItem(obj, key);
}

Value Interp::EvalFilter(const Expr& e, const ScopePtr& scope) {
  Value tmp;
  const Value& input = e.items[0] ? EvalRef(*e.items[0], scope, tmp) : *block_input;
  ValueList args;
  Kwargs kwargs;
  EvalArgs(e, scope, args, kwargs);
  here_ = Pos(e.line, e.col);
  if (e.filter && env_.filters.empty() && !input.is_undefined())  // a builtin, as ApplyFilter
    return e.filter(*this, input, args, kwargs);
  return ApplyFilter(e.name, input, args, kwargs, e.filter);
}

Value Interp::EvalTest(const Expr& e, const ScopePtr& scope) {
  Value tmp;
  const Value& input = EvalRef(*e.items[0], scope, tmp);
  ValueList args;
  Kwargs kwargs;
  EvalArgs(e, scope, args, kwargs);
  here_ = Pos(e.line, e.col);
  TestImpl t = e.test;
  if (!t) throw OpError("unknown test '" + e.name + "'");
  return Value::Bool(t(*this, input, args, kwargs));
}

Value Interp::EvalConcat(const Expr& e, const ScopePtr& scope) {
  std::string s;
  for (const auto& c : e.items) AppendStr(s, Eval(*c, scope));
  return Value::Str(std::move(s));
}

__attribute__((always_inline)) inline Value Interp::EvalImpl(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case Expr::K::kConst:
      return e.value;
    case Expr::K::kName:
      if (const Value* v = FindName(e, *scope)) return *v;
      return EvalNameSlow(e, *scope);
    case Expr::K::kList:
    case Expr::K::kTuple:
      return EvalSeq(e, scope);
    case Expr::K::kDict:
      return EvalDict(e, scope);
    case Expr::K::kGetAttr: {
      Value tmp;
      return EvalAttrOn(e, EvalRef(*e.items[0], scope, tmp));
    }
    case Expr::K::kGetItem:
      return EvalGetItem(e, scope);
    case Expr::K::kSlice:
      throw OpError("slice expression outside of a subscript");
    case Expr::K::kCall:
      return EvalCall(e, scope);
    case Expr::K::kFilter:
      return EvalFilter(e, scope);
    case Expr::K::kTest:
      return EvalTest(e, scope);
    case Expr::K::kNeg:
      return UnaryMinus(Eval(*e.items[0], scope));
    case Expr::K::kPos: {
      Value v = Eval(*e.items[0], scope);
      if (v.is_undefined()) ThrowUndefined(v);
      if (!v.is_number()) throw OpError("bad operand type for unary +: '" + TypeName(v) + "'");
      return v.is_bool() ? Value::Int(v.i()) : v;
    }
    case Expr::K::kNot:
      return Value::Bool(!Cond(*e.items[0], scope));
    case Expr::K::kBinary: {
      Value a = Eval(*e.items[0], scope);
      Value b = Eval(*e.items[1], scope);
      return BinaryOp(e.op, a, b);
    }
    case Expr::K::kConcat:
      return EvalConcat(e, scope);
    case Expr::K::kCompare:
      return EvalCompare(e, scope);
    case Expr::K::kAnd: {
      Value a = Eval(*e.items[0], scope);
      if (!Truthy(a)) return a;
      return Eval(*e.items[1], scope);
    }
    case Expr::K::kOr: {
      Value a = Eval(*e.items[0], scope);
      if (Truthy(a)) return a;
      return Eval(*e.items[1], scope);
    }
    case Expr::K::kCond:
      if (Cond(*e.items[0], scope)) return Eval(*e.items[1], scope);
      if (e.items[2]) return Eval(*e.items[2], scope);
      return Value::Undef(
          "the inline if-expression evaluated to false and no else section was defined",
          Pos(e.line, e.col), true);
    case Expr::K::kBlockInput:
      return block_input ? *block_input : Value();
  }
  return Value();
}

Value Interp::EvalChecked(const Expr& e, const ScopePtr& scope) {
  try {
    return EvalImpl(e, scope);
  } catch (const OpError& err) {
    Fail(e.line, e.col, err.what());
  }
}

Value Interp::ApplyFilter(const std::string& name, const Value& input, ValueList& args,
                          Kwargs& kwargs, FilterImpl builtin) {
  auto it = env_.filters.empty() ? env_.filters.end() : env_.filters.find(name);
  if (it != env_.filters.end()) {
    if (input.is_undefined()) ThrowUndefined(input);
    std::vector<Json> jargs;
    jargs.push_back(input.ToJson());
    for (const Value& a : args) jargs.push_back(a.ToJson());
    Json jkw = Json::object();
    for (const auto& kv : kwargs) jkw[kv.first] = kv.second.ToJson();
    try {
      return FromJsonDeep(it->second(jargs, jkw));
    } catch (const std::exception& ex) {
      throw OpError("filter '" + name + "' failed: " + ex.what());
    }
  }
  FilterImpl f = builtin ? builtin : FindBuiltinFilter(name);
  if (!f) throw OpError("unknown filter '" + name + "'");
  if (input.is_undefined() && name != "default" && name != "d" && name != "items" &&
      !input.is_lenient_undefined())
    ThrowUndefined(input);
  return f(*this, input, args, kwargs);
}

bool Interp::ApplyTest(const std::string& name, const Value& input, ValueList& args,
                       Kwargs& kwargs) {
  TestImpl t = FindBuiltinTest(name);
  if (!t) throw OpError("unknown test '" + name + "'");
  return t(*this, input, args, kwargs);
}

}  // namespace msc::tmpl
