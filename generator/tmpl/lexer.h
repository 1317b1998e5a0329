// Tokenizer for Jinja2 template syntax (internal header).
//
// Implements Jinja2's default delimiters ({{ }}, {% %}, {# #}), whitespace control with '-'
// (and the no-op '+'), {% raw %} blocks, newline normalization (\r\n and \r become \n) and
// keep_trailing_newline=False (one trailing newline of the source is dropped).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace msc::tmpl {

enum class Tok : uint8_t {
  kData,
  kVarBegin,
  kVarEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInt,
  kFloat,
  kOp,
  kEof
};

struct Token {
  Tok type = Tok::kEof;
  std::string text;  // data text, name, decoded string value, operator, or number spelling
  int64_t ival = 0;
  double fval = 0.0;
  int line = 1;
  int col = 1;
};

// Throws TemplateError "<file>:<line>:<col>: <message>" on lexical errors.
std::vector<Token> Lex(const std::string& source, const std::string& file);

// Human-readable description of a token for "expected X, got Y" messages.
std::string Describe(const Token& t);

}  // namespace msc::tmpl
