// StrictYaml: reads hand-written YAML (opdefs, backend.yaml) strictly, naming "<file>:<line>:<col>"
// in every error: a duplicate key, an unknown key (listing the valid ones) or a value of the wrong
// kind is an msc::Error, never silently accepted.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace msc {

class StrictYaml {
 public:
  explicit StrictYaml(std::string file) : file_(std::move(file)) {}

  /// Parses `text`; a syntax error is "<file>:<line>:<col>: invalid YAML: <message>".
  YAML::Node Load(const std::string& text) const;

  /// "<file>:<line>:<col>" of `n`, or "<file>" when the node has no mark.
  std::string Where(const YAML::Node& n) const;
  [[noreturn]] void Fail(const YAML::Node& n, const std::string& what) const;

  /// A mapping's entries in order. Duplicate keys are errors; with a non-empty `allowed`, so are
  /// keys not in it ("unknown key 'k' in <what> (valid keys: a, b)").
  std::vector<std::pair<std::string, YAML::Node>> Map(
      const YAML::Node& n, const std::string& what, const std::vector<std::string>& allowed) const;
  std::string Str(const YAML::Node& n, const std::string& what) const;
  bool Bool(const YAML::Node& n, const std::string& what) const;
  std::vector<std::string> StrList(const YAML::Node& n, const std::string& what) const;

 private:
  std::string file_;
};

}  // namespace msc
