#include "generator/tmpl/parser.h"

#include <algorithm>
#include <initializer_list>

#include "generator/common/error.h"
#include "generator/tmpl/lexer.h"

namespace msc::tmpl {
namespace {

constexpr int kMaxNesting = 256;

bool IsReservedName(const std::string& n) {
  return n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None";
}

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& file) : t_(std::move(toks)), file_(file) {}

  Body ParseTemplate() {
    Body body = Subparse({});
    return body;
  }

 private:
  // ---- token helpers ----
  const Token& Cur() const { return t_[p_]; }
  const Token& Look() const { return t_[std::min(p_ + 1, t_.size() - 1)]; }
  const Token& Next() {
    const Token& tok = t_[p_];
    if (p_ + 1 < t_.size()) ++p_;
    return tok;
  }
  bool IsOp(const char* op) const { return Cur().type == Tok::kOp && Cur().text == op; }
  bool IsName(const char* n) const { return Cur().type == Tok::kName && Cur().text == n; }
  bool SkipOp(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  bool SkipName(const char* n) {
    if (!IsName(n)) return false;
    Next();
    return true;
  }

  [[noreturn]] void Fail(const Token& at, const std::string& msg) {
    throw msc::Error(file_ + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) + ": " + msg);
  }
  [[noreturn]] void Expected(const std::string& what) { Fail(Cur(), "expected " + what + ", got " + Describe(Cur())); }

  void ExpectOp(const char* op) {
    if (!SkipOp(op)) Expected(std::string("'") + op + "'");
  }
  void ExpectName(const char* n) {
    if (!SkipName(n)) Expected(std::string("'") + n + "'");
  }
  std::string ExpectAnyName() {
    if (Cur().type != Tok::kName) Expected("name");
    return Next().text;
  }
  void ExpectBlockEnd() {
    if (Cur().type != Tok::kBlockEnd) Expected("end of statement block");
    Next();
  }

  ExprPtr MakeExpr(Expr::K k, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = at.line;
    e->col = at.col;
    return e;
  }

  struct DepthGuard {
    Parser* p;
    explicit DepthGuard(Parser* parser) : p(parser) {
      if (++p->depth_ > kMaxNesting) p->Fail(p->Cur(), "template is nested too deeply (limit " + std::to_string(kMaxNesting) + ")");
    }
    ~DepthGuard() { --p->depth_; }
  };

  // ---- statements ----
  // Parses nodes until a block tag whose name is in `end_tags` (not consumed) or EOF.
  Body Subparse(const std::vector<std::string>& end_tags) {
    Body body;
    while (Cur().type != Tok::kEof) {
      const Token& tok = Cur();
      if (tok.type == Tok::kData) {
        auto n = MakeNode(Node::K::kText, tok);
        n->text = tok.text;
        body.push_back(std::move(n));
        Next();
      } else if (tok.type == Tok::kVarBegin) {
        auto n = MakeNode(Node::K::kPrint, tok);
        Next();
        n->expr = ParseTuple(false, true, {}, false);
        if (Cur().type != Tok::kVarEnd) Expected("end of print statement");
        Next();
        body.push_back(std::move(n));
      } else if (tok.type == Tok::kBlockBegin) {
        const Token& open = Next();
        if (Cur().type == Tok::kName &&
            std::find(end_tags.begin(), end_tags.end(), Cur().text) != end_tags.end())
          return body;
        body.push_back(ParseStatement(open));
        ExpectBlockEnd();
      } else {
        Fail(tok, "unexpected " + Describe(tok));
      }
    }
    return body;
  }

  NodePtr MakeNode(Node::K k, const Token& at) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->line = at.line;
    n->col = at.col;
    return n;
  }

  static std::string JoinTags(const std::vector<std::string>& tags) {
    std::string s;
    for (size_t i = 0; i < tags.size(); ++i) {
      if (i) s += i + 1 == tags.size() ? " or " : ", ";
      s += "'" + tags[i] + "'";
    }
    return s;
  }

  // Jinja's parse_statements: expects block end, parses a body up to one of end_tags.
  Body ParseStatements(const std::vector<std::string>& end_tags, const Token& opener, bool drop_needle) {
    DepthGuard guard(this);
    SkipOp(":");
    ExpectBlockEnd();
    Body body = Subparse(end_tags);
    if (Cur().type == Tok::kEof) {
      Fail(Cur(), "expected " + JoinTags(end_tags) + ", got end of template (unclosed '" + opener.text +
                      "' opened at line " + std::to_string(opener.line) + ")");
    }
    if (drop_needle) Next();
    return body;
  }

  NodePtr ParseStatement(const Token& open) {
    const Token& tok = Cur();
    if (tok.type != Tok::kName) Fail(tok, "tag name expected, got " + Describe(tok));
    const std::string& w = tok.text;
    if (w == "if") return ParseIf();
    if (w == "for") return ParseFor();
    if (w == "set") return ParseSet();
    if (w == "macro") return ParseMacro();
    if (w == "call") return ParseCallBlock();
    if (w == "include") return ParseInclude();
    if (w == "import") return ParseImport();
    if (w == "from") return ParseFrom();
    if (w == "filter") return ParseFilterBlock();
    if (w == "with") return ParseWith();
    if (w == "print") {
      auto n = MakeNode(Node::K::kPrint, Next());
      n->expr = ParseTuple(false, true, {}, false);
      return n;
    }
    (void)open;
    static const char* const kEndTags[] = {"endif", "endfor", "endset", "endmacro", "endcall", "endfilter",
                                           "endwith", "else", "elif", "endraw", "endblock"};
    for (const char* e : kEndTags)
      if (w == e) Fail(tok, "unexpected '" + w + "' (no open block expects it here)");
    Fail(tok, "unknown tag '" + w + "'");
  }

  NodePtr ParseIf() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kIf, opener);
    while (true) {
      n->conds.push_back(ParseTuple(false, false, {}, false));
      n->bodies.push_back(ParseStatements({"elif", "else", "endif"}, opener, false));
      const Token& t = Next();
      if (t.text == "elif") continue;
      if (t.text == "else") n->else_body = ParseStatements({"endif"}, opener, true);
      break;
    }
    return n;
  }

  NodePtr ParseFor() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kFor, opener);
    n->target = ParseAssignTarget(true, false, {"in"});
    ExpectName("in");
    n->expr = ParseTuple(false, false, {"recursive"}, false);
    if (SkipName("if")) n->cond = ParseExpression(true);
    if (IsName("recursive")) Fail(Cur(), "recursive for loops are not supported");
    n->body = ParseStatements({"endfor", "else"}, opener, false);
    if (Next().text == "else") n->else_body = ParseStatements({"endfor"}, opener, true);
    return n;
  }

  NodePtr ParseSet() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kSet, opener);
    n->target = ParseAssignTarget(true, false, {}, true);
    if (SkipOp("=")) {
      n->expr = ParseTuple(false, true, {}, false);
      return n;
    }
    n->kind = Node::K::kSetBlock;
    if (n->target->kind == Expr::K::kTuple) Fail(opener, "block set requires a single name target");
    if (IsOp("|")) n->expr = ParseFilter(MakeExpr(Expr::K::kBlockInput, Cur()), false);
    n->body = ParseStatements({"endset"}, opener, true);
    return n;
  }

  void ParseSignature(Node* n) {
    ExpectOp("(");
    bool defaults = false;
    while (!IsOp(")")) {
      if (!n->params.empty()) ExpectOp(",");
      const Token& at = Cur();
      MacroParam p;
      p.name = ExpectAnyName();
      if (IsReservedName(p.name)) Fail(at, "can't assign to '" + p.name + "'");
      if (SkipOp("=")) {
        p.default_value = ParseExpression(true);
        defaults = true;
      } else if (defaults) {
        Fail(at, "non-default argument follows default argument");
      }
      n->params.push_back(std::move(p));
    }
    ExpectOp(")");
  }

  NodePtr ParseMacro() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kMacro, opener);
    const Token& at = Cur();
    n->name = ExpectAnyName();
    if (IsReservedName(n->name)) Fail(at, "can't assign to '" + n->name + "'");
    ParseSignature(n.get());
    n->body = ParseStatements({"endmacro"}, opener, true);
    ScanSpecialNames(n.get());
    return n;
  }

  NodePtr ParseCallBlock() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kCallBlock, opener);
    if (IsOp("(")) ParseSignature(n.get());
    const Token& at = Cur();
    n->expr = ParseExpression(true);
    if (n->expr->kind != Expr::K::kCall) Fail(at, "expected call");
    n->body = ParseStatements({"endcall"}, opener, true);
    ScanSpecialNames(n.get());
    return n;
  }

  void ParseImportContext(Node* n, bool dflt) {
    if ((IsName("with") || IsName("without")) && Look().type == Tok::kName && Look().text == "context") {
      n->with_context = Next().text == "with";
      Next();
    } else {
      n->with_context = dflt;
    }
  }

  NodePtr ParseInclude() {
    auto n = MakeNode(Node::K::kInclude, Next());
    n->expr = ParseExpression(true);
    if (IsName("ignore") && Look().type == Tok::kName && Look().text == "missing") {
      n->ignore_missing = true;
      Next();
      Next();
    }
    ParseImportContext(n.get(), true);
    return n;
  }

  NodePtr ParseImport() {
    auto n = MakeNode(Node::K::kImport, Next());
    n->expr = ParseExpression(true);
    ExpectName("as");
    const Token& at = Cur();
    n->name = ExpectAnyName();
    if (IsReservedName(n->name)) Fail(at, "can't assign to '" + n->name + "'");
    ParseImportContext(n.get(), false);
    return n;
  }

  NodePtr ParseFrom() {
    auto n = MakeNode(Node::K::kFromImport, Next());
    n->expr = ParseExpression(true);
    ExpectName("import");
    auto parse_context = [&]() {
      if ((IsName("with") || IsName("without")) && Look().type == Tok::kName && Look().text == "context") {
        n->with_context = Next().text == "with";
        Next();
        return true;
      }
      return false;
    };
    while (true) {
      if (!n->names.empty()) ExpectOp(",");
      if (Cur().type != Tok::kName) Expected("name");
      if (parse_context()) break;
      const Token& at = Cur();
      std::string name = Next().text;
      if (IsReservedName(name)) Fail(at, "can't assign to '" + name + "'");
      if (name[0] == '_') Fail(at, "names starting with an underline can not be imported");
      std::string alias = name;
      if (SkipName("as")) {
        const Token& at2 = Cur();
        alias = ExpectAnyName();
        if (IsReservedName(alias)) Fail(at2, "can't assign to '" + alias + "'");
      }
      n->names.emplace_back(name, alias);
      if (parse_context() || !IsOp(",")) break;
    }
    return n;
  }

  NodePtr ParseFilterBlock() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kFilterBlock, opener);
    n->expr = ParseFilter(MakeExpr(Expr::K::kBlockInput, Cur()), true);
    n->body = ParseStatements({"endfilter"}, opener, true);
    return n;
  }

  NodePtr ParseWith() {
    const Token& opener = Next();
    auto n = MakeNode(Node::K::kWith, opener);
    while (Cur().type != Tok::kBlockEnd) {
      if (!n->targets.empty()) ExpectOp(",");
      n->targets.push_back(ParseAssignTarget(true, false, {}));
      ExpectOp("=");
      n->values.push_back(ParseExpression(true));
    }
    n->body = ParseStatements({"endwith"}, opener, true);
    return n;
  }

  static void ScanExpr(const Expr* e, Node* m) {
    if (!e) return;
    if (e->kind == Expr::K::kName) {
      if (e->name == "caller") m->uses_caller = true;
      if (e->name == "varargs") m->uses_varargs = true;
      if (e->name == "kwargs") m->uses_kwargs = true;
    }
    for (const auto& c : e->items) ScanExpr(c.get(), m);
    for (const auto& c : e->args) ScanExpr(c.get(), m);
    for (const auto& kv : e->kwargs) ScanExpr(kv.second.get(), m);
    ScanExpr(e->dyn_args.get(), m);
    ScanExpr(e->dyn_kwargs.get(), m);
  }

  static void ScanBody(const Body& body, Node* m) {
    for (const auto& n : body) {
      ScanExpr(n->expr.get(), m);
      ScanExpr(n->target.get(), m);
      ScanExpr(n->cond.get(), m);
      for (const auto& c : n->conds) ScanExpr(c.get(), m);
      for (const auto& b : n->bodies) ScanBody(b, m);
      for (const auto& c : n->values) ScanExpr(c.get(), m);
      for (const auto& p : n->params) ScanExpr(p.default_value.get(), m);
      ScanBody(n->body, m);
      ScanBody(n->else_body, m);
    }
  }

  static void ScanSpecialNames(Node* m) {
    ScanBody(m->body, m);
  }

  // ---- expressions ----
  ExprPtr ParseAssignTarget(bool with_tuple, bool name_only, const std::vector<std::string>& extra_end,
                            bool with_namespace = false) {
    const Token& at = Cur();
    ExprPtr target;
    if (with_namespace && Cur().type == Tok::kName && Look().type == Tok::kOp && Look().text == ".") {
      auto ns = MakeExpr(Expr::K::kName, Cur());
      ns->name = Next().text;
      Next();
      target = MakeExpr(Expr::K::kGetAttr, at);
      target->name = ExpectAnyName();
      target->items.push_back(std::move(ns));
      return target;
    }
    if (name_only) {
      target = MakeExpr(Expr::K::kName, at);
      target->name = ExpectAnyName();
    } else if (with_tuple) {
      target = ParseTuple(true, true, extra_end, false);
    } else {
      target = ParsePrimary();
    }
    CheckAssignable(target.get());
    return target;
  }

  void CheckAssignable(const Expr* e) {
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

  bool IsTupleEnd(const std::vector<std::string>& extra_end) const {
    if (Cur().type == Tok::kVarEnd || Cur().type == Tok::kBlockEnd || IsOp(")")) return true;
    return Cur().type == Tok::kName && std::find(extra_end.begin(), extra_end.end(), Cur().text) != extra_end.end();
  }

  ExprPtr ParseTuple(bool simplified, bool with_condexpr, const std::vector<std::string>& extra_end,
                     bool explicit_parens) {
    const Token& at = Cur();
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) ExpectOp(",");
      if (IsTupleEnd(extra_end)) break;
      items.push_back(simplified ? ParsePrimary() : ParseExpression(with_condexpr));
      if (IsOp(",")) is_tuple = true;
      else break;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) Fail(Cur(), "expected an expression, got " + Describe(Cur()));
    }
    auto t = MakeExpr(Expr::K::kTuple, at);
    t->items = std::move(items);
    return t;
  }

  ExprPtr ParseExpression(bool with_condexpr) {
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

  ExprPtr Binary(Expr::K k, const Token& at, ExprPtr a, ExprPtr b, const std::string& op = "") {
    auto e = MakeExpr(k, at);
    e->name = op;
    e->items.push_back(std::move(a));
    e->items.push_back(std::move(b));
    return e;
  }

  ExprPtr ParseOr() {
    ExprPtr e = ParseAnd();
    while (IsName("or")) {
      const Token& at = Next();
      e = Binary(Expr::K::kOr, at, std::move(e), ParseAnd());
    }
    return e;
  }

  ExprPtr ParseAnd() {
    ExprPtr e = ParseNot();
    while (IsName("and")) {
      const Token& at = Next();
      e = Binary(Expr::K::kAnd, at, std::move(e), ParseNot());
    }
    return e;
  }

  ExprPtr ParseNot() {
    if (IsName("not")) {
      DepthGuard guard(this);
      auto e = MakeExpr(Expr::K::kNot, Next());
      e->items.push_back(ParseNot());
      return e;
    }
    return ParseCompare();
  }

  ExprPtr ParseCompare() {
    const Token& at = Cur();
    ExprPtr first = ParseMath1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (Cur().type == Tok::kOp && (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" ||
                                     Cur().text == "<=" || Cur().text == ">" || Cur().text == ">=")) {
        op = Next().text;
      } else if (SkipName("in")) {
        op = "in";
      } else if (IsName("not") && Look().type == Tok::kName && Look().text == "in") {
        Next();
        Next();
        op = "notin";
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

  ExprPtr ParseMath1() {
    ExprPtr e = ParseConcat();
    while (IsOp("+") || IsOp("-")) {
      const Token& at = Next();
      e = Binary(Expr::K::kBinary, at, std::move(e), ParseConcat(), at.text);
    }
    return e;
  }

  ExprPtr ParseConcat() {
    const Token& at = Cur();
    ExprPtr e = ParseMath2();
    if (!IsOp("~")) return e;
    auto c = MakeExpr(Expr::K::kConcat, at);
    c->items.push_back(std::move(e));
    while (SkipOp("~")) c->items.push_back(ParseMath2());
    return c;
  }

  ExprPtr ParseMath2() {
    ExprPtr e = ParsePow();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      const Token& at = Next();
      e = Binary(Expr::K::kBinary, at, std::move(e), ParsePow(), at.text);
    }
    return e;
  }

  ExprPtr ParsePow() {
    ExprPtr e = ParseUnary(true);
    while (IsOp("**")) {
      const Token& at = Next();
      e = Binary(Expr::K::kBinary, at, std::move(e), ParseUnary(true), "**");
    }
    return e;
  }

  ExprPtr ParseUnary(bool with_filter) {
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

  ExprPtr ParsePrimary() {
    DepthGuard guard(this);
    const Token& tok = Cur();
    ExprPtr e;
    switch (tok.type) {
      case Tok::kName: {
        e = MakeExpr(Expr::K::kConst, tok);
        const std::string& n = tok.text;
        if (n == "true" || n == "True") e->value = Value::Bool(true);
        else if (n == "false" || n == "False") e->value = Value::Bool(false);
        else if (n == "none" || n == "None") e->value = Value();
        else {
          e->kind = Expr::K::kName;
          e->name = n;
        }
        Next();
        return e;
      }
      case Tok::kString: {
        e = MakeExpr(Expr::K::kConst, tok);
        std::string s;
        while (Cur().type == Tok::kString) s += Next().text;
        e->value = Value::OwnJson(Json(std::move(s)));  // shared: cheap copies
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

  ExprPtr ParseList() {
    auto e = MakeExpr(Expr::K::kList, Next());
    while (!IsOp("]")) {
      if (!e->items.empty()) ExpectOp(",");
      if (IsOp("]")) break;
      e->items.push_back(ParseExpression(true));
    }
    ExpectOp("]");
    return e;
  }

  ExprPtr ParseDict() {
    auto e = MakeExpr(Expr::K::kDict, Next());
    while (!IsOp("}")) {
      if (!e->items.empty()) ExpectOp(",");
      if (IsOp("}")) break;
      e->items.push_back(ParseExpression(true));
      ExpectOp(":");
      e->items.push_back(ParseExpression(true));
    }
    ExpectOp("}");
    return e;
  }

  ExprPtr ParsePostfix(ExprPtr e) {
    while (true) {
      if (IsOp(".") || IsOp("[")) e = ParseSubscript(std::move(e));
      else if (IsOp("(")) e = ParseCall(std::move(e));
      else return e;
    }
  }

  ExprPtr ParseFilterExpr(ExprPtr e) {
    while (true) {
      if (IsOp("|")) e = ParseFilter(std::move(e), false);
      else if (IsName("is")) e = ParseTest(std::move(e));
      else if (IsOp("(")) e = ParseCall(std::move(e));
      else return e;
    }
  }

  ExprPtr ParseSubscript(ExprPtr node) {
    DepthGuard guard(this);
    const Token& tok = Next();
    if (tok.text == ".") {
      const Token& attr = Cur();
      if (attr.type == Tok::kName) {
        auto e = MakeExpr(Expr::K::kGetAttr, attr);
        e->name = Next().text;
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
      e->items.push_back(std::move(t));
    }
    return e;
  }

  ExprPtr ParseSubscribed() {
    const Token& at = Cur();
    std::vector<ExprPtr> args;
    if (SkipOp(":")) {
      args.push_back(nullptr);
    } else {
      ExprPtr node = ParseExpression(true);
      if (!SkipOp(":")) return node;
      args.push_back(std::move(node));
    }
    if (IsOp(":")) args.push_back(nullptr);
    else if (!IsOp("]") && !IsOp(",")) args.push_back(ParseExpression(true));
    else args.push_back(nullptr);
    if (SkipOp(":")) {
      if (!IsOp("]") && !IsOp(",")) args.push_back(ParseExpression(true));
      else args.push_back(nullptr);
    } else {
      args.push_back(nullptr);
    }
    auto s = MakeExpr(Expr::K::kSlice, at);
    s->items = std::move(args);
    return s;
  }

  void ParseCallArgs(Expr* e) {
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

  ExprPtr ParseCall(ExprPtr node) {
    DepthGuard guard(this);
    auto e = MakeExpr(Expr::K::kCall, Cur());
    e->items.push_back(std::move(node));
    ParseCallArgs(e.get());
    return e;
  }

  ExprPtr ParseFilter(ExprPtr node, bool start_inline) {
    while (IsOp("|") || start_inline) {
      DepthGuard guard(this);
      if (!start_inline) Next();
      start_inline = false;
      const Token& at = Cur();
      auto e = MakeExpr(Expr::K::kFilter, at);
      e->name = ExpectAnyName();
      while (SkipOp(".")) e->name += "." + ExpectAnyName();
      e->items.push_back(std::move(node));
      if (IsOp("(")) ParseCallArgs(e.get());
      node = std::move(e);
    }
    return node;
  }

  ExprPtr ParseTest(ExprPtr node) {
    DepthGuard guard(this);
    const Token& is_tok = Next();
    bool negated = SkipName("not");
    const Token& at = Cur();
    auto e = MakeExpr(Expr::K::kTest, at);
    e->name = ExpectAnyName();
    while (SkipOp(".")) e->name += "." + ExpectAnyName();
    e->items.push_back(std::move(node));
    const Token& c = Cur();
    if (IsOp("(")) {
      ParseCallArgs(e.get());
    } else if ((c.type == Tok::kName || c.type == Tok::kString || c.type == Tok::kInt || c.type == Tok::kFloat ||
                IsOp("[") || IsOp("{")) &&
               !(IsName("else") || IsName("or") || IsName("and"))) {
      if (IsName("is")) Fail(c, "you cannot chain multiple tests with is");
      e->args.push_back(ParsePostfix(ParsePrimary()));
    }
    if (!negated) return e;
    auto n = MakeExpr(Expr::K::kNot, is_tok);
    n->items.push_back(std::move(e));
    return n;
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  const std::string& file_;
  int depth_ = 0;
};

}  // namespace

std::unique_ptr<Template> Parse(const std::string& source, const std::string& name) {
  auto tmpl = std::make_unique<Template>();
  tmpl->name = name;
  Parser parser(Lex(source, name), tmpl->name);
  tmpl->body = parser.ParseTemplate();
  return tmpl;
}

}  // namespace msc::tmpl
