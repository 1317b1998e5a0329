#include "generator/emit/backend_spec.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <boost/filesystem.hpp>

#include "generator/common/error.h"

namespace msc::emit {

namespace fs = boost::filesystem;

std::string BackendSpec::OpTemplateFor(const std::string& optype) const {
  std::string path = optype;
  std::replace(path.begin(), path.end(), '.', '/');
  std::string out = op_template;
  size_t pos = out.find("{path}");
  if (pos != std::string::npos) out.replace(pos, 6, path);
  return out;
}

std::vector<std::string> ListBackends(const std::string& templates_root) {
  std::vector<std::string> names;
  if (!fs::is_directory(templates_root)) return names;
  for (const auto& e : fs::directory_iterator(templates_root))
    if (fs::is_regular_file(e.path() / "backend.yaml"))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

std::string Where(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string Scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) throw Error(Where(file, n) + ": " + what + " must be a string");
  return n.Scalar();
}

std::vector<std::string> ScalarList(const std::string& file, const YAML::Node& n,
                                    const std::string& what) {
  if (!n.IsSequence()) throw Error(Where(file, n) + ": " + what + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(Scalar(file, item, what + " item"));
  return out;
}

/// Iterates a mapping, rejecting duplicate and unknown keys.
template <typename F>
void ForEachKey(const std::string& file, const YAML::Node& n, const std::string& what,
                const std::vector<std::string>& allowed, F&& f) {
  if (!n.IsMap()) throw Error(Where(file, n) + ": " + what + " must be a mapping");
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = Scalar(file, it->first, "a key of " + what);
    if (!seen.insert(key).second)
      throw Error(Where(file, it->first) + ": duplicate key '" + key + "' in " + what);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string valid;
      for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
      throw Error(Where(file, it->first) + ": unknown key '" + key + "' in " + what +
                  " (valid keys: " + valid + ")");
    }
    f(key, it->second);
  }
}

/// A relative path that stays inside its root: no absolute paths, no ".." components.
void CheckRelative(const std::string& file, const YAML::Node& n, const std::string& path,
                   bool allow_up) {
  fs::path p(path);
  bool bad = path.empty() || p.is_absolute();
  if (!allow_up)
    for (const auto& part : p) bad = bad || part == "..";
  if (bad)
    throw Error(Where(file, n) + ": '" + path +
                "' must be a relative path inside the output folder");
}

}  // namespace

BackendSpec LoadBackendSpec(const std::string& templates_root, const std::string& backend) {
  fs::path dir = fs::path(templates_root) / backend;
  fs::path file_path = dir / "backend.yaml";
  const std::string file = file_path.string();
  if (backend.empty() || backend.find('/') != std::string::npos || backend == "." ||
      backend == ".." || !fs::is_regular_file(file_path)) {
    std::string avail;
    for (const auto& b : ListBackends(templates_root)) avail += (avail.empty() ? "" : ", ") + b;
    throw Error("unknown backend '" + backend + "': no " + file +
                " (available: " + (avail.empty() ? "none" : avail) + ")");
  }
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(ss.str());
  } catch (const YAML::Exception& e) {
    throw Error(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  BackendSpec spec;
  spec.dir = dir.string();
  spec.name = backend;
  ForEachKey(
      file, root, "backend.yaml",
      {"summary", "op_template", "op_sections", "no_snippet", "files", "copy", "weights", "golden",
       "reserved_names", "memory_plan", "fuse_epilogues"},
      [&](const std::string& key, const YAML::Node& v) {
        if (key == "summary")
          spec.summary = Scalar(file, v, key);
        else if (key == "op_template")
          spec.op_template = Scalar(file, v, key);
        else if (key == "op_sections")
          spec.op_sections = ScalarList(file, v, key);
        else if (key == "no_snippet")
          spec.no_snippet = ScalarList(file, v, key);
        else if (key == "reserved_names")
          spec.reserved_names = ScalarList(file, v, key);
        else if (key == "weights") {
          spec.weights_output = Scalar(file, v, key);
          CheckRelative(file, v, spec.weights_output, false);
        } else if (key == "golden") {
          spec.golden_output = Scalar(file, v, key);
          CheckRelative(file, v, spec.golden_output, false);
        } else if (key == "memory_plan") {
          ForEachKey(
              file, v, "memory_plan", {"alignment", "alias"},
              [&](const std::string& k, const YAML::Node& a) {
                if (k == "alias") {
                  spec.memory_alias = ScalarList(file, a, "memory_plan.alias");
                  return;
                }
                try {
                  spec.memory_alignment = a.as<long long>();
                } catch (const YAML::Exception&) {
                  throw Error(Where(file, a) + ": memory_plan.alignment must be an integer");
                }
                if (spec.memory_alignment <= 0 ||
                    (spec.memory_alignment & (spec.memory_alignment - 1)))
                  throw Error(Where(file, a) + ": memory_plan.alignment must be a power of two");
              });
        } else if (key == "fuse_epilogues") {
          ForEachKey(file, v, "fuse_epilogues", {"producers", "epilogues"},
                     [&](const std::string& k, const YAML::Node& list) {
                       (k == "producers" ? spec.fuse_producers : spec.fuse_epilogues) =
                           ScalarList(file, list, "fuse_epilogues." + k);
                     });
        } else if (key == "files" || key == "copy") {
          if (!v.IsSequence()) throw Error(Where(file, v) + ": " + key + " must be a list");
          for (const auto& item : v) {
            std::string a, b;
            const bool is_files = key == "files";
            ForEachKey(file, item, key + " entry",
                       is_files ? std::vector<std::string>{"template", "output"}
                                : std::vector<std::string>{"from", "to"},
                       [&](const std::string& k, const YAML::Node& s) {
                         (k == "template" || k == "from" ? a : b) = Scalar(file, s, k);
                         if (k == "output" || k == "to") CheckRelative(file, s, b, false);
                       });
            if (a.empty() || b.empty())
              throw Error(Where(file, item) + ": " + key + " entry needs " +
                          (is_files ? "'template' and 'output'" : "'from' and 'to'"));
            if (is_files)
              spec.files.push_back({a, b});
            else
              spec.copy.push_back({a, b});
          }
        }
      });
  if (spec.op_template.empty()) throw Error(file + ": missing required key 'op_template'");
  if (spec.op_sections.empty()) throw Error(file + ": missing required key 'op_sections'");
  if (spec.files.empty()) throw Error(file + ": missing required key 'files'");
  return spec;
}

}  // namespace msc::emit
