#include "generator/emit/backend_spec.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/common/strict_yaml.h"
#include "generator/passes/passes.h"

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

std::string BackendSpec::SnippetFor(const std::string& optype) const {
  std::string own = OpTemplateFor(optype);
  if (fs::is_regular_file(fs::path(dir) / own)) return own;
  auto it = trait_snippet_of.find(optype);
  return it == trait_snippet_of.end() ? own : it->second;
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

const std::string kTraitPrefix = "trait:";

/// A relative path that stays inside the output folder: not absolute, no ".." components.
void CheckRelative(const StrictYaml& r, const YAML::Node& n, const std::string& path) {
  fs::path p(path);
  bool bad = path.empty() || p.is_absolute();
  for (const auto& part : p) bad = bad || part == "..";
  if (bad) r.Fail(n, "'" + path + "' must be a relative path inside the output folder");
}

/// A list of optypes (memory_plan, fuse_*, precision activations): optype names, and
/// `trait:NAME` entries that stand for every optype with that opdef trait (expanded by
/// ResolveTraits); an unknown trait name fails at its entry.
std::vector<std::string> OptypeList(const StrictYaml& r, const YAML::Node& v,
                                    const std::string& what) {
  std::vector<std::string> list = r.StrList(v, what);
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].rfind(kTraitPrefix, 0) != 0) continue;
    const std::string trait = list[i].substr(kTraitPrefix.size());
    if (!opdef::FindTrait(trait))
      r.Fail(v[i], what + ": unknown trait '" + trait + "' (known: " + opdef::TraitNames() + ")");
  }
  return list;
}

/// A tolerance: a finite number >= 0 (file:line:col errors name `what`).
double Tolerance(const StrictYaml& r, const YAML::Node& a, const std::string& what) {
  double x = -1;
  try {
    x = a.as<double>();
  } catch (const YAML::Exception&) {
    r.Fail(a, what + " must be a number");
  }
  if (!(x >= 0) || !std::isfinite(x)) r.Fail(a, what + " must be a finite number >= 0");
  return x;
}

/// `precision: {fp16: {weights: {optype: [role, ...]}, atol: X, rtol: X, activations: {mixed:
/// [optype, ...], same: [optype, ...]}}}`: every entry needs weights, atol and rtol (activations
/// is optional); tolerances are finite and >= 0, at least one of them > 0.
void ParsePrecisions(const StrictYaml& r, const YAML::Node& v, BackendSpec* spec) {
  for (const auto& [name, entry] : r.Map(v, "precision", {"fp16"})) {
    Precision p;
    p.name = name;
    bool has[3] = {false, false, false};
    for (const auto& [k, a] :
         r.Map(entry, "precision." + name, {"weights", "atol", "rtol", "activations"})) {
      if (k == "activations") {
        const std::string at = "precision." + name + ".activations";
        for (const auto& [kind, list] : r.Map(a, at, {"mixed", "same"}))
          (kind == "mixed" ? p.activations_mixed : p.activations_same) =
              OptypeList(r, list, at + "." + kind);
        continue;
      }
      if (k == "weights") {
        has[0] = true;
        for (const auto& [optype, roles] : r.Map(a, "precision." + name + ".weights", {}))
          p.weights[optype] = r.StrList(roles, "precision." + name + ".weights." + optype);
        continue;
      }
      (k == "atol" ? p.atol : p.rtol) = Tolerance(r, a, "precision." + name + "." + k);
      has[k == "atol" ? 1 : 2] = true;
    }
    if (!has[0] || !has[1] || !has[2])
      r.Fail(entry, "precision." + name + " needs 'weights', 'atol' and 'rtol'");
    if (p.atol == 0 && p.rtol == 0)
      r.Fail(entry, "precision." + name + ": atol and rtol cannot both be 0");
    spec->precisions[name] = std::move(p);
  }
}

void ParseTest(const StrictYaml& r, const YAML::Node& v, BackendSpec* spec) {
  TestSpec& t = spec->test;
  bool has_run = false;
  for (const auto& [k, a] : r.Map(v, "test", {"run", "python", "merge", "atol", "env"})) {
    if (k == "run") {
      t.run = r.StrList(a, "test.run");
      if (t.run.empty()) r.Fail(a, "test.run must name a command");
      has_run = true;
    } else if (k == "python") {
      t.python = r.Str(a, "test.python");
      if (t.python != "debian" && t.python != "tvm")
        r.Fail(a, "test.python must be debian or tvm, got '" + t.python + "'");
    } else if (k == "merge") {
      t.merge = r.Bool(a, "test.merge");
    } else if (k == "atol") {
      t.atol = Tolerance(r, a, "test.atol");
    } else {
      for (const auto& [name, value] : r.Map(a, "test.env", {}))
        t.env[name] = r.Str(value, "test.env." + name);
    }
  }
  if (!has_run) r.Fail(v, "test needs 'run' (the command that runs a project's golden test)");
  const bool uses_python = std::find(t.run.begin(), t.run.end(), "python") != t.run.end();
  if (uses_python != !t.python.empty())
    r.Fail(v, uses_python ? "test.run uses python: say which with test.python (debian or tvm)"
                          : "test.python is set but test.run does not use python");
  spec->has_test = true;
}

}  // namespace

const std::vector<std::string>& PrecisionNames() {
  static const std::vector<std::string> names = {"fp32", "fp16"};
  return names;
}

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
  const StrictYaml r(file);
  const YAML::Node root = r.Load(ss.str());
  BackendSpec spec;
  spec.dir = dir.string();
  spec.name = backend;
  for (const auto& [key, v] :
       r.Map(root, "backend.yaml",
             {"summary", "op_template", "op_sections", "no_snippet", "files", "copy", "weights",
              "golden", "reserved_names", "memory_plan", "fuse_epilogues", "fuse_elementwise",
              "fuse_views", "passes", "precision", "test", "trait_snippets"})) {
    if (key == "summary") {
      spec.summary = r.Str(v, key);
    } else if (key == "op_template") {
      spec.op_template = r.Str(v, key);
    } else if (key == "op_sections") {
      spec.op_sections = r.StrList(v, key);
    } else if (key == "no_snippet") {
      spec.no_snippet = r.StrList(v, key);
    } else if (key == "reserved_names") {
      spec.reserved_names = r.StrList(v, key);
    } else if (key == "weights" || key == "golden") {
      (key == "weights" ? spec.weights_output : spec.golden_output) = r.Str(v, key);
      CheckRelative(r, v, r.Str(v, key));
    } else if (key == "memory_plan") {
      for (const auto& [k, a] :
           r.Map(v, "memory_plan", {"alignment", "alias", "concat_in_place"})) {
        if (k == "alias" || k == "concat_in_place") {
          (k == "alias" ? spec.memory.alias_optypes : spec.memory.concat_in_place) =
              OptypeList(r, a, "memory_plan." + k);
          continue;
        }
        try {
          spec.memory.alignment = a.as<long long>();
        } catch (const YAML::Exception&) {
          r.Fail(a, "memory_plan.alignment must be an integer");
        }
        if (spec.memory.alignment <= 0 || (spec.memory.alignment & (spec.memory.alignment - 1)))
          r.Fail(a, "memory_plan.alignment must be a power of two");
      }
    } else if (key == "passes") {
      spec.passes = r.StrList(v, key);
      for (const auto& name : spec.passes) {
        const auto& known = passes::PassNames();
        if (std::find(known.begin(), known.end(), name) == known.end()) {
          std::string list;
          for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
          r.Fail(v, "unknown pass '" + name + "' (known: " + list + ")");
        }
      }
    } else if (key == "trait_snippets") {
      for (const auto& [trait, t] : r.Map(v, "trait_snippets", {})) {
        if (!opdef::FindTrait(trait))
          r.Fail(t, "trait_snippets: unknown trait '" + trait + "' (known: " + opdef::TraitNames() +
                        ")");
        const std::string path = r.Str(t, "trait_snippets." + trait);
        if (!fs::is_regular_file(dir / path))
          r.Fail(t, "trait_snippets." + trait + ": no template " + (dir / path).string());
        spec.trait_snippets.emplace_back(trait, path);
      }
    } else if (key == "precision") {
      ParsePrecisions(r, v, &spec);
    } else if (key == "test") {
      ParseTest(r, v, &spec);
    } else if (key == "fuse_epilogues") {
      const auto entries = r.Map(
          v, "fuse_epilogues",
          {"producers", "epilogues", "residual", "residual_producers", "norms", "norm_producers"});
      for (const auto& [k, list] : entries) {
        std::vector<std::string>& field = k == "producers"        ? spec.fusion.producers
                                          : k == "epilogues"      ? spec.fusion.epilogues
                                          : k == "residual"       ? spec.fusion.residual
                                          : k == "norms"          ? spec.fusion.norms
                                          : k == "norm_producers" ? spec.fusion.norm_producers
                                                                  : spec.fusion.residual_producers;
        field = OptypeList(r, list, "fuse_epilogues." + k);
      }
      // A residual add is fused with the act after it, which only producers that take an epilogue
      // can run (so can a norm after the producer); and each fusion needs both of its lists.
      if (spec.fusion.residual.empty() != spec.fusion.residual_producers.empty())
        r.Fail(v, "fuse_epilogues.residual and fuse_epilogues.residual_producers go together");
      if (spec.fusion.norms.empty() != spec.fusion.norm_producers.empty())
        r.Fail(v, "fuse_epilogues.norms and fuse_epilogues.norm_producers go together");
      for (const auto& [k, list] : entries) {
        if (k != "residual_producers" && k != "norm_producers") continue;
        for (const auto& p :
             k == "norm_producers" ? spec.fusion.norm_producers : spec.fusion.residual_producers)
          if (std::find(spec.fusion.producers.begin(), spec.fusion.producers.end(), p) ==
              spec.fusion.producers.end())
            r.Fail(list,
                   "fuse_epilogues." + k + ": '" + p + "' is not in fuse_epilogues.producers");
      }
    } else if (key == "fuse_views") {
      for (const auto& [k, a] : r.Map(v, "fuse_views", {"splits", "through", "consumers"})) {
        if (k != "consumers") {
          (k == "splits" ? spec.fusion.view_splits : spec.fusion.view_through) =
              OptypeList(r, a, "fuse_views." + k);
          continue;
        }
        if (!a.IsMap())
          r.Fail(a,
                 "fuse_views.consumers must map optypes to the input indices they read as views");
        for (const auto& entry : a) {
          const std::string op = entry.first.as<std::string>();
          std::vector<size_t> ks;
          if (!entry.second.IsSequence())
            r.Fail(entry.second, "fuse_views.consumers." + op + " must be a list of input indices");
          for (const auto& i : entry.second) {
            long long k = -1;
            try {
              k = i.as<long long>();
            } catch (const YAML::Exception&) {
            }
            if (k < 0)
              r.Fail(i, "fuse_views.consumers." + op + ": an input index must be an integer >= 0");
            ks.push_back(static_cast<size_t>(k));
          }
          spec.fusion.view_consumers.emplace_back(op, std::move(ks));
        }
      }
      if (spec.fusion.view_splits.empty() != spec.fusion.view_consumers.empty())
        r.Fail(v, "fuse_views.splits and fuse_views.consumers go together");
    } else if (key == "fuse_elementwise") {
      bool has_max_ops = false, has_max_inputs = false;
      for (const auto& [k, a] :
           r.Map(v, "fuse_elementwise", {"ops", "selects", "max_ops", "max_inputs"})) {
        if (k == "ops" || k == "selects") {
          (k == "ops" ? spec.fusion.elementwise_ops : spec.fusion.elementwise_selects) =
              OptypeList(r, a, "fuse_elementwise." + k);
          continue;
        }
        long long n = 0;
        try {
          n = a.as<long long>();
        } catch (const YAML::Exception&) {
          r.Fail(a, "fuse_elementwise." + k + " must be an integer");
        }
        // A chain has two nodes at least; the limits are the backend kernel's.
        if (n < (k == "max_ops" ? 2 : 1))
          r.Fail(a, "fuse_elementwise." + k + " must be at least " + (k == "max_ops" ? "2" : "1"));
        (k == "max_ops" ? spec.fusion.max_ops : spec.fusion.max_inputs) = n;
        (k == "max_ops" ? has_max_ops : has_max_inputs) = true;
      }
      if (!has_max_ops || !has_max_inputs)
        r.Fail(v, "fuse_elementwise needs max_ops and max_inputs (the backend kernel's limits)");
    } else if (key == "files" || key == "copy") {
      if (!v.IsSequence()) r.Fail(v, key + " must be a list");
      const bool is_files = key == "files";
      const std::string from_key = is_files ? "template" : "from";
      const std::string to_key = is_files ? "output" : "to";
      for (const auto& item : v) {
        std::string from, to, match, keep;
        std::vector<std::string> keys = {from_key, to_key};
        if (!is_files) keys.push_back("filter");
        for (const auto& [k, value] : r.Map(item, key + " entry", keys)) {
          if (k == from_key) {
            from = r.Str(value, k);
          } else if (k == to_key) {
            to = r.Str(value, k);
            CheckRelative(r, value, to);
          } else {
            for (const auto& [fk, fv] : r.Map(value, "copy filter", {"match", "keep"}))
              (fk == "match" ? match : keep) = r.Str(fv, "filter." + fk);
            if (match.empty() || keep.empty())
              r.Fail(value, "copy filter needs 'match' (a glob) and 'keep' (a template)");
          }
        }
        if (from.empty() || to.empty())
          r.Fail(item, key + " entry needs '" + from_key + "' and '" + to_key + "'");
        if (is_files)
          spec.files.push_back({from, to});
        else
          spec.copy.push_back({from, to, match, keep});
      }
    }
  }
  if (spec.op_template.empty()) throw Error(file + ": missing required key 'op_template'");
  if (spec.op_sections.empty()) throw Error(file + ": missing required key 'op_sections'");
  if (spec.files.empty()) throw Error(file + ": missing required key 'files'");
  return spec;
}

void ResolveTraits(BackendSpec& spec, const opdef::OpDefRegistry& opdefs) {
  auto resolve = [&](std::vector<std::string>& list) {
    std::vector<std::string> out;
    auto add = [&](const std::string& optype) {
      if (std::find(out.begin(), out.end(), optype) == out.end()) out.push_back(optype);
    };
    for (const std::string& entry : list) {
      if (entry.rfind(kTraitPrefix, 0) != 0) {
        add(entry);
        continue;
      }
      for (const std::string& optype : opdefs.WithTrait(entry.substr(kTraitPrefix.size())))
        add(optype);
    }
    list = std::move(out);
  };
  resolve(spec.memory.alias_optypes);
  resolve(spec.memory.concat_in_place);
  resolve(spec.fusion.producers);
  resolve(spec.fusion.epilogues);
  resolve(spec.fusion.residual);
  resolve(spec.fusion.residual_producers);
  resolve(spec.fusion.norms);
  resolve(spec.fusion.norm_producers);
  resolve(spec.fusion.elementwise_ops);
  resolve(spec.fusion.elementwise_selects);
  resolve(spec.fusion.view_splits);
  resolve(spec.fusion.view_through);
  for (auto& [name, p] : spec.precisions) {
    resolve(p.activations_mixed);
    resolve(p.activations_same);
  }
  spec.trait_snippet_of.clear();
  for (const auto& [trait, path] : spec.trait_snippets)
    for (const std::string& optype : opdefs.WithTrait(trait))
      spec.trait_snippet_of.emplace(optype, path);
}

BackendSpec LoadBackendSpec(const std::string& templates_root, const std::string& backend,
                            const opdef::OpDefRegistry& opdefs) {
  BackendSpec spec = LoadBackendSpec(templates_root, backend);
  ResolveTraits(spec, opdefs);
  return spec;
}

}  // namespace msc::emit
