// Parser: tokens -> Template AST, following Jinja2's grammar (internal header).
#pragma once

#include <memory>
#include <string>

#include "generator/tmpl/ast.h"

namespace msc::tmpl {

// Parses `source` into a Template named `name`. Throws TemplateError
// "<name>:<line>:<col>: <message>" on syntax errors (e.g. "expected 'endfor', got end of
// template").
std::unique_ptr<Template> Parse(const std::string& source, const std::string& name);

}  // namespace msc::tmpl
