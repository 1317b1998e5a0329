// Error type shared by every msc-codegen module.
//
// Every error the tool reports to a user is an msc::Error whose what() already names the
// file and the place (JSON path, file:line:col, node name) and what was expected, so the CLI
// prints it verbatim: "error: <what()>".
#pragma once

#include <stdexcept>
#include <string>

namespace msc {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace msc
