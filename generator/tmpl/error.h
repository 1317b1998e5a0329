// The template engine's error type.
//
// Every failure the engine reports (syntax, undefined names under StrictUndefined, type errors,
// missing templates, recursion deeper than the limit, a host filter or function that threw) is a
// TemplateError whose what() already says where: "<file>:<line>:<col>: <message>", plus one line
// per include / import / macro call / extends it passed through. The engine depends on nothing
// outside generator/tmpl; a host program catches TemplateError at its boundary and reports it in
// its own terms (msc-codegen rethrows it as msc::Error, verbatim).
#pragma once

#include <stdexcept>
#include <string>

namespace msc::tmpl {

class TemplateError : public std::runtime_error {
 public:
  explicit TemplateError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace msc::tmpl
