#include "generator/tools/context_doc.h"

#include <algorithm>
#include <cmath>

namespace msc::tools {

const std::vector<FieldDoc>& SnippetFieldDocs() {
  static const std::vector<FieldDoc> kDocs = {
      {"node", "N",
       "the node being rendered (fields below); a snippet sees nothing else of the graph: other "
       "nodes' tensors reach it as node.inputs"},
      {"section", "str",
       "the op_sections entry being rendered; the text lands in node.code.<section>"},
  };
  return kDocs;
}

const std::vector<FieldDoc>& NodeFieldDocs() {
  static const std::vector<FieldDoc> kDocs = {
      {"node.index", "int", "position in graph.nodes (MSC `index`)"},
      {"node.name", "str",
       "MSC node name, unique in the graph; data: reach code only through py_str / c_str / "
       "py_literal / c_literal"},
      {"node.ident", "str",
       "unique identifier made from name (valid in Python and C++, never a reserved_names entry); "
       "equals outputs[0].ident for a one-output node"},
      {"node.optype", "str", "MSC optype, e.g. \"nn.conv2d\""},
      {"node.ns", "str", "optype before the first '.' (\"nn\"); \"\" when there is no '.'"},
      {"node.op", "str", "optype after the first '.' (\"conv2d\"); the whole optype without '.'"},
      {"node.summary", "str", "the opdef's summary"},
      {"node.traits", "[str]",
       "the opdef's traits (`msc-codegen ops --traits` lists and explains them), e.g. "
       "`{% if 'unary_math' in node.traits %}`"},
      {"node.parents", "[str]", "producer node names, distinct, in first-use order"},
      {"node.shared_ref", "str",
       "MSC shared_ref (docs/mscgraph.md#shared_ref): the first node that uses the same weight, "
       "\"\" otherwise"},
      {"node.inputs", "[T]",
       "tensor inputs in order: the producers' output tensors (the idents the producers "
       "assigned)"},
      {"node.outputs", "[T]", "output tensors; outputs[k].name is \"<node>:<k>\""},
      {"node.is_output", "bool", "some output is a graph output"},
      {"node.attrs", "{name: value}",
       "every attr the opdef declares, parsed to its type (int, float (may be +-infinity), bool, "
       "str, dtype str, lists), the opdef default when the node lacks it, null for a nullable "
       "attr given as \"\"; attrs the opdef does not declare stay MSC strings"},
      {"node.attrs_raw", "{name: str}",
       "the node's attrs exactly as MSC wrote them, in graph order"},
      {"node.weights", "{role: T}",
       "weight tensors by MSC role (weight, bias, gamma, beta, mean, var, const, ...; "
       "docs/mscgraph.md#weight-roles); optional roles may be absent"},
      {"node.fused_epilogue", "null|{name, ident, optype, attrs}",
       "with backend.yaml fuse_epilogues: the elementwise consumer folded into this node (attrs "
       "typed like node.attrs): emit it as this node's epilogue; null otherwise"},
      {"node.fused_residual", "null|T",
       "with fuse_epilogues.residual: the other operand R of the residual add folded into this "
       "node (the output's shape and dtype): emit the node as epilogue(node + R); null otherwise"},
      {"node.fused_norm", "null|{name, ident, optype, attrs, weights, outputs, keeps_input}",
       "with fuse_epilogues.norms: the norm (e.g. nn.layer_norm) reading this node's last fused "
       "value (after the residual and epilogue), run in its epilogue too: emit it with this node "
       "(its output tensor outputs[0] is its own); keeps_input: that value is read elsewhere too "
       "(a graph output or another reader), so store it as well; null otherwise"},
      {"node.fused_into", "str",
       "\"\" or the name of the producer this node was folded into (emit nothing for it: its "
       "output shares the producer's, except a fused norm's), or of the root of its fused "
       "elementwise chain"},
      {"node.fused_chain", "null|{inputs: [T], steps: [{name, ident, optype, attrs, operands}]}",
       "with backend.yaml fuse_elementwise: the chain this node belongs to (the same object on "
       "every member; null otherwise). Its root (fused_into \"\") emits the whole chain as one "
       "kernel, the other members nothing (their outputs are never stored). inputs: the chain's "
       "distinct outside inputs in first-use order; steps: the members in node order, the root "
       "last, attrs typed like node.attrs; operands [{kind: \"input\"|\"step\", index}] in the "
       "node's input order"},
      {"node.fused_view", "bool",
       "with backend.yaml fuse_views: this node is a split, or a view (reshape, get_item, ...) "
       "of its pieces, that node.fused_into reads in place as a strided view: emit nothing (its "
       "outputs have no bytes)"},
      {"node.input_views", "[null|{base: T, offset, strides}]",
       "with backend.yaml fuse_views: per input, null, or the strided view this node reads it "
       "as instead (inputs[k]'s shape over base's elements: element offset + sum_d i_d * "
       "strides[d]; inputs[k] itself is never stored)"},
      {"node.in_place", "bool",
       "a concat (backend.yaml memory_plan.concat_in_place) whose inputs' producers wrote them "
       "straight into their slices of its output: emit nothing that moves data"},
      {"node.folded", "[str]",
       "names of the nodes the backend's passes folded into this one (removed from the graph; "
       "fold_constant: for a constant it made, every node that went into it, itself included); "
       "present only when a pass folded something"},
      {"node.code", "{section: str}",
       "rendered snippet text per section: in a snippet, the sections rendered before the "
       "current one; in project templates, every section"},
  };
  return kDocs;
}

const std::vector<FieldDoc>& TensorFieldDocs() {
  static const std::vector<FieldDoc> kDocs = {
      {"T.name", "str",
       "MSC tensor name: \"<node>:<k>\" for node outputs, the constant's name for weights; data"},
      {"T.alias", "str", "MSC alias (user-facing name), \"\" when none; data"},
      {"T.dtype", "str",
       "float32, float16, bfloat16, float64, int8, int16, int32, int64, uint8 or bool; of a node "
       "output: the dtype the snippet's result must have (cast to it)"},
      {"T.layout", "str", "axis letters (\"NCHW\", \"OIHW\") or \"\" when unknown"},
      {"T.shape", "[int]",
       "dims; -1 for a dynamic dim; of a node output: the shape the result must have (a snippet "
       "may read sizes from it instead of recomputing them)"},
      {"T.prims", "[str]",
       "[] when static, else per dim the MSC prim name (dynamic) or the literal dim"},
      {"T.ndim", "int", "len(shape) (0 for a scalar)"},
      {"T.numel", "int", "product of shape (1 for 0-d); -1 when a dim is dynamic"},
      {"T.nbytes", "int", "numel * bytes per element (bool: 1); -1 when a dim is dynamic"},
      {"T.dims", "{letter: int}",
       "layout letter -> dim when the layout names every axis once, else {}"},
      {"T.ident", "str",
       "unique identifier: a node output's is its node's ident (\"<ident>_<k>\" for "
       "multi-output nodes), a graph input's its input node's, a weight's is made from its alias "
       "(else name)"},
      {"T.producer", "str", "name of the node producing it (weights: the first node using it)"},
      {"T.producer_ident", "str", "ident of that node"},
      {"T.out_idx", "int", "activations only: which output of the producer (k)"},
      {"T.consumers", "[str]",
       "activations only: names of the nodes reading it, in node order ([] for an unused output)"},
      {"T.is_graph_input", "bool", "a graph input"},
      {"T.is_graph_output", "bool", "a graph output"},
      {"T.is_weight", "bool", "a weight (node.weights value, graph.weights entry)"},
      {"T.key", "str", "weights only: its key in the project's weights.safetensors (MSC name)"},
      {"T.role", "str",
       "weights only: its role in the first node that uses it (a shared weight shows that role "
       "everywhere)"},
      {"T.offset", "int",
       "activations only, memory_plan backends: byte offset of the tensor in the arena (all but "
       "the outputs of constant nodes)"},
  };
  return kDocs;
}

const std::vector<FieldDoc>& GraphFieldDocs() {
  static const std::vector<FieldDoc> kDocs = {
      {"graph.name", "str", "MSC graph name; data"},
      {"graph.ident", "str", "identifier made from name (fallback \"graph\")"},
      {"graph.inputs", "[T]", "graph input tensors in MSC order (the model's input order)"},
      {"graph.outputs", "[T]", "graph output tensors in MSC order"},
      {"graph.nodes", "[N]", "every node in topological order (input nodes included), code filled"},
      {"graph.weights", "[T]", "distinct weight tensors in first-use order"},
      {"graph.optypes", "[str]", "distinct optypes in first-use order"},
      {"graph.dtypes", "[str]",
       "distinct dtypes of the node outputs and weights, in first-use order (a backend imports "
       "what a dtype needs only when the graph has one: numpy's `ml_dtypes` for bfloat16)"},
      {"graph.prims", "[{index, name, ident, optype, parents, attrs}]",
       "MSC's symbolic-shape DAG (docs/mscgraph.md#prim; attrs are MSC strings, ident a Python / "
       "C++ identifier for the prim's value); [] for static graphs"},
      {"graph.memory", "{alignment, peak_bytes, naive_bytes, lower_bound_bytes, tensors}",
       "memory_plan backends only: the arena. peak_bytes: its size; naive_bytes: the sum of all "
       "aligned blocks; lower_bound_bytes: the largest sum of aligned blocks live at one step (no "
       "plan can use less); tensors = [{name, offset, nbytes}] per planned tensor"},
  };
  return kDocs;
}

const std::vector<FieldDoc>& ProjectFieldDocs() {
  static const std::vector<FieldDoc> kDocs = {
      {"graph", "graph", "the graph (fields above), every node.code filled"},
      {"backend.name", "str", "the backend folder name"},
      {"backend.summary", "str", "backend.yaml summary"},
      {"backend.weights", "str",
       "backend.yaml weights: where the weights file is written (\"\" when unset)"},
      {"backend.golden", "str",
       "backend.yaml golden: the folder for --golden data (\"\" when unset)"},
      {"options.has_golden", "bool",
       "generate was given --golden (else there is no golden folder)"},
      {"options.golden_files", "[str]",
       "extra *.safetensors file names copied from --golden besides inputs / outputs, sorted"},
      {"options.precision.name", "str", "generate --precision: fp32 (default) or fp16"},
      {"options.precision.atol", "float",
       "golden tolerance of the reduced precision (backend.yaml precision.<name>.atol): use it in "
       "the golden check and say so in the project's README; absent for fp32"},
      {"options.precision.rtol", "float", "as atol: precision.<name>.rtol; absent for fp32"},
      {"options.precision.weights", "[str]",
       "weight tensors stored as float16 (sorted names; their dtype in graph.weights and "
       "node.weights is float16); absent for fp32"},
      {"options.precision.activations", "[str]",
       "activation tensors stored as float16 (backend.yaml precision.<name>.activations; graph "
       "order); absent for fp32"},
  };
  return kDocs;
}

const FieldDoc* FindFieldDoc(const std::vector<FieldDoc>& docs, const std::string& key) {
  for (const auto& d : docs) {
    const size_t dot = d.path.rfind('.');
    if ((dot == std::string::npos ? d.path : d.path.substr(dot + 1)) == key) return &d;
  }
  return nullptr;
}

namespace {

/// A table cell: '|' escaped, '<' as an entity (Markdown would read "<section>" as HTML).
std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? "\\|" : c == '<' ? "&lt;" : std::string(1, c);
  return out;
}

void Table(const std::string& title, const std::string& intro, const std::vector<FieldDoc>& docs,
           std::string& out) {
  out += "\n## " + title + "\n\n" + intro + "\n\n| field | type | meaning |\n|---|---|---|\n";
  for (const auto& d : docs)
    out += "| `" + d.path + "` | " + Cell(d.type) + " | " + Cell(d.doc) + " |\n";
}

void Dump(const nlohmann::ordered_json& v, int depth, std::string& out) {
  const std::string pad(2 * (depth + 1), ' '), close(2 * depth, ' ');
  if (v.is_object()) {
    if (v.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += (first ? "" : ",\n") + pad;
      first = false;
      out += nlohmann::ordered_json(it.key()).dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace);
      out += ": ";
      Dump(it.value(), depth + 1, out);
    }
    out += "\n" + close + "}";
  } else if (v.is_array()) {
    const bool flat =
        std::none_of(v.begin(), v.end(), [](const auto& x) { return x.is_structured(); });
    if (flat) {  // [] and lists of scalars (shapes, attr values) on one line
      out += "[";
      for (size_t i = 0; i < v.size(); ++i) {
        out += i ? ", " : "";
        Dump(v[i], depth + 1, out);
      }
      out += "]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < v.size(); ++i) {
      out += (i ? ",\n" : "") + pad;
      Dump(v[i], depth + 1, out);
    }
    out += "\n" + close + "]";
  } else if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    out += std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
  } else {
    out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

std::string ContextReferenceMarkdown() {
  std::string out =
      "<!-- Generated by `msc-codegen context --reference` from generator/tools/context_doc.cc; "
      "do not edit: tests/cli/test_cli.py fails when this file and the command differ. -->\n"
      "# The template context\n\n"
      "What `generate` renders templates with, built once per graph by "
      "`generator/emit/context.cc` from the graph and its analyses (`generator/analyses`: fusion, "
      "memory plan). To see it for a real graph: `msc-codegen context G.json "
      "--node NAME --backend B [--section S]` (the object one snippet is rendered with) and "
      "`msc-codegen context G.json --project --backend B` (the project templates' object).\n";
  Table("What a snippet sees", "Each op snippet is rendered once per `op_sections` entry.",
        SnippetFieldDocs(), out);
  Table("What a project template sees", "Each `files` entry of backend.yaml is rendered once.",
        ProjectFieldDocs(), out);
  Table("Graph", "Project templates only.", GraphFieldDocs(), out);
  Table("Node (N)", "`node` in a snippet, `graph.nodes[i]` in a project template.", NodeFieldDocs(),
        out);
  Table("Tensor (T)",
        "`node.inputs[i]`, `node.outputs[k]`, `node.weights.<role>`, `graph.inputs`, "
        "`graph.outputs`, `graph.weights`. Keys a graph's JSON carries on a tensor beyond MSC's "
        "six are passed through as well.",
        TensorFieldDocs(), out);
  return out;
}

std::string DumpContextJson(const nlohmann::ordered_json& value) {
  std::string out;
  Dump(value, 0, out);
  return out + "\n";
}

}  // namespace msc::tools
