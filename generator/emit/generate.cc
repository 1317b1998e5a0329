#include "generator/emit/generate.h"

#include <fnmatch.h>

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <boost/filesystem.hpp>

#include "generator/common/contains.h"
#include "generator/common/error.h"
#include "generator/emit/context.h"
#include "generator/emit/naming.h"
#include "generator/emit/writer.h"
#include "generator/frontend/model.h"
#include "generator/ir/specialize.h"
#include "generator/ir/validate.h"
#include "generator/passes/passes.h"
#include "generator/tmpl/environment.h"
#include "generator/weights/weights.h"

namespace msc::emit {

namespace fs = boost::filesystem;

std::vector<std::string> TemplateSearchPath(const std::string& templates_root,
                                            const BackendSpec& spec) {
  return {spec.dir, (fs::path(templates_root) / kSharedTemplates).string()};
}

void RegisterCodegenFilters(tmpl::Environment& env) {
  auto one_arg = [](const char* name, std::string (*fn)(const Json&)) {
    return [name, fn](const std::vector<Json>& args, const Json&) -> Json {
      if (args.size() != 1) throw Error(std::string("filter '") + name + "' takes no arguments");
      return fn(args[0]);
    };
  };
  env.AddFilter("py_literal", one_arg("py_literal", [](const Json& v) { return PyLiteral(v); }));
  env.AddFilter("c_literal", one_arg("c_literal", [](const Json& v) { return CLiteral(v); }));
  env.AddFilter("py_str", one_arg("py_str", [](const Json& v) {
                  return PyStringLiteral(v.is_string() ? v.get<std::string>() : v.dump());
                }));
  // raise_error("message"): a template's way to reject what its backend cannot express.
  env.AddFunction("raise_error", [](const std::vector<Json>& args, const Json&) -> Json {
    throw Error(args.empty()          ? std::string("raise_error() called")
                : args[0].is_string() ? args[0].get<std::string>()
                                      : args[0].dump());
  });
  env.AddFilter("c_str", one_arg("c_str", [](const Json& v) {
                  return CStringLiteral(v.is_string() ? v.get<std::string>() : v.dump());
                }));
}

bool HasSnippet(const BackendSpec& spec, const std::string& optype) {
  return fs::is_regular_file(fs::path(spec.dir) / spec.SnippetFor(optype));
}

namespace {

/// Every node's optype has a snippet (or is rendered by project files alone).
void CheckSnippets(const ir::MSCGraph& graph, const BackendSpec& spec) {
  std::set<std::string> present;  // optypes checked (one file lookup per optype, not per node)
  for (const auto& n : graph.nodes) {
    if (present.count(n.optype)) continue;
    if (Contains(spec.no_snippet, n.optype) || HasSnippet(spec, n.optype)) {
      present.insert(n.optype);
      continue;
    }
    throw Error("optype '" + n.optype + "' (node " + Json(n.name).dump() + ") has no " + spec.name +
                " snippet: expected " +
                (fs::path(spec.dir) / spec.OpTemplateFor(n.optype)).string());
  }
}

/// The backend's entry for `--precision`; nullptr for fp32. Throws msc::Error for a name that is
/// not a precision or that the backend does not offer (listing what it offers).
const Precision* FindPrecision(const GenerateOptions& o, const BackendSpec& spec) {
  const auto& names = PrecisionNames();
  if (std::find(names.begin(), names.end(), o.precision) == names.end())
    throw Error("--precision '" + o.precision + "': expected fp32 or fp16");
  if (o.precision == "fp32") return nullptr;
  const auto it = spec.precisions.find(o.precision);
  if (it == spec.precisions.end()) {
    std::string offered = "fp32";
    for (const auto& [name, p] : spec.precisions) offered += ", " + name;
    throw Error("backend '" + spec.name + "' does not offer --precision " + o.precision +
                " (its backend.yaml `precision` offers: " + offered + ")");
  }
  return &it->second;
}

/// Validate: the graph against MSC's rules and the opdefs, and no node an inference project
/// cannot mean (opdef `not_for_inference`: training losses, plugins).
void ValidateForInference(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                          const std::string& graph_path) {
  ir::Validate(graph, &opdefs);
  for (const auto& node : graph.nodes) {
    const opdef::OpDef* def = opdefs.Find(node.optype);
    if (def && !def->not_for_inference.empty())
      throw Error(graph_path + ": node " + Json(node.name).dump() + " (" + node.optype +
                  "): " + def->not_for_inference);
  }
}

/// Bind weights: the model's own (ONNX initializers) or --weights, bound to the graph's weight
/// tensors by name / alias and checked (weights::BindGraphWeights). Throws when the graph has
/// weights and none were given.
weights::TensorMap BindWeights(const GenerateOptions& o, const ir::MSCGraph& graph,
                               const frontend::LoadedModel& model) {
  if (model.carries_weights) return weights::BindGraphWeights(graph, model.weights, o.graph_path);
  if (!o.weights_path.empty())
    return weights::BindGraphWeights(graph, weights::ReadWeights(o.weights_path), o.weights_path);
  for (const auto& n : graph.nodes)
    if (!n.weights.empty())
      throw Error(o.graph_path +
                  ": the graph has weights; pass --weights FILE (safetensors or TVM param dict)");
  return {};
}

/// What the reduced precision stored as float16 (tensor names), for options.precision.
struct Reduced {
  std::vector<std::string> weights, activations;
};

/// Passes: the backend's graph passes (backend.yaml `passes`, unless --no-passes; the graph
/// stays valid), then the reduced precision's storage of weights and activations. Returns what
/// the graph passes folded (node.folded).
std::vector<passes::Folded> RunPasses(const GenerateOptions& o, const BackendSpec& spec,
                                      const opdef::OpDefRegistry& opdefs,
                                      const Precision* precision, ir::MSCGraph& graph,
                                      weights::TensorMap& bound, Reduced* reduced) {
  std::vector<passes::Folded> folded;
  if (!spec.passes.empty() && !o.no_passes) {
    folded = passes::RunPasses(spec.passes, graph, bound);
    if (!folded.empty()) ir::Validate(graph, &opdefs);  // a pass must leave a valid graph
  }
  if (precision) {
    reduced->weights = passes::StoreWeightsAsFloat16(graph, bound, precision->weights);
    reduced->activations = passes::StoreActivationsAsFloat16(graph, precision->activations_mixed,
                                                             precision->activations_same);
  }
  return folded;
}

/// The project files' object: {graph, backend, options} (docs/template-context.md).
tmpl::Value ProjectValue(const GenerateOptions& o, const BackendSpec& spec, const Context& ctx,
                         const Precision* precision, const Reduced& reduced,
                         const std::vector<std::string>& golden_files) {
  using tmpl::Value;
  tmpl::ValueDict backend, options, root;
  backend.emplace_back(Value::Str("name"), Value::Str(spec.name));
  backend.emplace_back(Value::Str("summary"), Value::Str(spec.summary));
  backend.emplace_back(Value::Str("weights"), Value::Str(spec.weights_output));
  backend.emplace_back(Value::Str("golden"), Value::Str(spec.golden_output));
  auto strings = [](const std::vector<std::string>& v) {
    tmpl::ValueList out;
    for (const auto& s : v) out.push_back(Value::Str(s));
    return Value::List(std::move(out));
  };
  options.emplace_back(Value::Str("has_golden"), Value::Bool(!o.golden_dir.empty()));
  options.emplace_back(Value::Str("golden_files"), strings(golden_files));
  tmpl::ValueDict prec;
  prec.emplace_back(Value::Str("name"), Value::Str(o.precision));
  if (precision) {
    prec.emplace_back(Value::Str("atol"), Value::Float(precision->atol));
    prec.emplace_back(Value::Str("rtol"), Value::Float(precision->rtol));
    prec.emplace_back(Value::Str("weights"), strings(reduced.weights));
    prec.emplace_back(Value::Str("activations"), strings(reduced.activations));
  }
  options.emplace_back(Value::Str("precision"), Value::Dict(std::move(prec)));
  root.emplace_back(Value::Str("graph"), ctx.Graph());
  root.emplace_back(Value::Str("backend"), Value::Dict(std::move(backend)));
  root.emplace_back(Value::Str("options"), Value::Dict(std::move(options)));
  return Value::Dict(std::move(root));
}

/// Adds the golden data to the project (backend.yaml `golden`); returns the extra files' names.
std::vector<std::string> AddGolden(const frontend::GoldenData& golden, const BackendSpec& spec,
                                   OutputTree& tree) {
  const std::string out = spec.golden_output;
  for (const auto* tensors : {&golden.inputs, &golden.outputs}) {
    auto shared = std::make_shared<weights::TensorMap>(*tensors);
    tree.AddWriter(out + (tensors == &golden.inputs ? "/inputs" : "/outputs") + ".safetensors",
                   [shared](const std::string& p) { weights::WriteSafetensors(p, *shared); });
  }
  std::vector<std::string> names;
  for (const auto& f : golden.extra_files) {
    names.push_back(fs::path(f).filename().string());
    tree.AddCopy(out + "/" + names.back(), f);
  }
  return names;
}

/// Renders node i's snippet once per section, in op_sections order, into node.code.<section>;
/// each render sees {node, section} with the node as it is then (node.code holding the sections
/// rendered before). With `stop_at`, stops before rendering that section.
void RenderNodeSnippet(tmpl::Environment& env, const BackendSpec& spec,
                       const std::string& tmpl_name, Context& ctx, size_t i,
                       const std::string* stop_at) {
  const tmpl::Value node_key = tmpl::Value::Str("node"), section_key = tmpl::Value::Str("section");
  for (const auto& section : spec.op_sections) {
    if (stop_at && section == *stop_at) return;
    tmpl::ValueDict data;
    data.emplace_back(node_key, ctx.Node(i));
    data.emplace_back(section_key, tmpl::Value::Str(section));
    ctx.SetCode(i, section,
                env.Render(tmpl_name, tmpl::Data::FromValue(tmpl::Value::Dict(std::move(data)))));
  }
}

/// Renders every node's snippet once per section into node.code.<section>.
void RenderSnippets(tmpl::Environment& env, const BackendSpec& spec, const ir::MSCGraph& graph,
                    Context& ctx) {
  std::map<std::string, std::string> tmpl_names;  // optype -> snippet
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const std::string& optype = graph.nodes[i].optype;
    if (Contains(spec.no_snippet, optype)) {
      for (const auto& section : spec.op_sections) ctx.SetCode(i, section, "");
      continue;
    }
    auto it = tmpl_names.find(optype);
    if (it == tmpl_names.end()) it = tmpl_names.emplace(optype, spec.SnippetFor(optype)).first;
    RenderNodeSnippet(env, spec, it->second, ctx, i, nullptr);
  }
}

/// A node query of TemplateContext: {node, section} as RenderSnippets would render it.
Json NodeContext(tmpl::Environment& env, const BackendSpec& spec, const std::string& graph_path,
                 const ir::MSCGraph& graph, Context& ctx, const ContextQuery& q) {
  size_t found = graph.nodes.size();
  std::string some;  // the first 20 names, for the error
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (graph.nodes[i].name == q.node) found = i;
    if (i < 20) some += (i ? ", " : "") + Json(graph.nodes[i].name).dump();
  }
  if (found == graph.nodes.size())
    throw Error(graph_path + ": no node " + Json(q.node).dump() + " (nodes: " + some +
                (graph.nodes.size() > 20 ? ", ..." : "") + ")");
  const std::string& optype = graph.nodes[found].optype;
  if (Contains(spec.no_snippet, optype))
    throw Error("node " + Json(q.node).dump() + " (" + optype + ") has no " + spec.name +
                " snippet (backend.yaml no_snippet): the project templates render it; see "
                "--project for their context");
  const std::string section = q.section.empty() ? spec.op_sections.front() : q.section;
  if (!Contains(spec.op_sections, section)) {
    std::string valid;
    for (const auto& s : spec.op_sections) valid += (valid.empty() ? "" : ", ") + s;
    throw Error("backend '" + spec.name + "' has no section '" + section +
                "' (op_sections: " + valid + ")");
  }
  if (section != spec.op_sections.front() && !HasSnippet(spec, optype))
    throw Error("section '" + section + "' of node " + Json(q.node).dump() +
                " sees node.code of the sections before it, rendered by its snippet, which "
                "does not exist: " +
                (fs::path(spec.dir) / spec.OpTemplateFor(optype)).string());
  RenderNodeSnippet(env, spec, spec.SnippetFor(optype), ctx, found, &section);
  Json snippet_data = Json::object();
  snippet_data["node"] = ctx.Node(found).ToJson();
  snippet_data["section"] = section;
  return snippet_data;
}

/// The backend's `copy` trees, file by file in sorted order; files matched by a tree's filter
/// only where its `keep` template (rendered with the project `data`) lists them.
void AddCopies(const BackendSpec& spec, tmpl::Environment& env, const tmpl::Data& data,
               OutputTree& tree) {
  for (const auto& c : spec.copy) {
    fs::path src = fs::path(spec.dir) / c.from;
    if (!fs::is_directory(src))
      throw Error(spec.dir + "/backend.yaml: copy source not found: " + src.string());
    std::set<std::string> keep;  // listed by the filter template, each checked to exist
    if (!c.filter_keep.empty()) {
      std::istringstream lines(env.Render(c.filter_keep, data));
      for (std::string line; std::getline(lines, line);) {
        const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
        if (b == std::string::npos) continue;
        line = line.substr(b, e - b + 1);
        if (fnmatch(c.filter_match.c_str(), line.c_str(), 0) != 0 ||
            !fs::is_regular_file(src / line))
          throw Error((fs::path(spec.dir) / c.filter_keep).string() + ": lists '" + line +
                      "', which is no file under " + src.string() + " matching '" + c.filter_match +
                      "'");
        keep.insert(line);
      }
    }
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(src), end; it != end; ++it) {
      if (!fs::is_regular_file(it->path())) continue;
      const std::string rel = it->path().lexically_relative(src).generic_string();
      if (!c.filter_match.empty() && fnmatch(c.filter_match.c_str(), rel.c_str(), 0) == 0 &&
          !keep.count(rel))
        continue;
      files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      tree.AddCopy(c.to + "/" + f.lexically_relative(src).generic_string(), f.string());
  }
}

/// Generate's pipeline, stage by stage: load (any frontend) -> validate -> specialize -> bind
/// weights -> passes (graph passes, reduced precision) -> golden data -> analyses (fusion
/// decisions, memory plan: generator/analyses) -> template values (Context: identifiers, typed
/// attrs, the analyses' results) -> render -> write.
/// With `query` (TemplateContext) it stops before render (a node query: at that node's snippet)
/// and returns the context asked for instead of writing anything.
Json Run(const GenerateOptions& o, const ContextQuery* query, GenerateSummary* summary_out) {
  const opdef::OpDefRegistry opdefs = opdef::OpDefRegistry::LoadDir(o.opdefs_dir);
  const BackendSpec spec = LoadBackendSpec(o.templates_root, o.backend, opdefs);
  const Precision* precision = FindPrecision(o, spec);

  // load: an MSCGraph (and the weights an ONNX model carries); the source format ends here
  frontend::LoadedModel model = frontend::LoadModel(o.graph_path, o.input_shapes, o.max_nodes);
  if (model.carries_weights && !o.weights_path.empty())
    throw Error(o.graph_path +
                ": an ONNX model carries its weights (initializers); drop --weights");
  ir::MSCGraph& graph = model.graph;
  // validate, specialize (--shape)
  ValidateForInference(graph, opdefs, o.graph_path);
  if (!o.input_shapes.empty() && !model.shapes_applied) {
    ir::SpecializeShapes(graph, o.input_shapes);
    ir::Validate(graph, &opdefs);
  }
  const bool node_query = query && !query->project;
  if (!node_query) CheckSnippets(graph, spec);  // a node query reads one node's snippet at most

  // bind weights, passes (a context query without weights skips both: it needs no values)
  GenerateSummary summary;
  OutputTree tree;
  std::vector<passes::Folded> folded;
  Reduced reduced;
  if (!query || model.carries_weights || !o.weights_path.empty()) {
    auto bound = std::make_shared<weights::TensorMap>(BindWeights(o, graph, model));
    folded = RunPasses(o, spec, opdefs, precision, graph, *bound, &reduced);
    summary.weights = bound->size();
    if (!spec.weights_output.empty())
      tree.AddWriter(spec.weights_output,
                     [bound](const std::string& path) { weights::WriteSafetensors(path, *bound); });
  }
  summary.nodes = graph.nodes.size();  // after the graph passes

  // golden data, checked against the graph
  std::vector<std::string> golden_files;
  if (!o.golden_dir.empty()) {
    if (spec.golden_output.empty())
      throw Error("backend '" + spec.name + "' declares no 'golden' folder in backend.yaml");
    golden_files = AddGolden(frontend::LoadGoldenData(o.golden_dir, graph), spec, tree);
  }

  // analyses (fusion decisions, memory plan), then the template values
  const analyses::GraphAnalyses analyses(graph, opdefs, spec.fusion, spec.memory);
  Context ctx(graph, opdefs, spec, analyses, &folded);

  // render: every node's snippet per section, then the project files
  tmpl::Environment env(TemplateSearchPath(o.templates_root, spec));
  RegisterCodegenFilters(env);
  if (node_query) return NodeContext(env, spec, o.graph_path, graph, ctx, *query);
  RenderSnippets(env, spec, graph, ctx);
  const tmpl::Value project = ProjectValue(o, spec, ctx, precision, reduced, golden_files);
  if (query) return project.ToJson();
  const tmpl::Data data = tmpl::Data::FromValue(project);
  for (const auto& pf : spec.files) tree.AddText(pf.output, env.Render(pf.template_name, data));
  AddCopies(spec, env, data, tree);

  // write: the whole project at once (OutputTree::Commit: a temporary sibling, then a rename)
  tree.Commit(o.out_dir, o.force);
  summary.files = tree.size();
  *summary_out = summary;
  return Json();
}

}  // namespace

// The template engine is a library of its own (generator/tmpl) with its own error type; its
// errors already name the template, line and column, and become msc::Error here, verbatim.
GenerateSummary Generate(const GenerateOptions& o) {
  GenerateSummary summary;
  try {
    Run(o, nullptr, &summary);
  } catch (const tmpl::TemplateError& e) {
    throw Error(e.what());
  }
  return summary;
}

Json TemplateContext(const GenerateOptions& o, const ContextQuery& query) {
  try {
    return Run(o, &query, nullptr);
  } catch (const tmpl::TemplateError& e) {
    throw Error(e.what());
  }
}

}  // namespace msc::emit
