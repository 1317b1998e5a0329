// Recursive-descent parser internals shared by parser.cc (statements) and parser_expr.cc
// (expressions); the grammar follows Jinja2's parser.py (internal header).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "generator/tmpl/ast.h"
#include "generator/tmpl/error.h"
#include "generator/tmpl/lexer.h"

namespace msc::tmpl::detail {

constexpr int kMaxNesting = 256;  // nested blocks/expressions before "nested too deeply"

inline bool IsReservedName(const std::string& n) {
  return n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None";
}

// Token cursor with the helpers both halves of the parser use.
class ParserBase {
 public:
  ParserBase(std::vector<Token> toks, const std::string& file) : t_(std::move(toks)), file_(file) {}

 protected:
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
    throw TemplateError(file_ + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) +
                        ": " + msg);
  }
  [[noreturn]] void Expected(const std::string& what) {
    Fail(Cur(), "expected " + what + ", got " + Describe(Cur()));
  }

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
    ParserBase* p;
    explicit DepthGuard(ParserBase* parser) : p(parser) {
      if (++p->depth_ > kMaxNesting)
        p->Fail(p->Cur(),
                "template is nested too deeply (limit " + std::to_string(kMaxNesting) + ")");
    }
    ~DepthGuard() { --p->depth_; }
  };

  std::vector<Token> t_;
  size_t p_ = 0;
  const std::string& file_;
  int depth_ = 0;
};

// Expression grammar (parser_expr.cc).
class ExprParser : public ParserBase {
 public:
  using ParserBase::ParserBase;

 protected:
  ExprPtr ParseAssignTarget(bool with_tuple, bool name_only,
                            const std::vector<std::string>& extra_end, bool with_namespace = false);
  void CheckAssignable(const Expr* e);
  bool IsTupleEnd(const std::vector<std::string>& extra_end) const;
  ExprPtr ParseTuple(bool simplified, bool with_condexpr, const std::vector<std::string>& extra_end,
                     bool explicit_parens);
  ExprPtr ParseExpression(bool with_condexpr);
  ExprPtr Binary(Expr::K k, const Token& at, ExprPtr a, ExprPtr b, const std::string& op = "");
  ExprPtr ParseOr();
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseCompare();
  ExprPtr ParseMath1();
  ExprPtr ParseConcat();
  ExprPtr ParseMath2();
  ExprPtr ParsePow();
  ExprPtr ParseUnary(bool with_filter);
  ExprPtr ParsePrimary();
  ExprPtr ParseList();
  ExprPtr ParseDict();
  ExprPtr ParsePostfix(ExprPtr e);
  ExprPtr ParseFilterExpr(ExprPtr e);
  ExprPtr ParseSubscript(ExprPtr node);
  ExprPtr ParseSubscribed();
  void ParseCallArgs(Expr* e);
  ExprPtr ParseCall(ExprPtr node);
  ExprPtr ParseFilter(ExprPtr node, bool start_inline);
  ExprPtr ParseTest(ExprPtr node);
};

}  // namespace msc::tmpl::detail
