// Generate: the whole pipeline behind `msc-codegen generate`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generator/emit/backend_spec.h"
#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"

namespace msc::tmpl {
class Environment;
}

namespace msc::emit {

struct GenerateOptions {
  std::string graph_path;    ///< MSCGraph JSON, or an ONNX model (sniffed by content).
  std::string weights_path;  ///< safetensors or TVM param dict; "" for weightless graphs and ONNX.
  std::string backend;       ///< folder name under templates_root.
  std::string out_dir;
  /// Optional: inputs.safetensors + outputs.safetensors (+ extra *.safetensors), or an ONNX
  /// backend-test folder (input_N.pb, output_N.pb).
  std::string golden_dir;
  /// Optional `--shape` values: graph input (tensor name, alias or node name) -> dims. When
  /// given, the graph's dynamic dims are specialized first (ir::SpecializeShapes).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  bool force = false;
  /// `--precision`: "fp32" (the graph's dtypes) or a precision the backend's backend.yaml offers
  /// (`precision.fp16`: weights stored as float16, see passes::StoreWeightsAsFloat16).
  std::string precision = "fp32";
  /// Skip the backend's graph passes (backend.yaml `passes`): every node keeps its own snippet.
  bool no_passes = false;
  /// Graphs (MSCGraph JSON or imported ONNX) with more nodes are refused (ir::kDefaultMaxNodes).
  size_t max_nodes = ir::kDefaultMaxNodes;
  std::string templates_root;  ///< folder holding <backend>/backend.yaml.
  std::string opdefs_dir;
};

struct GenerateSummary {
  size_t nodes = 0;
  size_t files = 0;
  size_t weights = 0;
};

/// Loads opdefs, graph (+ Validate), backend spec, weights (bound by name/alias, checked), golden
/// data (checked against graph inputs/outputs), renders every per-op snippet and project file,
/// and commits the project atomically. Every failure is an msc::Error and leaves `out_dir`
/// untouched. Missing snippets are reported before anything is read or written:
/// "optype 'nn.foo' (node 'x') has no torch snippet: expected <templates>/torch/ops/nn/foo.py.j2".
GenerateSummary Generate(const GenerateOptions& options);

/// Which template context `msc-codegen context` asks for.
struct ContextQuery {
  std::string node;      ///< a node name: the object its snippet is rendered with...
  std::string section;   ///< ...for this op_sections entry ("" = the first).
  bool project = false;  ///< instead of a node: the object project files are rendered with.
};

/// The exact object `generate` renders a template with, from Generate's own pipeline (graph or
/// ONNX import, Validate, not_for_inference, --shape, BuildContext with the backend's reserved
/// names, fusion and memory plan), stopping before anything is written; `out_dir` is unused.
/// Node query: {node, section}, node.code holding the sections the node's snippet rendered
/// before `section` (generate renders sections in op_sections order); the node's own snippet
/// need not exist when `section` is the first, and other nodes' snippets are not read. Project
/// query: {graph, backend, options} with every snippet rendered. Weights are bound and checked
/// when given (the context holds no weight values). Errors: an unknown node (naming some
/// nodes), a no_snippet optype, an unknown section (listing op_sections).
nlohmann::ordered_json TemplateContext(const GenerateOptions& options, const ContextQuery& query);

/// Registers msc-codegen's generic filters on a template environment: py_literal, c_literal,
/// py_str, c_str (see naming.h). Used by `generate` and `render`.
void RegisterCodegenFilters(tmpl::Environment& env);

/// Folder under the templates root with templates every backend may include or import by name
/// (e.g. "helpers/load_safetensors.py.j2"); it holds no backend.yaml, so it is not a backend.
inline constexpr const char* kSharedTemplates = "common";

/// Where a backend's template names resolve, in order: its own folder, then
/// <templates_root>/common (a backend overrides a shared template by having the same name).
std::vector<std::string> TemplateSearchPath(const std::string& templates_root,
                                            const BackendSpec& spec);

/// Whether <backend dir>/<SnippetFor(optype)> exists: the op's own snippet, or its trait
/// snippet when the spec's traits are resolved (LoadBackendSpec with opdefs).
bool HasSnippet(const BackendSpec& spec, const std::string& optype);

}  // namespace msc::emit
