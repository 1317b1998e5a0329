#include "generator/common/strict_yaml.h"

#include <algorithm>
#include <set>

#include "generator/common/error.h"

namespace msc {

YAML::Node StrictYaml::Load(const std::string& text) const {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(file_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
}

std::string StrictYaml::Where(const YAML::Node& n) const {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return file_;
  return file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

void StrictYaml::Fail(const YAML::Node& n, const std::string& what) const {
  throw Error(Where(n) + ": " + what);
}

std::vector<std::pair<std::string, YAML::Node>> StrictYaml::Map(
    const YAML::Node& n, const std::string& what, const std::vector<std::string>& allowed) const {
  if (!n.IsMap()) Fail(n, what + " must be a mapping");
  std::vector<std::pair<std::string, YAML::Node>> out;
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) Fail(it->first, "keys of " + what + " must be strings");
    std::string key = it->first.Scalar();
    if (!seen.insert(key).second) Fail(it->first, "duplicate key '" + key + "' in " + what);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string valid;
      for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
      Fail(it->first, "unknown key '" + key + "' in " + what + " (valid keys: " + valid + ")");
    }
    out.emplace_back(key, it->second);
  }
  return out;
}

std::string StrictYaml::Str(const YAML::Node& n, const std::string& what) const {
  if (!n.IsScalar()) Fail(n, what + " must be a string");
  return n.Scalar();
}

bool StrictYaml::Bool(const YAML::Node& n, const std::string& what) const {
  const std::string s = Str(n, what);
  if (s == "true") return true;
  if (s == "false") return false;
  Fail(n, what + " must be true or false, got '" + s + "'");
}

std::vector<std::string> StrictYaml::StrList(const YAML::Node& n, const std::string& what) const {
  if (!n.IsSequence()) Fail(n, what + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(Str(item, what + " item"));
  return out;
}

}  // namespace msc
