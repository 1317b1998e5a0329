#include "generator/tools/scaffold.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/filesystem.hpp>

#include "generator/common/contains.h"
#include "generator/common/error.h"
#include "generator/emit/context.h"
#include "generator/emit/generate.h"
#include "generator/emit/naming.h"
#include "generator/ir/attr_format.h"

namespace msc::tools {

namespace fs = boost::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// ---- small helpers ------------------------------------------------------------------------------

std::string ReadText(const fs::path& p) {
  std::ifstream in(p.string(), std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteText(const fs::path& p, const std::string& text) {
  std::ofstream out(p.string(), std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error(p.string() + ": cannot write");
}

/// A name as a JSON string for messages (invalid UTF-8 replaced, never a throw).
std::string Quoted(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// "nn.conv2d", "add", "image.resize2d": segments of [A-Za-z0-9_], none starting with a digit.
void CheckOptypeName(const std::string& optype) {
  bool ok = !optype.empty();
  size_t start = 0;
  while (ok) {
    size_t dot = optype.find('.', start);
    std::string seg =
        optype.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    ok = !seg.empty() && !(seg[0] >= '0' && seg[0] <= '9') &&
         std::all_of(seg.begin(), seg.end(), IsIdentChar);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!ok)
    throw Error("invalid optype " + Quoted(optype) +
                ": expected names of letters, digits and '_' (not starting with a digit) joined "
                "by '.', like nn.conv2d or add");
}

/// Indents every line of `text` by `pad` and wraps at 100 columns; `first` prefixes line one.
std::string Wrap(const std::string& first, const std::string& text, const std::string& pad) {
  std::string out = first, word;
  size_t col = first.size();
  std::istringstream words(text);
  bool line_start = true;
  while (words >> word) {
    if (!line_start && col + 1 + word.size() > 100) {
      out += "\n" + pad;
      col = pad.size();
      line_start = true;
    }
    if (!line_start) {
      out += " ";
      ++col;
    }
    out += word;
    col += word.size();
    line_start = false;
  }
  return out + "\n";
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

/// A float the way Python's repr writes it ("1e-05", "0.5"), "inf" / "-inf" for infinities.
std::string FloatText(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return emit::PyFloatRepr(v);
}

// ---- opdef YAML ---------------------------------------------------------------------------------

/// A YAML scalar: plain when it is a simple token YAML reads back as the same string, else a
/// double-quoted string (JSON escapes are valid YAML double-quoted escapes).
std::string YamlStr(const std::string& s) {
  static const std::set<std::string> kSpecial = {"true", "false", "null", "yes", "no",      "on",
                                                 "off",  "y",     "n",    "~",   "variadic"};
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  bool plain = !s.empty() && !kSpecial.count(lower) && !(s[0] >= '0' && s[0] <= '9') &&
               s[0] != '-' && s[0] != '.' &&
               std::all_of(s.begin(), s.end(), [](char c) { return IsIdentChar(c) || c == '.'; });
  return plain ? s : Json(s).dump();
}

std::string YamlValue(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) return FloatText(v.get<double>());
  if (v.is_string()) return YamlStr(v.get<std::string>());
  std::vector<std::string> items;
  for (const auto& x : v) items.push_back(YamlValue(x));
  return "[" + Join(items, ", ") + "]";
}

std::string NumberText(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return FloatText(v);
}

}  // namespace

std::string OpDefYaml(const opdef::OpDef& def, const std::string& optype) {
  std::string out = optype + ":\n";
  out += "  summary: " + Json(def.summary).dump() + "\n";
  if (!def.traits.empty()) {
    std::string list;
    for (const auto& t : def.traits) list += (list.empty() ? "" : ", ") + t;
    out += "  traits: [" + list + "]\n";
  }
  if (!def.reference.empty()) out += "  reference: " + YamlStr(def.reference) + "\n";
  if (!def.domain.empty())
    out += "  domain: [" + Json(def.domain[0]).dump() + ", " + Json(def.domain[1]).dump() + "]\n";
  if (def.variadic) {
    out += "  inputs: variadic\n";
    if (def.min_inputs != 1) out += "  min_inputs: " + std::to_string(def.min_inputs) + "\n";
  } else {
    std::vector<std::string> names;
    for (const auto& n : def.inputs) names.push_back(YamlStr(n));
    out += "  inputs: [" + Join(names, ", ") + "]\n";
    if (def.min_inputs != static_cast<int64_t>(def.inputs.size()))
      out += "  min_inputs: " + std::to_string(def.min_inputs) + "\n";
  }
  if (!def.weights.empty()) {
    out += "  weights:\n";
    for (const auto& w : def.weights) {
      std::vector<std::string> keys;
      if (w.optional) keys.push_back("optional: true");
      if (!w.layout.empty()) keys.push_back("layout: " + YamlStr(w.layout));
      if (!w.doc.empty()) keys.push_back("doc: " + Json(w.doc).dump());
      out += "    " + YamlStr(w.role) + ": {" + Join(keys, ", ") + "}\n";
    }
  }
  if (!def.attrs.empty()) {
    out += "  attrs:\n";
    for (const auto& a : def.attrs) {
      std::vector<std::string> keys = {"type: " + opdef::AttrTypeName(a.type)};
      if (a.required) {
        keys.push_back("required: true");
        if (!a.default_value.is_null()) keys.push_back("default: " + YamlValue(a.default_value));
      } else {
        keys.push_back("default: " + YamlValue(a.default_value));
      }
      if (a.nullable && !(a.default_value.is_null() && !a.required))
        keys.push_back("nullable: true");
      if (!a.choices.empty()) keys.push_back("choices: " + YamlValue(Json(a.choices)));
      if (a.lengths.size() == 1) keys.push_back("length: " + std::to_string(a.lengths[0]));
      if (a.lengths.size() > 1) keys.push_back("length: " + Json(a.lengths).dump(-1));
      if (a.min) keys.push_back("min: " + NumberText(*a.min));
      if (!a.doc.empty()) keys.push_back("doc: " + Json(a.doc).dump());
      out += "    " + YamlStr(a.name) + ": {" + Join(keys, ", ") + "}\n";
    }
  }
  if (def.allow_extra_attrs) out += "  extra_attrs: true\n";
  if (!def.not_for_inference.empty())
    out += "  not_for_inference: " + Json(def.not_for_inference).dump() + "\n";
  return out;
}

namespace {

std::string SkeletonOpDefYaml(const std::string& optype) {
  return optype + ":\n" + "  summary: " +
         Json("TODO " + optype +
              ": what it computes (inputs, output shape and dtype, layout; TVM v0.20 relax "
              "semantics).")
             .dump() +
         "\n"
         "  # traits: [elementwise, unary_math]   # what kind of op (msc-codegen ops --traits)\n"
         "  inputs: [x]              # tensor inputs in order, or `variadic`\n"
         "  # min_inputs: 1          # the inputs after the first N may be absent\n"
         "  # weights:               # MSC weight roles (node.weights keys)\n"
         "  #   weight: {layout: OIHW}\n"
         "  #   bias: {optional: true}\n"
         "  # attrs:                 # MSC attr strings, parsed to these types once\n"
         "  #   axis: {type: int, default: 0}\n"
         "  #   epsilon: {type: float, required: true}\n"
         "  #   axes: {type: int list, default: null}   # null default: \"\" parses to null\n";
}

/// The opdefs file an optype goes to (see NewOp).
fs::path OpDefFileFor(const std::string& opdefs_dir, const std::string& optype,
                      const opdef::OpDef* like) {
  const size_t dot = optype.find('.');
  if (dot != std::string::npos) return fs::path(opdefs_dir) / (optype.substr(0, dot) + ".yaml");
  if (like && like->optype.find('.') == std::string::npos) {
    // like->file is "<path>:<line>:<col>"
    std::string f = like->file;
    for (int i = 0; i < 2; ++i) f = f.substr(0, f.rfind(':'));
    return fs::path(f);
  }
  return fs::path(opdefs_dir) / "tensor.yaml";
}

/// Every opdefs/*.yaml with `file` replaced by `text` (or added), loaded into one registry:
/// syntax, schema and duplicate errors of the would-be result, before it is written.
opdef::OpDefRegistry LoadWith(const std::string& opdefs_dir, const fs::path& file,
                              const std::string& text) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(opdefs_dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
  std::sort(files.begin(), files.end());
  opdef::OpDefRegistry reg;
  for (const auto& f : files) reg.LoadString(f == file ? text : ReadText(f), f.string());
  return reg;
}

// ---- snippet stubs ------------------------------------------------------------------------------

/// The engine would end the comment at "#}": keep it out of text copied into the header.
std::string CommentSafe(std::string s) {
  for (size_t p; (p = s.find("#}")) != std::string::npos;) s.replace(p, 2, "# }");
  return s;
}

}  // namespace

std::string SnippetStub(const emit::BackendSpec& spec, const opdef::OpDef& def,
                        const std::string& origin) {
  const std::string rel = spec.OpTemplateFor(def.optype);
  std::string h;
  h +=
      Wrap("{#- msc-codegen stub: " + def.optype + " on the " + spec.name + " backend, written by ",
           origin +
               ". Write the code and drop the raise_error line at the end (the one with the "
               "stub marker: `msc-codegen ops` shows \"stub\" while it is there); this "
               "comment may stay. Guide: docs/writing-an-op.md.",
           "    ");
  h += Wrap("    ", CommentSafe(def.optype + ": " + def.summary), "    ");
  h += Wrap("    Rendered for each " + def.optype + " node, once per section of backend.yaml ",
            "op_sections (" + Join(spec.op_sections, ", ") +
                "); the text becomes node.code.<section>, which the project templates place. "
                "Its inputs, attrs and weights: the opdef of " +
                def.optype +
                " (opdefs/). The fields a snippet sees: docs/template-context.md (msc-codegen "
                "context --reference); the exact context of one node: msc-codegen context "
                "GRAPH.json --node NAME --backend " +
                spec.name + " [--section S].",
            "    ");
  h += "-#}\n";
  h += "{{ raise_error(" +
       Json(def.optype + " is not implemented yet on the " + spec.name + " backend (node ").dump() +
       " ~ node.name | py_str ~ " + Json("): " + rel + " is a stub written by " + origin).dump() +
       ") }}" + kStubMarker + "\n";
  return h;
}

namespace {

std::string PyStr(const std::string& s) { return emit::PyStringLiteral(s); }

/// An attr value as MSC writes it (graph_builder.h AttrGetter): see generator/ir/attr_format.h.
std::string MscAttrString(const opdef::AttrDef& a, const Json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return ir::AttrBool(v.get<bool>());
  if (v.is_number_integer()) return ir::AttrInt(v.get<int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return a.type == opdef::AttrType::kInt ? ir::AttrInt(static_cast<int64_t>(d))
                                           : ir::AttrDouble(d);
  }
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    opdef::AttrDef item = a;
    item.type = a.type == opdef::AttrType::kIntList     ? opdef::AttrType::kInt
                : a.type == opdef::AttrType::kFloatList ? opdef::AttrType::kFloat
                                                        : opdef::AttrType::kStr;
    out += MscAttrString(item, v[i]);
    if (v.size() == 1 || i + 1 < v.size()) out += ",";
  }
  return out;
}

}  // namespace

std::string CaseStub(const opdef::OpDef& def, const std::string& case_name,
                     const std::string& origin) {
  std::vector<std::string> inputs;
  if (def.variadic) {
    for (int64_t i = 0; i < std::max<int64_t>(2, def.min_inputs); ++i)
      inputs.push_back("x" + std::to_string(i));
  } else {
    for (int64_t i = 0; i < def.min_inputs; ++i) inputs.push_back(def.inputs[i]);
  }
  std::string s = "\n\n@case\ndef case_" + case_name + "():\n";
  s += "    \"\"\"" + def.optype + ": a stub written by " + origin +
       ". Give the inputs the\n"
       "    shapes/dtypes and the attrs a meaningful variant needs and write the reference "
       "(torch, or\n"
       "    an independent numpy loop; TVM v0.20 relax semantics), then run `/usr/bin/python3\n"
       "    tests/ops/cases/cases.py --write` to add tests/ops/cases/" +
       case_name +
       ".json. Add a case per variant\n"
       "    whose attrs change the semantics (see the other cases in this file).\"\"\"\n";
  s += "    b = Builder()\n";
  std::vector<std::string> in_exprs;
  for (const auto& n : inputs) in_exprs.push_back("b.input(" + PyStr(n) + ", [2, 3, 4])");
  s += "    inputs = [" + Join(in_exprs, ", ") + "]\n";
  s += "    weights = {";
  for (const auto& w : def.weights)
    s += "\n        " + std::string(w.optional ? "# (optional) " : "") + PyStr(w.role) +
         ": b.weight([2, 3, 4]),  # role " + w.role +
         (w.layout.empty() ? "" : ", layout " + w.layout);
  s += std::string(def.weights.empty() ? "" : "\n    ") + "}\n";
  std::vector<std::string> attrs;
  for (const auto& a : def.attrs) {
    const std::string value =
        a.required && a.default_value.is_null() ? "TODO" : MscAttrString(a, a.default_value);
    attrs.push_back(PyStr(a.name) + ": " + PyStr(value));
  }
  s += "    attrs = {" + Join(attrs, ", ") + "}\n\n";
  s += "    def reference(*inputs, **weights):\n";
  s += "        \"\"\"torch tensors in, the output tensor(s) out; weights by role.\"\"\"\n";
  s += "        raise NotImplementedError(\n            " +
       PyStr("case " + case_name + ": write the reference of " + def.optype +
             " (a stub by msc-codegen new-op)") +
       ")\n\n";
  s += "    out = b.node(" + PyStr(case_name) + ", " + PyStr(def.optype) +
       ", inputs, reference, attrs=attrs, weights=weights)\n";
  s += "    return b.finish([out])\n";
  return s;
}

std::string DefaultCasesFile(const std::string& opdefs_dir) {
  fs::path p = fs::path(opdefs_dir).parent_path() / "tests" / "ops" / "cases" / "cases_ops.py";
  return fs::is_regular_file(p) ? p.string() : "";
}

bool IsSnippetStub(const emit::BackendSpec& spec, const std::string& optype) {
  const fs::path p = fs::path(spec.dir) / spec.OpTemplateFor(optype);
  if (!fs::is_regular_file(p)) return false;
  return ReadText(p).find(kStubMarker) != std::string::npos;
}

namespace {

/// Files to write, all checked before the first is written; on a failure while writing, what
/// was written is undone (created files removed, appended files restored).
class Plan {
 public:
  void Create(const fs::path& p, std::string text) {
    if (fs::exists(p)) throw Error(p.string() + " exists; nothing was written");
    for (const auto& c : creates_)
      if (c.first == p) throw Error(p.string() + " would be written twice");
    creates_.emplace_back(p, std::move(text));
  }
  void Append(const fs::path& p, std::string old_text, std::string new_text) {
    appends_.push_back({p, std::move(old_text), std::move(new_text)});
  }
  void Commit(ScaffoldReport& report) {
    std::vector<fs::path> made, made_dirs;
    size_t appended = 0;
    try {
      for (const auto& [p, text] : creates_) {
        std::vector<fs::path> missing;
        for (fs::path d = p.parent_path(); !d.empty() && !fs::exists(d); d = d.parent_path())
          missing.push_back(d);
        for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
          fs::create_directory(*it);
          made_dirs.push_back(*it);
        }
        WriteText(p, text);
        made.push_back(p);
      }
      for (const auto& a : appends_) {
        // Written whole through a temporary sibling, then renamed: never half an entry.
        fs::path tmp = a.path;
        tmp += ".msc-codegen-tmp";
        WriteText(tmp, a.new_text);
        fs::rename(tmp, a.path);
        ++appended;
      }
    } catch (...) {
      boost::system::error_code ec;
      for (const auto& p : made) fs::remove(p, ec);
      for (auto it = made_dirs.rbegin(); it != made_dirs.rend(); ++it) fs::remove(*it, ec);
      for (size_t i = 0; i < appended; ++i) WriteText(appends_[i].path, appends_[i].old_text);
      throw;
    }
    for (const auto& c : creates_) report.created.push_back(c.first.string());
    for (const auto& a : appends_) report.appended.push_back(a.path.string());
  }

 private:
  struct AppendEntry {
    fs::path path;
    std::string old_text, new_text;
  };
  std::vector<std::pair<fs::path, std::string>> creates_;
  std::vector<AppendEntry> appends_;
};

std::string WithNewline(const std::string& text) {
  return text.empty() || text.back() == '\n' ? text : text + "\n";
}

}  // namespace

ScaffoldReport NewOp(const NewOpOptions& o) {
  CheckOptypeName(o.optype);
  const opdef::OpDefRegistry current = opdef::OpDefRegistry::LoadDir(o.opdefs_dir);
  if (const opdef::OpDef* existing = current.Find(o.optype))
    throw Error("optype '" + o.optype + "' already has an opdef (" + existing->file +
                "); nothing was written");
  const opdef::OpDef* like = nullptr;
  if (!o.like.empty()) {
    like = current.Find(o.like);
    if (!like) throw Error("--like '" + o.like + "': no such optype in " + o.opdefs_dir);
  }
  const std::string origin =
      "`msc-codegen new-op " + o.optype + (like ? " --like " + o.like : "") + "`";
  ScaffoldReport report;
  Plan plan;

  // (a) the opdef entry, appended to its file (or a new file for a new namespace).
  const fs::path yaml = OpDefFileFor(o.opdefs_dir, o.optype, like);
  const bool new_file = !fs::exists(yaml);
  const std::string old_text = new_file ? "" : ReadText(yaml);
  std::string entry = "# " + o.optype + ": added by " + origin + "\n" +
                      (like ? OpDefYaml(*like, o.optype) : SkeletonOpDefYaml(o.optype));
  std::string new_text = new_file ? "# " + o.optype.substr(0, o.optype.find('.')) +
                                        ".* ops (written by " + origin +
                                        "; format: opdefs/README.md).\n" + entry
                                  : WithNewline(old_text) + entry;
  const opdef::OpDefRegistry with_new = LoadWith(o.opdefs_dir, yaml, new_text);
  const opdef::OpDef& def = *with_new.Find(o.optype);
  if (new_file)
    plan.Create(yaml, new_text);
  else
    plan.Append(yaml, old_text, new_text);

  // (b) one snippet per backend.
  for (const auto& b : emit::ListBackends(o.templates_root)) {
    const emit::BackendSpec spec = emit::LoadBackendSpec(o.templates_root, b, with_new);
    if (Contains(spec.no_snippet, o.optype)) {
      report.notes.push_back(b + ": " + o.optype + " is in no_snippet: no snippet written");
      continue;
    }
    if (spec.SnippetFor(o.optype) != spec.OpTemplateFor(o.optype)) {
      report.notes.push_back(b + ": " + o.optype + " is rendered by its trait snippet " +
                             spec.SnippetFor(o.optype) +
                             " (backend.yaml trait_snippets): no snippet written");
      continue;
    }
    const fs::path target = fs::path(spec.dir) / spec.OpTemplateFor(o.optype);
    if (fs::exists(target))
      throw Error(target.string() + " exists (the " + b + " snippet of " + o.optype +
                  "); nothing was written");
    std::string text;
    if (like && emit::HasSnippet(spec, o.like)) {
      text = ReadText(fs::path(spec.dir) / spec.OpTemplateFor(o.like));
    } else {
      if (like)
        report.notes.push_back(b + ": " + o.like + " has no snippet there (" +
                               (Contains(spec.no_snippet, o.like) ? "no_snippet" : "missing") +
                               "): wrote a stub");
      text = SnippetStub(spec, def, origin);
    }
    plan.Create(target, text);
  }

  // (c) the per-op test case stub.
  if (!o.cases_file.empty()) {
    const fs::path cases(o.cases_file);
    if (!fs::is_regular_file(cases)) throw Error(o.cases_file + ": cases file not found");
    std::string case_name = o.optype;
    std::replace(case_name.begin(), case_name.end(), '.', '_');
    const std::string text = ReadText(cases);
    if (text.find("\ndef case(") == std::string::npos)
      throw Error(o.cases_file +
                  ": no `def case(` registry decorator (expected a file like "
                  "tests/ops/cases/cases_ops.py); nothing was written");
    const fs::path dir = cases.parent_path();
    const fs::path json = dir / (case_name + ".json");
    const bool taken =
        text.find("def case_" + case_name + "(") != std::string::npos ||
        text.find("_register(\"" + case_name + "\"") != std::string::npos ||
        (fs::is_regular_file(dir / "cases.py") &&
         ReadText(dir / "cases.py").find("\"" + case_name + "\":") != std::string::npos) ||
        fs::exists(json);
    if (taken)
      throw Error("test case '" + case_name + "' exists (" + o.cases_file + ", " +
                  (dir / "cases.py").string() + " or " + json.string() + "); nothing was written");
    plan.Append(cases, text, WithNewline(text) + CaseStub(def, case_name, origin));
  } else {
    report.notes.push_back(
        "no test case stub: no cases file (source checkouts have "
        "tests/ops/cases/cases_ops.py; pass --cases FILE)");
  }
  plan.Commit(report);
  return report;
}

namespace {

void CheckBackendName(const std::string& name) {
  bool ok =
      !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) { return IsIdentChar(c) || c == '-'; });
  if (!ok)
    throw Error("invalid backend name " + Quoted(name) +
                ": expected letters, digits, '_' and '-', starting with a letter");
}

std::string SkeletonBackendYaml(const std::string& name, const std::string& ext) {
  return "# " + name + " backend, written by `msc-codegen new-backend " + name +
         "`. A backend is this folder: the\n"
         "# generator's C++ never names it. Every key: docs/writing-a-backend.md.\n"
         "summary: " +
         Json(name + ": TODO one line for `msc-codegen ops`").dump() +
         "\n"
         "# Per-op snippet; {path} = the optype with '.' -> '/' (nn.conv2d -> ops/nn/conv2d." +
         ext +
         ".j2).\n"
         "op_template: \"ops/{path}." +
         ext +
         ".j2\"\n"
         "# Each snippet is rendered once per section, with `section` set; the text lands in\n"
         "# node.code.<section> for the project templates (e.g. [init, forward] for a class).\n"
         "op_sections: [code]\n"
         "# Optypes without a snippet: the project templates handle them (node.code.* = \"\").\n"
         "no_snippet: [input]\n"
         "# Project files rendered with {graph, backend, options}; output paths relative to "
         "--out.\n"
         "files:\n"
         "  - {template: project/model." +
         ext + ".j2, output: model." + ext +
         "}\n"
         "  - {template: project/README.md.j2, output: README.md}\n"
         "# Folders copied verbatim (from: relative to this folder), e.g. a runtime library:\n"
         "# copy:\n"
         "#   - {from: ../../runtime/mylib, to: runtime}\n"
         "# Where the bound weights (safetensors, keys = MSC weight names = T.key) are written.\n"
         "weights: weights.safetensors\n"
         "# Where --golden data goes (inputs.safetensors, outputs.safetensors, extras).\n"
         "golden: golden\n"
         "# Never used as identifiers (node.ident, T.ident): the target language's keywords and\n"
         "# builtins, and every name the project templates define.\n"
         "reserved_names: []\n"
         "# Optional: one arena for all activations (adds T.offset and graph.memory):\n"
         "# memory_plan: {alignment: 256, alias: [reshape, squeeze, expand_dims]}\n"
         "# Optional: fold an elementwise consumer into its producer (node.fused_epilogue):\n"
         "# fuse_epilogues: {producers: [nn.conv2d], epilogues: [nn.relu]}\n"
         "# How the test suite runs a project's golden test; with it, every suite that runs\n"
         "# backends runs this one (docs/writing-a-backend.md, How the tests find a backend):\n"
         "# test:\n"
         "#   run: [python, test_model.py]   # argv in the project folder\n"
         "#   python: debian                 # `python` above: debian (MSC_PYTHON) or tvm\n"
         "#   merge: false                   # true: tests merge many graphs into one project\n"
         "#   env: {}                        # extra environment of the run\n";
}

std::string SkeletonModel(const std::string& name) {
  return "{#- The " + name + " project's model file, written by `msc-codegen new-backend " + name +
         "`: replace it with the\n"
         "    target language. It is rendered once with graph, backend and options (every field:\n"
         "    docs/template-context.md); node.code.code is what each node's snippet rendered. "
         "-#}\n"
         "model {{ graph.name | py_str }} ({{ graph.nodes | length }} nodes)\n"
         "{%- for t in graph.inputs %}\n"
         "input {{ t.ident }}: {{ t.dtype }} {{ t.shape }}\n"
         "{%- endfor %}\n"
         "{%- for w in graph.weights %}\n"
         "weight {{ w.ident }} = {{ backend.weights }}[{{ w.key | py_str }}]: {{ w.dtype }} "
         "{{ w.shape }}\n"
         "{%- endfor %}\n"
         "{%- for node in graph.nodes if node.code.code %}\n"
         "{{ node.code.code }}\n"
         "{%- endfor %}\n"
         "{%- for t in graph.outputs %}\n"
         "output {{ t.ident }}\n"
         "{%- endfor %}\n";
}

std::string SkeletonReadme(const std::string& name) {
  return "# {{ graph.name }} — " + name +
         " project generated by msc-codegen\n"
         "\n"
         "Generated from an MSCGraph ({{ graph.nodes | length }} nodes, "
         "{{ graph.weights | length }} weight tensors). Do not edit: regenerate.\n"
         "{%- if options.has_golden %}\n"
         "\n"
         "`{{ backend.golden }}/` holds the golden inputs and outputs (safetensors, keyed by MSC "
         "tensor name).\n"
         "{%- endif %}\n";
}

}  // namespace

ScaffoldReport NewBackend(const NewBackendOptions& o) {
  CheckBackendName(o.name);
  const fs::path root(o.templates_root);
  if (!fs::is_directory(root)) throw Error(o.templates_root + ": templates folder not found");
  const fs::path target = root / o.name;
  if (fs::exists(target) || fs::is_symlink(target))
    throw Error(target.string() + " exists; nothing was written");
  ScaffoldReport report;
  std::vector<std::pair<std::string, std::string>> texts;  // rel path -> content
  std::vector<std::pair<std::string, fs::path>> copies;    // rel path -> source file
  if (!o.from.empty()) {
    const emit::BackendSpec from = emit::LoadBackendSpec(o.templates_root, o.from);
    const fs::path src(from.dir);
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(src), end; it != end; ++it) {
      if (fs::is_symlink(it->symlink_status()) || !fs::is_directory(it->path())) {
        if (!fs::is_regular_file(it->symlink_status()))
          throw Error(it->path().string() +
                      ": not a regular file (links are not copied); nothing was written");
        files.push_back(it->path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string rel = f.lexically_relative(src).generic_string();
      if (rel != "backend.yaml") copies.emplace_back(rel, f);
    }
    // backend.yaml: a header comment and the summary naming the copy; everything else as is.
    std::istringstream lines(ReadText(src / "backend.yaml"));
    std::string yaml = "# " + o.name + ": a copy of templates/" + o.from +
                       ", written by `msc-codegen new-backend " + o.name + " --from " + o.from +
                       "`.\n# (Copied, not {% extends \"../" + o.from +
                       "/...\" %}: template names resolve inside this folder\n"
                       "# and may not contain \"..\".)\n";
    bool replaced = false;
    for (std::string line; std::getline(lines, line);) {
      if (!replaced && line.rfind("summary:", 0) == 0) {
        line =
            "summary: " +
            Json(o.name + ": a copy of the " + o.from + " backend (" + from.summary + ")").dump();
        replaced = true;
      }
      yaml += line + "\n";
    }
    if (!replaced)
      yaml += "summary: " + Json(o.name + ": a copy of the " + o.from + " backend").dump() + "\n";
    texts.emplace_back("backend.yaml", yaml);
  } else {
    const std::string ext = o.ext.empty() ? "txt" : o.ext;
    if (!std::all_of(ext.begin(), ext.end(), [](char c) { return std::isalnum(c) || c == '.'; }) ||
        ext.front() == '.' || ext.back() == '.')
      throw Error("invalid --ext " + Quoted(ext) + ": expected letters and digits, like py");
    texts.emplace_back("backend.yaml", SkeletonBackendYaml(o.name, ext));
    texts.emplace_back("project/model." + ext + ".j2", SkeletonModel(o.name));
    texts.emplace_back("project/README.md.j2", SkeletonReadme(o.name));
  }

  // Stage in a temporary sibling (same filesystem), check it loads, then rename into place.
  const fs::path stage = root / ("." + o.name + ".msc-codegen-tmp");
  boost::system::error_code ec;
  fs::remove_all(stage, ec);
  try {
    for (const auto& [rel, text] : texts) {
      fs::create_directories((stage / rel).parent_path());
      WriteText(stage / rel, text);
    }
    for (const auto& [rel, src] : copies) {
      fs::create_directories((stage / rel).parent_path());
      fs::copy_file(src, stage / rel);
    }
    const std::string stage_name = stage.filename().string();
    emit::BackendSpec spec = emit::LoadBackendSpec(o.templates_root, stage_name);
    if (o.from.empty()) {
      spec.name = o.name;
      const opdef::OpDefRegistry opdefs = opdef::OpDefRegistry::LoadDir(o.opdefs_dir);
      const std::string origin = "`msc-codegen new-backend " + o.name + "`";
      size_t stubs = 0;
      for (const auto& [optype, def] : opdefs.all()) {
        if (Contains(spec.no_snippet, optype) || !def.not_for_inference.empty()) continue;
        const fs::path p = stage / spec.OpTemplateFor(optype);
        fs::create_directories(p.parent_path());
        WriteText(p, SnippetStub(spec, def, origin));
        ++stubs;
      }
      report.notes.push_back(std::to_string(stubs) + " stub snippets under " +
                             (target / "ops").string() +
                             ": `msc-codegen ops` lists them as \"stub\" until written");
    }
    if (fs::exists(target)) throw Error(target.string() + " exists; nothing was written");
    fs::rename(stage, target);
  } catch (...) {
    fs::remove_all(stage, ec);
    throw;
  }
  report.created.push_back(target.string());
  return report;
}

}  // namespace msc::tools
