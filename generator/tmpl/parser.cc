// Statement grammar (Jinja2's parse_statement and friends) and the Parse() entry point.
#include "generator/tmpl/parser.h"

#include "generator/tmpl/parser_impl.h"

namespace msc::tmpl {

namespace {

// Template::include_needs_scope.
bool MentionsLoop(const Expr* e) {
  if (!e) return false;
  if (e->kind == Expr::K::kName && e->name == "loop") return true;
  for (const auto& c : e->items)
    if (MentionsLoop(c.get())) return true;
  for (const auto& c : e->args)
    if (MentionsLoop(c.get())) return true;
  for (const auto& kv : e->kwargs)
    if (MentionsLoop(kv.second.get())) return true;
  return MentionsLoop(e->dyn_args.get()) || MentionsLoop(e->dyn_kwargs.get());
}

}  // namespace

bool MentionsLoop(const Body& body) {
  for (const auto& n : body) {
    if (MentionsLoop(n->expr.get()) || MentionsLoop(n->target.get()) || MentionsLoop(n->cond.get()))
      return true;
    for (const auto& c : n->conds)
      if (MentionsLoop(c.get())) return true;
    for (const auto& c : n->values)
      if (MentionsLoop(c.get())) return true;
    for (const auto& p : n->params)
      if (MentionsLoop(p.default_value.get())) return true;
    for (const auto& b : n->bodies)
      if (MentionsLoop(b)) return true;
    if (MentionsLoop(n->body) || MentionsLoop(n->else_body)) return true;
  }
  return false;
}

namespace {

bool HasBlock(const Body& body) {
  for (const auto& n : body) {
    if (n->kind == Node::K::kBlock) return true;
    for (const auto& b : n->bodies)
      if (HasBlock(b)) return true;
    if (HasBlock(n->body) || HasBlock(n->else_body)) return true;
  }
  return false;
}

bool AssignsTopLevel(const Body& body) {  // the root body and its if-branches
  for (const auto& n : body) {
    switch (n->kind) {
      case Node::K::kSet:
      case Node::K::kSetBlock:
      case Node::K::kMacro:
      case Node::K::kImport:
      case Node::K::kFromImport:
      case Node::K::kExtends:
      case Node::K::kBlock:
        return true;
      case Node::K::kIf:
        for (const auto& b : n->bodies)
          if (AssignsTopLevel(b)) return true;
        if (AssignsTopLevel(n->else_body)) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

}  // namespace

namespace detail {
namespace {

class Parser : public ExprParser {
 public:
  using ExprParser::ExprParser;
  Body ParseTemplate() { return Subparse({}); }

 private:
  Body Subparse(const std::vector<std::string>& end_tags);
  NodePtr MakeNode(Node::K k, const Token& at);
  static std::string JoinTags(const std::vector<std::string>& tags);
  Body ParseStatements(const std::vector<std::string>& end_tags, const Token& opener,
                       bool drop_needle);
  NodePtr ParseStatement(const Token& open);
  NodePtr ParseIf();
  NodePtr ParseFor();
  NodePtr ParseSet();
  void ParseSignature(Node* n);
  NodePtr ParseMacro();
  NodePtr ParseCallBlock();
  void ParseImportContext(Node* n, bool dflt);
  NodePtr ParseInclude();
  NodePtr ParseImport();
  NodePtr ParseFrom();
  NodePtr ParseFilterBlock();
  NodePtr ParseWith();
  NodePtr ParseExtends();
  NodePtr ParseBlock();
  static void ScanExpr(const Expr* e, Node* m);
  static void ScanBody(const Body& body, Node* m);
  static void ScanSpecialNames(Node* m);

  std::vector<std::pair<const Token*, const std::vector<std::string>*>> open_;  // open blocks
};

Body Parser::Subparse(const std::vector<std::string>& end_tags) {
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

NodePtr Parser::MakeNode(Node::K k, const Token& at) {
  auto n = std::make_unique<Node>();
  n->kind = k;
  n->line = at.line;
  n->col = at.col;
  return n;
}

std::string Parser::JoinTags(const std::vector<std::string>& tags) {
  std::string s;
  for (size_t i = 0; i < tags.size(); ++i) {
    if (i) s += i + 1 == tags.size() ? " or " : ", ";
    s += "'" + tags[i] + "'";
  }
  return s;
}

Body Parser::ParseStatements(const std::vector<std::string>& end_tags, const Token& opener,
                             bool drop_needle) {
  DepthGuard guard(this);
  SkipOp(":");
  ExpectBlockEnd();
  open_.emplace_back(&opener, &end_tags);
  Body body = Subparse(end_tags);
  open_.pop_back();
  if (Cur().type == Tok::kEof) {
    Fail(Cur(), "expected " + JoinTags(end_tags) + ", got end of template (unclosed '" +
                    opener.text + "' opened at line " + std::to_string(opener.line) + ")");
  }
  if (drop_needle) Next();
  return body;
}

NodePtr Parser::ParseStatement(const Token& open) {
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
  if (w == "extends") return ParseExtends();
  if (w == "block") return ParseBlock();
  if (w == "print") {
    auto n = MakeNode(Node::K::kPrint, Next());
    n->expr = ParseTuple(false, true, {}, false);
    return n;
  }
  (void)open;
  if (w == "autoescape" || w == "do" || w == "break" || w == "continue")
    Fail(tok, "'" + w + "' is not supported by this template engine");
  static const char* const kEndTags[] = {"endif",   "endfor",    "endset",  "endmacro",
                                         "endcall", "endfilter", "endwith", "else",
                                         "elif",    "endraw",    "endblock"};
  for (const char* e : kEndTags) {
    if (w != e) continue;
    if (open_.empty()) Fail(tok, "unexpected '" + w + "' (no block is open)");
    Fail(tok, "expected " + JoinTags(*open_.back().second) + ", got '" + w + "' (unclosed '" +
                  open_.back().first->text + "' opened at line " +
                  std::to_string(open_.back().first->line) + ")");
  }
  Fail(tok, "unknown tag '" + w + "'");
}

NodePtr Parser::ParseIf() {
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

NodePtr Parser::ParseFor() {
  const Token& opener = Next();
  auto n = MakeNode(Node::K::kFor, opener);
  n->target = ParseAssignTarget(true, false, {"in"});
  ExpectName("in");
  n->expr = ParseTuple(false, false, {"recursive"}, false);
  if (SkipName("if")) n->cond = ParseExpression(true);
  n->recursive = SkipName("recursive");
  n->body = ParseStatements({"endfor", "else"}, opener, false);
  n->uses_loop = MentionsLoop(n->body) || HasBlock(n->body);
  const Expr& t = *n->target;
  const Expr& x = *n->expr;
  n->dictsort_loop = !n->uses_loop && !n->cond && !n->recursive && t.kind == Expr::K::kTuple &&
                     t.items.size() == 2 && t.items[0]->kind == Expr::K::kName &&
                     t.items[1]->kind == Expr::K::kName && t.items[0]->name != t.items[1]->name &&
                     x.kind == Expr::K::kFilter && x.name == "dictsort" && x.items[0] &&
                     x.args.empty() && x.kwargs.empty() && !x.dyn_args && !x.dyn_kwargs;
  if (Next().text == "else") n->else_body = ParseStatements({"endfor"}, opener, true);
  return n;
}

NodePtr Parser::ParseSet() {
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

void Parser::ParseSignature(Node* n) {
  ExpectOp("(");
  bool defaults = false;
  while (!IsOp(")")) {
    if (!n->params.empty()) ExpectOp(",");
    const Token& at = Cur();
    MacroParam p;
    p.name = ExpectAnyName();
    p.hash = HashStr(p.name);
    if (IsReservedName(p.name)) Fail(at, "can't assign to '" + p.name + "'");
    for (const MacroParam& q : n->params)  // (Python: "duplicate argument" SyntaxError)
      if (q.name == p.name) Fail(at, "duplicate argument '" + p.name + "' in the signature");
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

NodePtr Parser::ParseMacro() {
  const Token& opener = Next();
  auto n = MakeNode(Node::K::kMacro, opener);
  const Token& at = Cur();
  n->name = ExpectAnyName();
  n->hash = HashStr(n->name);
  if (IsReservedName(n->name)) Fail(at, "can't assign to '" + n->name + "'");
  ParseSignature(n.get());
  n->body = ParseStatements({"endmacro"}, opener, true);
  ScanSpecialNames(n.get());
  return n;
}

NodePtr Parser::ParseCallBlock() {
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

void Parser::ParseImportContext(Node* n, bool dflt) {
  if ((IsName("with") || IsName("without")) && Look().type == Tok::kName &&
      Look().text == "context") {
    n->with_context = Next().text == "with";
    Next();
  } else {
    n->with_context = dflt;
  }
}

NodePtr Parser::ParseInclude() {
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

NodePtr Parser::ParseImport() {
  auto n = MakeNode(Node::K::kImport, Next());
  n->expr = ParseExpression(true);
  ExpectName("as");
  const Token& at = Cur();
  n->name = ExpectAnyName();
  n->hash = HashStr(n->name);
  if (IsReservedName(n->name)) Fail(at, "can't assign to '" + n->name + "'");
  ParseImportContext(n.get(), false);
  return n;
}

NodePtr Parser::ParseFrom() {
  auto n = MakeNode(Node::K::kFromImport, Next());
  n->expr = ParseExpression(true);
  ExpectName("import");
  auto parse_context = [&]() {
    if ((IsName("with") || IsName("without")) && Look().type == Tok::kName &&
        Look().text == "context") {
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
    n->alias_hashes.push_back(HashStr(alias));
    if (parse_context() || !IsOp(",")) break;
  }
  return n;
}

NodePtr Parser::ParseFilterBlock() {
  const Token& opener = Next();
  auto n = MakeNode(Node::K::kFilterBlock, opener);
  n->expr = ParseFilter(MakeExpr(Expr::K::kBlockInput, Cur()), true);
  n->body = ParseStatements({"endfilter"}, opener, true);
  return n;
}

NodePtr Parser::ParseWith() {
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

NodePtr Parser::ParseExtends() {
  auto n = MakeNode(Node::K::kExtends, Next());
  n->expr = ParseExpression(true);
  return n;
}

// Jinja2's parse_block: {% block NAME [scoped] [required] %} ... {% endblock [NAME] %}.
NodePtr Parser::ParseBlock() {
  const Token& opener = Next();
  auto n = MakeNode(Node::K::kBlock, opener);
  n->name = ExpectAnyName();
  n->scoped = SkipName("scoped");
  n->required = SkipName("required");
  if (IsOp("-"))
    Fail(Cur(), "block names must be valid identifiers and may not contain hyphens (use '_')");
  n->body = ParseStatements({"endblock"}, opener, true);
  if (n->required) {
    for (const auto& c : n->body) {
      bool blank = c->kind == Node::K::kText;
      for (char ch : c->text) blank = blank && (ch == ' ' || (ch >= '\t' && ch <= '\r'));
      if (!blank)
        Fail(opener, "required block '" + n->name + "' may only contain whitespace or comments");
    }
  }
  SkipName(n->name.c_str());  // {% endblock NAME %}; another name fails at "end of statement"
  return n;
}

void Parser::ScanExpr(const Expr* e, Node* m) {
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

void Parser::ScanBody(const Body& body, Node* m) {
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

void Parser::ScanSpecialNames(Node* m) { ScanBody(m->body, m); }

}  // namespace
}  // namespace detail

namespace {

// What Jinja2's code generator checks and collects once the whole template is parsed: the
// blocks (names unique across the template), which of them are at the top level (the root body
// and if-branches, Jinja2's frame.toplevel), and that `extends` appears only there.
class BlockCollector {
 public:
  explicit BlockCollector(Template* t) : t_(t) {}
  void Walk(const Body& body, bool toplevel) {
    for (const auto& n : body) {
      if (n->kind == Node::K::kBlock) {
        n->toplevel = toplevel;
        for (const Node* b : t_->blocks)
          if (b->name == n->name)
            Fail(*n, "block '" + n->name + "' defined twice (first at line " +
                         std::to_string(b->line) + ")");
        t_->blocks.push_back(n.get());
      } else if (n->kind == Node::K::kExtends) {
        if (!toplevel)
          Fail(*n,
               "'extends' must be at the top level of the template (it may be inside 'if', not "
               "inside for/with/macro/call/filter/set/block)");
        t_->has_extends = true;
      }
      const bool soft = toplevel && n->kind == Node::K::kIf;  // if-branches stay top level
      for (const auto& b : n->bodies) Walk(b, soft);
      Walk(n->body, soft);
      Walk(n->else_body, soft);
    }
  }

 private:
  [[noreturn]] void Fail(const Node& n, const std::string& msg) const {
    throw TemplateError(t_->name + ":" + std::to_string(n.line) + ":" + std::to_string(n.col) +
                        ": " + msg);
  }
  Template* t_;
};

}  // namespace

std::unique_ptr<Template> Parse(const std::string& source, const std::string& name) {
  auto tmpl = std::make_unique<Template>();
  tmpl->name = name;
  tmpl->load_name = name;
  detail::Parser parser(Lex(source, name), tmpl->name);
  tmpl->body = parser.ParseTemplate();
  BlockCollector(tmpl.get()).Walk(tmpl->body, true);
  tmpl->include_needs_scope = !tmpl->blocks.empty() || tmpl->has_extends ||
                              AssignsTopLevel(tmpl->body) || MentionsLoop(tmpl->body);
  return tmpl;
}

}  // namespace msc::tmpl
