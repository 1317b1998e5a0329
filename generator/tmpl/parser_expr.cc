// Expression grammar: Jinja2's parse_tuple / parse_expression / ... / parse_primary.
// Expressions are resolved as they are built: names and attribute names get their hashes,
// operators their codes, filters and tests their builtin implementations, and list/tuple/dict
// literals made only of constants become constants.
#include "generator/tmpl/interp.h"
#include "generator/tmpl/parser_impl.h"

namespace msc::tmpl::detail {
namespace {

BinOp BinOpFromText(const std::string& op) {
  if (op == "+") return BinOp::kAdd;
  if (op == "-") return BinOp::kSub;
  if (op == "*") return BinOp::kMul;
  if (op == "/") return BinOp::kDiv;
  if (op == "//") return BinOp::kFloorDiv;
  if (op == "%") return BinOp::kMod;
  return BinOp::kPow;
}

bool AllConst(const std::vector<ExprPtr>& items) {
  for (const auto& c : items)
    if (!c || c->kind != Expr::K::kConst) return false;
  return true;
}

// A list/tuple/dict literal of constants becomes a constant (built once; values are immutable).
// Dicts only when every key is a string (no unhashable-key errors to keep for run time).
ExprPtr FoldLiteral(ExprPtr e) {
  if (!AllConst(e->items)) return e;
  if (e->kind == Expr::K::kList || e->kind == Expr::K::kTuple) {
    ValueList items;
    items.reserve(e->items.size());
    for (const auto& c : e->items) items.push_back(c->value);
    e->value =
        e->kind == Expr::K::kList ? Value::List(std::move(items)) : Value::Tuple(std::move(items));
  } else if (e->kind == Expr::K::kDict) {
    ValueDict d;
    for (size_t i = 0; i + 1 < e->items.size(); i += 2) {
      const Value& k = e->items[i]->value;
      if (!k.is_string()) return e;
      bool replaced = false;
      for (auto& kv : d) {
        if (kv.first.s() == k.s()) {
          kv.second = e->items[i + 1]->value;
          replaced = true;
          break;
        }
      }
      if (!replaced) d.emplace_back(k, e->items[i + 1]->value);
    }
    e->value = Value::Dict(std::move(d));
  } else {
    return e;
  }
  e->kind = Expr::K::kConst;
  e->items.clear();
  return e;
}

}  // namespace

ExprPtr ExprParser::ParseAssignTarget(bool with_tuple, bool name_only,
                                      const std::vector<std::string>& extra_end,
                                      bool with_namespace) {
  const Token& at = Cur();
  ExprPtr target;
  if (with_namespace && Cur().type == Tok::kName && Look().type == Tok::kOp && Look().text == ".") {
    auto ns = MakeExpr(Expr::K::kName, Cur());
    ns->name = Next().text;
    ns->hash = HashStr(ns->name);
    Next();
    target = MakeExpr(Expr::K::kGetAttr, at);
    target->name = ExpectAnyName();
    target->hash = HashStr(target->name);
    target->key = InternKey(target->name, target->hash);
    target->items.push_back(std::move(ns));
    return target;
  }
  if (name_only) {
    target = MakeExpr(Expr::K::kName, at);
    target->name = ExpectAnyName();
    target->hash = HashStr(target->name);
  } else if (with_tuple) {
    target = ParseTuple(true, true, extra_end, false);
  } else {
    target = ParsePrimary();
  }
  CheckAssignable(target.get());
  return target;
}

void ExprParser::CheckAssignable(const Expr* e) {
  if (e->kind == Expr::K::kName && !IsReservedName(e->name)) return;
  if (e->kind == Expr::K::kTuple) {
    for (const auto& c : e->items) CheckAssignable(c.get());
    return;
  }
  Token at;
  at.line = e->line;
  at.col = e->col;
  Fail(at, "can't assign to this expression");
}

bool ExprParser::IsTupleEnd(const std::vector<std::string>& extra_end) const {
  if (Cur().type == Tok::kVarEnd || Cur().type == Tok::kBlockEnd || IsOp(")")) return true;
  return Cur().type == Tok::kName &&
         std::find(extra_end.begin(), extra_end.end(), Cur().text) != extra_end.end();
}

ExprPtr ExprParser::ParseTuple(bool simplified, bool with_condexpr,
                               const std::vector<std::string>& extra_end, bool explicit_parens) {
  const Token& at = Cur();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) ExpectOp(",");
    if (IsTupleEnd(extra_end)) break;
    items.push_back(simplified ? ParsePrimary() : ParseExpression(with_condexpr));
    if (IsOp(","))
      is_tuple = true;
    else
      break;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) Fail(Cur(), "expected an expression, got " + Describe(Cur()));
  }
  auto t = MakeExpr(Expr::K::kTuple, at);
  t->items = std::move(items);
  return FoldLiteral(std::move(t));
}

ExprPtr ExprParser::ParseExpression(bool with_condexpr) {
  DepthGuard guard(this);
  if (!with_condexpr) return ParseOr();
  const Token& at = Cur();
  ExprPtr e = ParseOr();
  while (SkipName("if")) {
    auto c = MakeExpr(Expr::K::kCond, at);
    c->items.push_back(ParseOr());
    c->items.push_back(std::move(e));
    c->items.push_back(SkipName("else") ? ParseExpression(true) : nullptr);
    e = std::move(c);
  }
  return e;
}

ExprPtr ExprParser::Binary(Expr::K k, const Token& at, ExprPtr a, ExprPtr b,
                           const std::string& op) {
  auto e = MakeExpr(k, at);
  e->name = op;
  if (k == Expr::K::kBinary) e->op = BinOpFromText(op);
  e->items.push_back(std::move(a));
  e->items.push_back(std::move(b));
  return e;
}

ExprPtr ExprParser::ParseOr() {
  ExprPtr e = ParseAnd();
  while (IsName("or")) {
    const Token& at = Next();
    e = Binary(Expr::K::kOr, at, std::move(e), ParseAnd());
  }
  return e;
}

ExprPtr ExprParser::ParseAnd() {
  ExprPtr e = ParseNot();
  while (IsName("and")) {
    const Token& at = Next();
    e = Binary(Expr::K::kAnd, at, std::move(e), ParseNot());
  }
  return e;
}

ExprPtr ExprParser::ParseNot() {
  if (IsName("not")) {
    DepthGuard guard(this);
    auto e = MakeExpr(Expr::K::kNot, Next());
    e->items.push_back(ParseNot());
    return e;
  }
  return ParseCompare();
}

ExprPtr ExprParser::ParseCompare() {
  const Token& at = Cur();
  ExprPtr first = ParseMath1();
  ExprPtr cmp;
  while (true) {
    CmpOp op;
    if (SkipOp("==")) {
      op = CmpOp::kEq;
    } else if (SkipOp("!=")) {
      op = CmpOp::kNe;
    } else if (SkipOp("<")) {
      op = CmpOp::kLt;
    } else if (SkipOp("<=")) {
      op = CmpOp::kLe;
    } else if (SkipOp(">")) {
      op = CmpOp::kGt;
    } else if (SkipOp(">=")) {
      op = CmpOp::kGe;
    } else if (SkipName("in")) {
      op = CmpOp::kIn;
    } else if (IsName("not") && Look().type == Tok::kName && Look().text == "in") {
      Next();
      Next();
      op = CmpOp::kNotIn;
    } else {
      break;
    }
    if (!cmp) {
      cmp = MakeExpr(Expr::K::kCompare, at);
      cmp->items.push_back(std::move(first));
    }
    cmp->ops.push_back(op);
    cmp->items.push_back(ParseMath1());
  }
  return cmp ? std::move(cmp) : std::move(first);
}

ExprPtr ExprParser::ParseMath1() {
  ExprPtr e = ParseConcat();
  while (IsOp("+") || IsOp("-")) {
    const Token& at = Next();
    e = Binary(Expr::K::kBinary, at, std::move(e), ParseConcat(), at.text);
  }
  return e;
}

ExprPtr ExprParser::ParseConcat() {
  const Token& at = Cur();
  ExprPtr e = ParseMath2();
  if (!IsOp("~")) return e;
  auto c = MakeExpr(Expr::K::kConcat, at);
  c->items.push_back(std::move(e));
  while (SkipOp("~")) c->items.push_back(ParseMath2());
  return c;
}

ExprPtr ExprParser::ParseMath2() {
  ExprPtr e = ParsePow();
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    const Token& at = Next();
    e = Binary(Expr::K::kBinary, at, std::move(e), ParsePow(), at.text);
  }
  return e;
}

ExprPtr ExprParser::ParsePow() {
  ExprPtr e = ParseUnary(true);
  while (IsOp("**")) {
    const Token& at = Next();
    e = Binary(Expr::K::kBinary, at, std::move(e), ParseUnary(true), "**");
  }
  return e;
}

ExprPtr ExprParser::ParseUnary(bool with_filter) {
  DepthGuard guard(this);
  ExprPtr e;
  if (IsOp("-") || IsOp("+")) {
    const Token& at = Next();
    e = MakeExpr(at.text == "-" ? Expr::K::kNeg : Expr::K::kPos, at);
    e->items.push_back(ParseUnary(false));
  } else {
    e = ParsePrimary();
  }
  e = ParsePostfix(std::move(e));
  if (with_filter) e = ParseFilterExpr(std::move(e));
  return e;
}

ExprPtr ExprParser::ParsePrimary() {
  DepthGuard guard(this);
  const Token& tok = Cur();
  ExprPtr e;
  switch (tok.type) {
    case Tok::kName: {
      e = MakeExpr(Expr::K::kConst, tok);
      const std::string& n = tok.text;
      if (n == "true" || n == "True")
        e->value = Value::Bool(true);
      else if (n == "false" || n == "False")
        e->value = Value::Bool(false);
      else if (n == "none" || n == "None")
        e->value = Value();
      else {
        e->kind = Expr::K::kName;
        e->name = n;
        e->hash = HashStr(n);
      }
      Next();
      return e;
    }
    case Tok::kString: {
      e = MakeExpr(Expr::K::kConst, tok);
      std::string s;
      while (Cur().type == Tok::kString) s += Next().text;
      e->value = Value::Str(std::move(s));  // shared by every copy
      return e;
    }
    case Tok::kInt:
      e = MakeExpr(Expr::K::kConst, tok);
      e->value = Value::Int(Next().ival);
      return e;
    case Tok::kFloat:
      e = MakeExpr(Expr::K::kConst, tok);
      e->value = Value::Float(Next().fval);
      return e;
    case Tok::kOp:
      if (tok.text == "(") {
        Next();
        e = ParseTuple(false, true, {}, true);
        ExpectOp(")");
        return e;
      }
      if (tok.text == "[") return ParseList();
      if (tok.text == "{") return ParseDict();
      break;
    default:
      break;
  }
  Fail(tok, "unexpected " + Describe(tok));
}

ExprPtr ExprParser::ParseList() {
  auto e = MakeExpr(Expr::K::kList, Next());
  while (!IsOp("]")) {
    if (!e->items.empty()) ExpectOp(",");
    if (IsOp("]")) break;
    e->items.push_back(ParseExpression(true));
  }
  ExpectOp("]");
  return FoldLiteral(std::move(e));
}

ExprPtr ExprParser::ParseDict() {
  auto e = MakeExpr(Expr::K::kDict, Next());
  while (!IsOp("}")) {
    if (!e->items.empty()) ExpectOp(",");
    if (IsOp("}")) break;
    e->items.push_back(ParseExpression(true));
    ExpectOp(":");
    e->items.push_back(ParseExpression(true));
  }
  ExpectOp("}");
  return FoldLiteral(std::move(e));
}

ExprPtr ExprParser::ParsePostfix(ExprPtr e) {
  while (true) {
    if (IsOp(".") || IsOp("["))
      e = ParseSubscript(std::move(e));
    else if (IsOp("("))
      e = ParseCall(std::move(e));
    else
      return e;
  }
}

ExprPtr ExprParser::ParseFilterExpr(ExprPtr e) {
  while (true) {
    if (IsOp("|"))
      e = ParseFilter(std::move(e), false);
    else if (IsName("is"))
      e = ParseTest(std::move(e));
    else if (IsOp("("))
      e = ParseCall(std::move(e));
    else
      return e;
  }
}

ExprPtr ExprParser::ParseSubscript(ExprPtr node) {
  DepthGuard guard(this);
  const Token& tok = Next();
  if (tok.text == ".") {
    const Token& attr = Cur();
    if (attr.type == Tok::kName) {
      auto e = MakeExpr(Expr::K::kGetAttr, attr);
      e->name = Next().text;
      e->hash = HashStr(e->name);
      e->key = InternKey(e->name, e->hash);
      e->methods = MethodMask(e->name);
      e->items.push_back(std::move(node));
      return e;
    }
    if (attr.type != Tok::kInt) Fail(attr, "expected name or number, got " + Describe(attr));
    auto e = MakeExpr(Expr::K::kGetItem, attr);
    auto idx = MakeExpr(Expr::K::kConst, attr);
    idx->value = Value::Int(Next().ival);
    e->items.push_back(std::move(node));
    e->items.push_back(std::move(idx));
    return e;
  }
  std::vector<ExprPtr> args;
  while (!IsOp("]")) {
    if (!args.empty()) ExpectOp(",");
    args.push_back(ParseSubscribed());
  }
  ExpectOp("]");
  auto e = MakeExpr(Expr::K::kGetItem, tok);
  e->items.push_back(std::move(node));
  if (args.size() == 1) {
    e->items.push_back(std::move(args[0]));
  } else {
    auto t = MakeExpr(Expr::K::kTuple, tok);
    t->items = std::move(args);
    e->items.push_back(FoldLiteral(std::move(t)));
  }
  return e;
}

ExprPtr ExprParser::ParseSubscribed() {
  const Token& at = Cur();
  std::vector<ExprPtr> args;
  if (SkipOp(":")) {
    args.push_back(nullptr);
  } else {
    ExprPtr node = ParseExpression(true);
    if (!SkipOp(":")) return node;
    args.push_back(std::move(node));
  }
  if (IsOp(":"))
    args.push_back(nullptr);
  else if (!IsOp("]") && !IsOp(","))
    args.push_back(ParseExpression(true));
  else
    args.push_back(nullptr);
  if (SkipOp(":")) {
    if (!IsOp("]") && !IsOp(","))
      args.push_back(ParseExpression(true));
    else
      args.push_back(nullptr);
  } else {
    args.push_back(nullptr);
  }
  auto s = MakeExpr(Expr::K::kSlice, at);
  s->items = std::move(args);
  return s;
}

void ExprParser::ParseCallArgs(Expr* e) {
  const Token& open = Cur();
  ExpectOp("(");
  bool require_comma = false;
  auto ensure = [&](bool ok) {
    if (!ok) Fail(open, "invalid syntax for function call expression");
  };
  while (!IsOp(")")) {
    if (require_comma) {
      ExpectOp(",");
      if (IsOp(")")) break;
    }
    if (SkipOp("*")) {
      ensure(!e->dyn_args && !e->dyn_kwargs);
      e->dyn_args = ParseExpression(true);
    } else if (SkipOp("**")) {
      ensure(!e->dyn_kwargs);
      e->dyn_kwargs = ParseExpression(true);
    } else if (Cur().type == Tok::kName && Look().type == Tok::kOp && Look().text == "=") {
      ensure(!e->dyn_kwargs);
      std::string key = Next().text;
      Next();
      e->kwargs.emplace_back(key, ParseExpression(true));
    } else {
      ensure(!e->dyn_args && !e->dyn_kwargs && e->kwargs.empty());
      e->args.push_back(ParseExpression(true));
    }
    require_comma = true;
  }
  ExpectOp(")");
}

ExprPtr ExprParser::ParseCall(ExprPtr node) {
  DepthGuard guard(this);
  auto e = MakeExpr(Expr::K::kCall, Cur());
  e->line = node->line;  // report calls at the callee's position
  e->col = node->col;
  const Expr& callee = *node;
  e->str_format = callee.kind == Expr::K::kGetAttr && callee.name == "format" &&
                  callee.items[0]->kind == Expr::K::kConst && callee.items[0]->value.is_string();
  e->items.push_back(std::move(node));
  ParseCallArgs(e.get());
  return e;
}

ExprPtr ExprParser::ParseFilter(ExprPtr node, bool start_inline) {
  while (IsOp("|") || start_inline) {
    DepthGuard guard(this);
    if (!start_inline) Next();
    start_inline = false;
    const Token& at = Cur();
    auto e = MakeExpr(Expr::K::kFilter, at);
    e->name = ExpectAnyName();
    while (SkipOp(".")) e->name += "." + ExpectAnyName();
    e->filter = FindBuiltinFilter(e->name);
    e->filter_append = FindBuiltinFilterAppend(e->name);
    e->items.push_back(std::move(node));
    if (IsOp("(")) ParseCallArgs(e.get());
    node = std::move(e);
  }
  return node;
}

ExprPtr ExprParser::ParseTest(ExprPtr node) {
  DepthGuard guard(this);
  const Token& is_tok = Next();
  bool negated = SkipName("not");
  const Token& at = Cur();
  auto e = MakeExpr(Expr::K::kTest, at);
  e->name = ExpectAnyName();
  while (SkipOp(".")) e->name += "." + ExpectAnyName();
  e->test = FindBuiltinTest(e->name);
  e->items.push_back(std::move(node));
  const Token& c = Cur();
  if (IsOp("(")) {
    ParseCallArgs(e.get());
  } else if ((c.type == Tok::kName || c.type == Tok::kString || c.type == Tok::kInt ||
              c.type == Tok::kFloat || IsOp("[") || IsOp("{")) &&
             !(IsName("else") || IsName("or") || IsName("and"))) {
    if (IsName("is")) Fail(c, "you cannot chain multiple tests with is");
    e->args.push_back(ParsePostfix(ParsePrimary()));
  }
  if (!negated) return e;
  auto n = MakeExpr(Expr::K::kNot, is_tok);
  n->items.push_back(std::move(e));
  return n;
}

}  // namespace msc::tmpl::detail
