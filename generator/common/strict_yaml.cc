#include "generator/common/strict_yaml.h"

#include <algorithm>
#include <set>
#include <vector>

#include "generator/common/error.h"
#include "generator/common/utf8.h"

namespace msc {

namespace {

/// "<file>:<line>:<col>" of byte `pos` of `text`; the column counts characters, as an editor
/// shows them (the text before `pos` is well-formed UTF-8).
std::string TextPlace(const std::string& file, const std::string& text, size_t pos) {
  const size_t line = std::count(text.begin(), text.begin() + pos, '\n') + 1;
  size_t col = 1;
  for (size_t i = text.rfind('\n', pos) + 1; i < pos; ++i)  // npos + 1 == 0: first line
    col += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

YAML::Node StrictYaml::Load(const std::string& text) const {
  // YAML 1.2 streams are Unicode text of printable characters (5.1 "Character Set", 5.2
  // "Character Encodings"); yaml-cpp passes other bytes through into scalars, which later break
  // JSON output (found by tests/fuzz/fuzz_opdef).
  const size_t bad = FindInvalidUtf8(text);
  if (bad != std::string::npos) {
    throw Error(TextPlace(file_, text, bad) + ": invalid UTF-8 (byte " + HexByte(text, bad) +
                "); YAML files must be UTF-8 text");
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      throw Error(TextPlace(file_, text, i) + ": control character " + HexByte(text, i) +
                  "; YAML files may hold only printable characters, tab and line breaks");
    }
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(file_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  // yaml-cpp 0.7 decodes the escapes \N and \_ (U+0085, U+00A0) to the single bytes 0x85 / 0xA0,
  // not UTF-8: check every scalar, keys included. Iterative, and each collection once (aliases
  // share nodes, so a tree walk could be exponential in the number of aliases).
  // A collection is known by (Mark::pos, whether it is a map key): a block map and a flow
  // collection that is its first key start at the same position.
  std::vector<std::pair<YAML::Node, bool>> todo{{root, false}};
  std::set<std::pair<int, bool>> seen;
  while (!todo.empty()) {
    const auto [n, is_key] = todo.back();
    todo.pop_back();
    if (n.IsScalar()) {
      const size_t b = FindInvalidUtf8(n.Scalar());
      if (b != std::string::npos) {
        Fail(n, "this string decodes to invalid UTF-8 (byte " + HexByte(n.Scalar(), b) +
                    " at offset " + std::to_string(b) +
                    "): yaml-cpp writes the escapes \\N and \\_ as single bytes; write the "
                    "character itself");
      }
    } else if (n.IsSequence() || n.IsMap()) {
      if (!n.Mark().is_null() && !seen.insert({n.Mark().pos, is_key}).second) continue;
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (n.IsMap()) {
          todo.push_back({it->first, true});
          todo.push_back({it->second, false});
        } else {
          todo.push_back({*it, false});
        }
      }
    }
  }
  return root;
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
