// The ONNX import driver: load + check, shape inference with import-time folding, then one
// converter call per remaining node (see onnx_import.h for the naming rules).
#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <onnx/checker.h>
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <boost/filesystem.hpp>

#include "generator/common/utf8.h"
#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/convert.h"
#include "generator/frontend/onnx/inference_guard.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/frontend/onnx/tensor_proto.h"
#include "generator/ir/attr_format.h"
#include "generator/weights/bytes.h"

namespace msc::frontend::onnx_import {

namespace fs = boost::filesystem;
using ir::Json;
using weights::Tensor;

namespace {

constexpr int64_t kMinIrVersion = 3;

/// The newest IR version and default-domain opset of the ONNX library the importer is built on
/// (ONNX 1.23.2: IR 14, opset 28; Debian's 1.12 fallback: IR 8, opset 17). Older models are read
/// by the converters' per-opset rules; newer ones would need schemas this library lacks.
int64_t MaxIrVersion() { return onnx::Version::IR_VERSION; }
int64_t MaxOpset() {
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
      .Map()
      .at(onnx::ONNX_DOMAIN)
      .second;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

bool DefaultDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

/// The schema of default-domain `op_type` at `opset` when ONNX defines the op by a function body
/// of other ops (fixed, or built from the node's attributes and input types), else nullptr.
const onnx::OpSchema* FunctionSchema(const std::string& op_type, int64_t opset) {
  const onnx::OpSchema* s =
      onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), onnx::ONNX_DOMAIN);
  return s && (s->HasFunction() || s->HasContextDependentFunction()) ? s : nullptr;
}

/// MSC's name hint of an optype (SetExprName names a call after its op, a composite after its
/// anchor call).
std::string HintOf(const std::string& optype) {
  if (optype == "msc.conv2d_bias") return "conv2d";
  if (optype == "msc.conv1d_bias") return "conv1d";
  if (optype == "msc.linear" || optype == "msc.linear_bias" || optype == "msc.matmul")
    return "matmul";
  if (optype == "msc.embedding") return "take";
  auto dot = optype.rfind('.');
  return dot == std::string::npos ? optype : optype.substr(dot + 1);
}

/// Throws when a name, symbolic dimension (dim_param) or string attribute of `graph` (not its
/// subgraphs, which no converter takes) is not well-formed UTF-8: onnx.proto declares them UTF-8
/// but proto2 does not check, and they become MSC names, aliases, prims and attrs that graph.json
/// must hold (found by tests/fuzz/fuzz_onnx). `path` names the file.
void CheckUtf8(const std::string& path, const onnx::GraphProto& graph) {
  auto check = [&](const std::string& s, const std::string& what) {
    const size_t bad = FindInvalidUtf8(s);
    if (bad != std::string::npos)
      throw Error(path + ": " + what + " is not valid UTF-8 (byte " + HexByte(s, bad) +
                  " at offset " + std::to_string(bad) + ")");
  };
  check(graph.name(), "the graph name");
  auto values = [&](const auto& list, const std::string& what) {
    for (int i = 0; i < list.size(); ++i)
      check(list.Get(i).name(), what + " " + std::to_string(i) + " name");
  };
  values(graph.initializer(), "initializer");
  // Value infos: the name and every symbolic dimension (dim_param becomes a graph prim's name).
  auto value_infos = [&](const auto& list, const std::string& what) {
    values(list, what);
    for (int i = 0; i < list.size(); ++i) {
      const auto& type = list.Get(i).type();
      if (!type.has_tensor_type() || !type.tensor_type().has_shape()) continue;
      const auto& shape = type.tensor_type().shape();
      for (int k = 0; k < shape.dim_size(); ++k)
        check(shape.dim(k).dim_param(),
              what + " " + std::to_string(i) + " dimension " + std::to_string(k) + " dim_param");
    }
  };
  value_infos(graph.input(), "graph input");
  value_infos(graph.output(), "graph output");
  value_infos(graph.value_info(), "value_info");
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    std::string where = "node " + std::to_string(i);
    check(node.op_type(), where + " op_type");
    where += " (" + node.op_type() + ")";
    check(node.name(), where + " name");
    check(node.domain(), where + " domain");
    for (int k = 0; k < node.input_size(); ++k)
      check(node.input(k), where + " input " + std::to_string(k));
    for (int k = 0; k < node.output_size(); ++k)
      check(node.output(k), where + " output " + std::to_string(k));
    for (const auto& a : node.attribute()) {
      check(a.name(), where + " attribute name");
      const std::string attr = where + " attribute " + Quote(a.name());
      check(a.s(), attr);
      for (const auto& s : a.strings()) check(s, attr);
    }
  }
}

/// Whether the first byte that is not ASCII whitespace is '{' or '[': JSON (an MSCGraph), never an
/// ONNX model, whose first byte is a protobuf field tag (0x08: ir_version). Protobuf parses some
/// such text as a ModelProto all the same (unknown fields); IsOnnxFile and the importer both ask
/// this, so they agree on every file (found by tests/fuzz/fuzz_onnx).
bool StartsLikeJson(const uint8_t* data, uint64_t size) {
  for (uint64_t i = 0; i < size; ++i)
    if (!std::isspace(data[i])) return data[i] == '{' || data[i] == '[';
  return false;
}

}  // namespace

class Importer {
 public:
  Importer(const std::string& path, const ImportOptions& options) : path_(path), options_(options) {
    model_dir_ = fs::path(path).parent_path().string();
    if (model_dir_.empty()) model_dir_ = ".";
  }

  ImportResult Run();

  // --- used by ConvertContext
  std::string UniqueName(const std::string& hint) {
    std::string name = hint.empty() ? "node" : hint;
    if (used_.insert(name).second) return name;
    for (int64_t& k = counters_[name];;) {
      std::string cand = name + "_" + std::to_string(++k);
      if (used_.insert(cand).second) return cand;
    }
  }
  ir::MSCTensor& TensorInfo(const std::string& tensor) {
    auto it = tensor_pos_.find(tensor);
    if (it == tensor_pos_.end()) throw Error("internal: unknown MSC tensor " + tensor);
    return result_.graph.nodes[it->second.first].outputs[it->second.second];
  }
  std::vector<std::string> AddNode(const std::string& optype,
                                   const std::vector<std::string>& inputs,
                                   const ir::OrderedMap<std::string>& attrs,
                                   const std::vector<OutSpec>& outputs,
                                   const std::vector<WeightSpec>& weights,
                                   const std::string& hint) {
    ir::MSCJoint n;
    n.index = static_cast<int64_t>(result_.graph.nodes.size());
    n.name = UniqueName(hint.empty() ? HintOf(optype) : hint);
    n.optype = optype;
    for (const auto& in : inputs) {
      if (!ir::SplitTensorName(in)) throw Error("internal: bad tensor name " + in);
      n.inputs.push_back(in);
    }
    n.parents = ir::ParentsOf(n.inputs);
    for (size_t k = 0; k < outputs.size(); ++k) {
      ir::MSCTensor t;
      t.name = n.name + ":" + std::to_string(k);
      t.dtype = outputs[k].dtype;
      t.shape = outputs[k].shape;
      t.prims = outputs[k].prims;
      n.outputs.push_back(t);
    }
    n.attrs = attrs;
    for (const auto& w : weights) {
      ir::MSCTensor t;
      t.name = UniqueName("const");
      t.alias = w.alias.empty() ? n.name + "." + w.role : w.alias;
      t.dtype = w.data.dtype;
      t.shape = w.data.shape;
      t.layout = w.layout;
      result_.weights[t.name] = w.data;
      n.weights.emplace_back(w.role, t);
    }
    std::vector<std::string> names;
    const size_t idx = result_.graph.nodes.size();
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      tensor_pos_[n.outputs[k].name] = {idx, k};
      names.push_back(n.outputs[k].name);
    }
    result_.graph.nodes.push_back(std::move(n));
    return names;
  }
  /// A `constant` node for `value` (MSC: weight `const`, `scalar` attr when 0-d).
  std::string AddConstant(const Tensor& value, const std::string& alias) {
    ir::OrderedMap<std::string> attrs;
    if (value.shape.empty()) {
      // Float: beyond float's range is +-inf, as IEEE rounds (a plain cast is undefined there);
      // integers are read as integers (found by tests/fuzz/fuzz_onnx).
      if (value.dtype.rfind("float", 0) == 0 || value.dtype == "bfloat16") {
        const double v = TensorDoubles(value).at(0);
        const float f =
            std::fabs(v) > FLT_MAX ? (v > 0 ? INFINITY : -INFINITY) : static_cast<float>(v);
        attrs.emplace_back("scalar", ir::AttrFloat(f));
      } else {
        const auto ints = TensorInts(value);
        if (!ints || ints->empty())
          throw Error("constant " + Quote(alias) + ": a scalar of dtype " + value.dtype +
                      " has no MSC scalar form");
        attrs.emplace_back("scalar", ir::AttrInt(ints->at(0)));
      }
    }
    const std::string name = UniqueName("const");
    used_.erase(name);  // the node takes the name; its weight gets the same name, as MSC does
    auto out = AddNode("constant", {}, attrs, {{value.dtype, value.shape, {}}}, {}, name);
    ir::MSCJoint& node = result_.graph.nodes.back();
    ir::MSCTensor w;
    w.name = node.name;
    w.alias = alias.empty() ? node.name : alias;
    w.dtype = value.dtype;
    w.shape = value.shape;
    result_.weights[w.name] = value;
    node.weights.emplace_back("const", w);
    return out[0];
  }
  Value& Val(const std::string& onnx_name) {
    auto it = values_.find(onnx_name);
    if (it == values_.end())
      throw Error(path_ + ": value '" + onnx_name + "' is used before it is defined");
    return it->second;
  }
  /// The MSC tensor of an ONNX value, materializing a constant once.
  std::string TensorOf(const std::string& onnx_name) {
    Value& v = Val(onnx_name);
    if (v.items)
      throw Unsupported("'" + onnx_name +
                        "' is a sequence, which has no MSC type: only SequenceAt, SequenceLength, "
                        "SequenceInsert, SequenceErase and ConcatFromSequence can take it");
    if (v.tensor.empty()) {
      if (!v.constant)
        throw Error("internal: value '" + onnx_name + "' has neither tensor nor constant");
      v.tensor = AddConstant(*v.constant, onnx_name);
    }
    return v.tensor;
  }
  OutSpec StaticInfo(const std::string& onnx_name, const std::string& where) const;
  bool ShapeKnown(const std::string& name) const;
  std::string SymbolOrigin(const std::string& name) const;
  void SetValue(const std::string& onnx_name, Value v) { values_[onnx_name] = std::move(v); }
  const std::string& path() const { return path_; }

 private:
  void Load();
  void ApplyInputShapes();
  void InferAndFold();
  void ReadValueTypes();
  std::optional<std::vector<Tensor>> TryFold(const onnx::NodeProto& node);
  bool NeedsBody(const onnx::NodeProto& node) const;
  bool ExpandBody(const onnx::NodeProto& node,
                  google::protobuf::RepeatedPtrField<onnx::NodeProto>* into);
  void CheckOpTypes(bool before_folding) const;
  void AddInputs();
  void ConvertNodes();
  void AddOutputs();

  std::string path_, model_dir_;
  ImportOptions options_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  std::map<std::string, onnx::TypeProto> types_;
  std::map<std::string, std::shared_ptr<const Tensor>> known_;
  std::map<std::string, Value> values_;
  std::set<std::string> used_;
  std::map<std::string, int64_t> counters_;
  std::map<std::string, std::pair<size_t, size_t>> tensor_pos_;
  std::set<std::string> input_symbols_;
  int64_t expanded_ = 0;
  ImportResult result_;
};

void Importer::Load() {
  {
    // Parsed from the mapped file: no intermediate copy of a large model's bytes.
    const weights::MappedFile file(path_, "ONNX model");
    if (file.size() > static_cast<uint64_t>(std::numeric_limits<int>::max()))
      throw Error(path_ + ": " + std::to_string(file.size()) +
                  " bytes is past protobuf's 2 GiB limit for one message; save the weights as "
                  "ONNX external data");
    if (StartsLikeJson(file.data(), file.size()))
      throw Error(path_ +
                  ": not an ONNX model: it starts like JSON (an MSCGraph is read by generate, "
                  "validate and inspect, not by import)");
    if (!model_.ParseFromArray(file.data(), static_cast<int>(file.size())) || !model_.has_graph())
      throw Error(path_ + ": not an ONNX model (cannot parse an onnx.ModelProto with a graph)");
  }
  CheckUtf8(path_, model_.graph());
  // ONNX's checker accepts it, but an MSCGraph needs an output (found by tests/fuzz/fuzz_onnx).
  if (model_.graph().output_size() == 0)
    throw Error(path_ +
                ": the ONNX graph has no outputs (graph.output is empty): nothing to compute");
  if (model_.ir_version() < kMinIrVersion || model_.ir_version() > MaxIrVersion())
    throw Error(path_ + ": ONNX IR version " + std::to_string(model_.ir_version()) +
                " is not supported (supported: " + std::to_string(kMinIrVersion) + "-" +
                std::to_string(MaxIrVersion()) + ")");
  for (const auto& imp : model_.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset_ = imp.version();
  if (opset_ == 0) {
    std::string domains;
    for (const auto& imp : model_.opset_import())
      domains += (domains.empty() ? "" : ", ") + Quote(imp.domain());
    throw Error(path_ + ": the model imports no default-domain (ai.onnx) opset, only " +
                (domains.empty() ? std::string("none") : domains) +
                ": ops of other domains have no MSC optypes");
  }
  if (opset_ < 1 || opset_ > MaxOpset())
    throw Error(path_ + ": default-domain opset " + std::to_string(opset_) +
                " is not supported (supported: 1-" + std::to_string(MaxOpset()) + ")");
  CheckConstantPayloads(path_, model_.graph());  // before the checker: names the node
  try {
    onnx::checker::check_model(model_);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw Error(path_ + ": ONNX checker: " + what.substr(0, what.find("\n\n")));
  }
  // ONNX's shape inference divides by `strides` (convPoolShapeInference: Conv, MaxPool,
  // AveragePool, LpPool); a 0 there would kill the process with SIGFPE, and the checker lets it by.
  for (const auto& node : model_.graph().node())
    for (const auto& a : node.attribute())
      if (a.name() == "strides")
        for (int64_t s : a.ints())
          if (s < 1)
            throw Error(path_ + ": node " + NodeLabel(node) + ": strides must be >= 1, got " +
                        std::to_string(s));
  if (model_.ir_version() < 4) model_.set_ir_version(4);  // initializers need not be inputs
}

void Importer::ApplyInputShapes() {
  std::set<std::string> inits;
  for (const auto& init : model_.graph().initializer()) inits.insert(init.name());
  std::set<std::string> seen;
  for (auto& in : *model_.mutable_graph()->mutable_input()) {
    if (inits.count(in.name())) continue;
    auto it = options_.input_shapes.find(in.name());
    if (it == options_.input_shapes.end()) continue;
    seen.insert(in.name());
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    const auto& dims = it->second;
    if (shape->dim_size() != 0 && shape->dim_size() != static_cast<int>(dims.size()))
      throw Error(path_ + ": --input-shape " + in.name() + " has " + std::to_string(dims.size()) +
                  " dims, the model's input has " + std::to_string(shape->dim_size()));
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  for (const auto& [name, dims] : options_.input_shapes)
    if (!seen.count(name)) {
      std::string names;
      for (const auto& in : model_.graph().input())
        if (!inits.count(in.name())) names += (names.empty() ? "" : ", ") + Quote(in.name());
      throw Error(path_ + ": --input-shape names '" + name +
                  "', which is not a graph input (inputs: " + names + ")");
    }
}

void Importer::ReadValueTypes() {
  types_.clear();
  const auto& g = model_.graph();
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const auto& vi : *list)
      if (vi.has_type()) types_[vi.name()] = vi.type();
}

/// Whether every dim of `name` is known after inference (a number, or a graph input's symbol).
bool Importer::ShapeKnown(const std::string& name) const {
  auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type() || !it->second.tensor_type().has_shape())
    return false;
  for (const auto& d : it->second.tensor_type().shape().dim())
    if (!d.has_dim_value() && !(d.has_dim_param() && input_symbols_.count(d.dim_param())))
      return false;
  return true;
}

/// Where a dim that is neither a number nor a graph input's symbol comes from, for the error:
/// the first node upstream of `name` whose inputs all have known shapes -- its output's shape
/// depends on the values of inputs that are not known at import (not constants, not folded).
std::string Importer::SymbolOrigin(const std::string& name) const {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& node : model_.graph().node())
    for (const auto& out : node.output()) producer[out] = &node;
  std::set<std::string> seen;
  std::string value = name;
  for (;;) {
    auto it = producer.find(value);
    if (it == producer.end() || !seen.insert(value).second) break;
    const onnx::NodeProto& node = *it->second;
    std::string next;
    for (const auto& in : node.input())
      if (!in.empty() && !known_.count(in) && !ShapeKnown(in)) next = next.empty() ? in : next;
    if (!next.empty()) {
      value = next;
      continue;
    }
    std::string unknown;
    for (int k = 0; k < node.input_size(); ++k)
      if (!node.input(k).empty() && !known_.count(node.input(k)))
        unknown +=
            (unknown.empty() ? "" : ", ") + std::to_string(k) + " (" + Quote(node.input(k)) + ")";
    return ": it follows from the values of node " + NodeLabel(node) +
           (unknown.empty()
                ? std::string("'s inputs")
                : "'s input" + std::string(unknown.find(',') == std::string::npos ? " " : "s ") +
                      unknown) +
           ", which are not known at import (not constants, not computable from constants)";
  }
  return "; pass --input-shape for the graph inputs";  // it comes from a graph input
}

OutSpec Importer::StaticInfo(const std::string& name, const std::string& where) const {
  auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type())
    throw Unsupported(where + ": the type of '" + name +
                      "' is unknown after ONNX shape inference (not a tensor, or not inferable)");
  const auto& tt = it->second.tensor_type();
  OutSpec o;
  o.dtype = DtypeFromOnnx(tt.elem_type());
  if (o.dtype.empty())
    throw Unsupported(where + ": '" + name + "' has element type " + OnnxTypeName(tt.elem_type()) +
                      ", which has no MSC dtype");
  if (!tt.has_shape())
    throw Unsupported(where + ": the rank of '" + name +
                      "' is unknown after ONNX shape inference; pass --input-shape for the inputs");
  bool symbolic = false;
  int64_t numel = 1;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    if (d.has_dim_value()) {
      // Converters compute with these dims in int64 (found by tests/fuzz/fuzz_onnx).
      if (d.dim_value() < 0 || __builtin_mul_overflow(numel, d.dim_value(), &numel)) {
        std::string dims;
        for (const auto& e : tt.shape().dim())
          dims += (dims.empty() ? "" : ", ") +
                  (e.has_dim_value() ? std::to_string(e.dim_value()) : std::string("?"));
        throw Unsupported(
            where + ": '" + name + "' has shape [" + dims + "], " +
            (d.dim_value() < 0 ? "a negative dim" : "more elements than int64 can count"));
      }
      o.shape.push_back(d.dim_value());
      o.prims.push_back(std::to_string(d.dim_value()));
    } else if (d.has_dim_param() && input_symbols_.count(d.dim_param())) {
      o.shape.push_back(-1);
      o.prims.push_back(d.dim_param());
      symbolic = true;
    } else {
      throw Unsupported(where + ": dim " + std::to_string(k) + " of '" + name + "' is " +
                        (d.has_dim_param()
                             ? "the symbol '" + d.dim_param() + "', computed at run time"
                             : "unknown") +
                        " after ONNX shape inference" + SymbolOrigin(name));
    }
  }
  // Validate counts bytes too (found by tests/fuzz/fuzz_onnx: a [2^61] float input).
  int64_t bytes = 0;
  if (__builtin_mul_overflow(numel, weights::DtypeItemSize(o.dtype), &bytes))
    throw Unsupported(where + ": '" + name + "' has shape " + weights::FormatShape(o.shape) +
                      ", more bytes than int64 can count");
  if (!symbolic) o.prims.clear();
  return o;
}

std::optional<std::vector<Tensor>> Importer::TryFold(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  if (!(node.domain().empty() || node.domain() == "ai.onnx")) return std::nullopt;
  NodeAttrs attrs(node);
  if (op == "Constant") {
    if (const onnx::TensorProto* t = attrs.Tensor("value"))
      return std::vector<Tensor>{
          TensorFromProto(*t, model_dir_, path_ + ": node " + NodeLabel(node))};
    if (attrs.Has("value_float"))
      return std::vector<Tensor>{MakeTensor("float32", {}, {attrs.Float("value_float", 0)})};
    if (attrs.Has("value_int"))
      return std::vector<Tensor>{MakeIntTensor("int64", {}, {attrs.Int("value_int", 0)})};
    if (attrs.Has("value_floats")) {
      auto v = attrs.Floats("value_floats");
      return std::vector<Tensor>{
          MakeTensor("float32", {static_cast<int64_t>(v.size())}, {v.begin(), v.end()})};
    }
    if (attrs.Has("value_ints")) {
      auto v = attrs.Ints("value_ints");
      return std::vector<Tensor>{MakeIntTensor("int64", {static_cast<int64_t>(v.size())}, v)};
    }
    return std::nullopt;  // sparse / string constants: the converter reports them
  }
  if ((op == "Shape" || op == "Size") && node.input_size() == 1 && !known_.count(node.input(0))) {
    auto it = types_.find(node.input(0));
    if (it == types_.end() || !it->second.tensor_type().has_shape()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const auto& d : it->second.tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      dims.push_back(d.dim_value());
    }
    Tensor fake{"bool", dims, {}};  // only the shape is read
    int64_t n = 1;  // element count: 0 with a 0 dim; not folded when it does not fit in int64
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
      n = 0;
    } else {
      for (int64_t d : dims)
        if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
    }
    if (n > kMaxFoldElements) {
      if (op == "Size") return std::vector<Tensor>{MakeIntTensor("int64", {}, {n})};
      fake.shape = dims;
      NodeAttrs a(node);
      int64_t rank = static_cast<int64_t>(dims.size()), s = a.Int("start", 0),
              e = a.Int("end", rank);
      if (s < 0) s += rank;
      if (e < 0) e += rank;
      s = std::clamp<int64_t>(s, 0, rank);
      e = std::clamp<int64_t>(e, s, rank);
      std::vector<int64_t> v(dims.begin() + s, dims.begin() + e);
      return std::vector<Tensor>{MakeIntTensor("int64", {static_cast<int64_t>(v.size())}, v)};
    }
    fake.data.assign(static_cast<size_t>(n), 0);
    return FoldNode(node, {&fake}, opset_);
  }
  if (!CanFold(op)) return std::nullopt;
  std::vector<const Tensor*> ins;
  for (const auto& name : node.input()) {
    if (name.empty()) {
      ins.push_back(nullptr);
      continue;
    }
    auto it = known_.find(name);
    if (it == known_.end()) return std::nullopt;
    ins.push_back(it->second.get());
  }
  return FoldNode(node, ins, opset_);
}

/// A default-domain node that no converter takes (see PartialConverters) but ONNX defines by a
/// function body.
bool Importer::NeedsBody(const onnx::NodeProto& node) const {
  if (!DefaultDomain(node)) return false;
  const std::string& op = node.op_type();
  if (Converters().count(op)) {
    auto it = PartialConverters().find(op);
    if (it == PartialConverters().end()) return false;
    const TypeOf type_of = [this](const std::string& name) -> const onnx::TypeProto* {
      auto t = types_.find(name);
      return t == types_.end() ? nullptr : &t->second;
    };
    if (it->second(node, NodeAttrs(node), opset_, type_of)) return false;
  }
  return FunctionSchema(op, opset_) != nullptr;
}

/// Appends ONNX's function body of `node` at the model's opset to `into` (ONNX's own expansion,
/// onnx::FunctionExpandHelper: inputs, outputs and attributes bound, internal values renamed
/// "Func_<node>_<name>"). A body built from the node's context needs every input's type; returns
/// false (node kept, reported unsupported later) when one is unknown or ONNX cannot build it.
bool Importer::ExpandBody(const onnx::NodeProto& node,
                          google::protobuf::RepeatedPtrField<onnx::NodeProto>* into) {
  const onnx::OpSchema* schema = FunctionSchema(node.op_type(), opset_);
  onnx::FunctionProto body;
  try {
    const onnx::FunctionProto* fixed = nullptr;
    if (schema->HasFunction()) {
#if __has_include(<onnx/inliner/inliner.h>)  // ONNX >= 1.16: bodies per opset version
      fixed = schema->GetFunction(static_cast<int>(opset_));
#else
      fixed = schema->GetFunction();
#endif
    }
    if (fixed) {
      body = *fixed;
    } else if (schema->HasContextDependentFunction()) {
      std::vector<onnx::TypeProto> types;
      for (const auto& in : node.input()) {
        if (in.empty()) {
          types.emplace_back();
          continue;
        }
        auto it = types_.find(in);
        if (it == types_.end()) return false;
        types.push_back(it->second);
      }
      onnx::FunctionBodyBuildContextImpl ctx(node, types);
#if __has_include(<onnx/inliner/inliner.h>)
      if (!schema->BuildContextDependentFunction(ctx, body, static_cast<int>(opset_))) return false;
#else
      if (!schema->BuildContextDependentFunction(ctx, body)) return false;
#endif
    } else {
      return false;
    }
    // A unique node name: FunctionExpandHelper names the body's internal values after it.
    onnx::NodeProto named = node;
    named.set_name((node.name().empty() ? node.op_type() : node.name()) + "__" +
                   std::to_string(++expanded_));
    onnx::GraphProto g;
    onnx::FunctionExpandHelper(named, body, g, "");
    for (auto& n : *g.mutable_node()) {
      // FunctionExpandHelper binds an attribute the node omits to the schema's default, and an
      // optional attribute without one (SoftmaxCrossEntropyLoss's ignore_index) to an empty,
      // untyped AttributeProto that reads as 0: dropped, the attribute stays absent.
      auto* attrs = n.mutable_attribute();
      for (int k = attrs->size() - 1; k >= 0; --k)
        if (attrs->Get(k).type() == onnx::AttributeProto::UNDEFINED) attrs->DeleteSubrange(k, 1);
      *into->Add() = std::move(n);
    }
  } catch (const std::exception& e) {
    throw Error(path_ + ": node " + NodeLabel(node) + ": ONNX's function body of " +
                node.op_type() + "-" + std::to_string(opset_) + " cannot be expanded: " + e.what());
  }
  return true;
}

void Importer::InferAndFold() {
  for (const auto& init : model_.graph().initializer())
    known_[init.name()] = std::make_shared<Tensor>(
        TensorFromProto(init, model_dir_, path_ + ": initializer '" + init.name() + "'"));
  // The model's own value_info; what inference adds is dropped before it runs again, since it
  // keeps the symbols it made up (unk__N) for values that folding has since made known.
  const auto declared = model_.graph().value_info();
  for (int iteration = 0; iteration < 64; ++iteration) {
    *model_.mutable_graph()->mutable_value_info() = declared;
    try {
      onnx::ShapeInferenceOptions opts(false, 0, true);
      onnx::shape_inference::InferShapes(model_, GuardedSchemaRegistry(), opts);
    } catch (const std::exception& e) {
      throw Error(path_ + ": ONNX shape inference failed: " + std::string(e.what()));
    }
    ReadValueTypes();
    bool folded_any = false;
    onnx::GraphProto* g = model_.mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (const auto& node : g->node()) {
      std::optional<std::vector<Tensor>> r;
      try {
        r = TryFold(node);
      } catch (const Unsupported&) {
        throw;
      } catch (const Error& e) {
        throw Error(path_ + ": " + e.what());
      }
      if (!r || static_cast<int>(r->size()) < node.output_size()) {
        if (NeedsBody(node) && ExpandBody(node, &kept)) {
          folded_any = true;  // the body's nodes need inference (and may fold) in turn
          continue;
        }
        *kept.Add() = node;
        continue;
      }
      folded_any = true;
      for (int k = 0; k < node.output_size(); ++k) {
        if (node.output(k).empty()) continue;
        known_[node.output(k)] = std::make_shared<Tensor>((*r)[k]);
        onnx::TensorProto* init = g->add_initializer();
        *init = TensorToProto((*r)[k]);
        init->set_name(node.output(k));
      }
    }
    g->mutable_node()->Swap(&kept);
    if (!folded_any) break;
  }
}

void Importer::AddInputs() {
  std::set<std::string> inits;
  for (const auto& init : model_.graph().initializer()) inits.insert(init.name());
  for (const auto& in : model_.graph().input()) {
    if (inits.count(in.name())) continue;
    const auto& tt = in.type().tensor_type();
    if (!in.type().has_tensor_type())
      throw Error(path_ + ": graph input '" + in.name() +
                  "' is not a tensor (sequences, maps and "
                  "optionals have no MSC equivalent)");
    for (const auto& d : tt.shape().dim())
      if (d.has_dim_param()) input_symbols_.insert(d.dim_param());
  }
  for (const auto& in : model_.graph().input()) {
    if (inits.count(in.name())) continue;
    OutSpec o;
    try {
      o = StaticInfo(in.name(), "graph input '" + in.name() + "'");
    } catch (const Unsupported& e) {
      throw Error(path_ + ": " + e.what());
    }
    const std::string node_name = UniqueName(in.name());
    used_.erase(node_name);
    auto out = AddNode("input", {}, {}, {o}, {}, node_name);
    TensorInfo(out[0]).alias = in.name();
    result_.graph.inputs.push_back(out[0]);
    Value v;
    v.tensor = out[0];
    v.dtype = o.dtype;
    v.shape = o.shape;
    v.prims = o.prims;
    values_[in.name()] = v;
    for (int k = 0; k < in.type().tensor_type().shape().dim_size(); ++k) {
      const auto& d = in.type().tensor_type().shape().dim(k);
      if (!d.has_dim_param()) continue;
      bool exists = false;
      for (const auto& p : result_.graph.prims) exists = exists || p.name == d.dim_param();
      if (exists) continue;
      ir::MSCPrim p;
      p.index = static_cast<int64_t>(result_.graph.prims.size());
      p.name = d.dim_param();
      p.optype = "shape";
      p.attrs = {{"producer", node_name}, {"out_idx", "0"}, {"dim", std::to_string(k)}};
      result_.graph.prims.push_back(p);
    }
  }
  for (const auto& [name, t] : known_) {
    Value v;
    v.dtype = t->dtype;
    v.shape = t->shape;
    v.constant = t;
    values_[name] = v;
  }
}

/// Throws one error listing every op type of the graph that has no converter, with its nodes.
/// Before constant folding (`before_folding`) an op type the folder evaluates also passes, since
/// its nodes may fold away; the check then runs before ONNX's shape inference, so that only the
/// inference functions of op types the importer takes (audited, see inference_guard.h) ever see the
/// model.
void Importer::CheckOpTypes(bool before_folding) const {
  const ConverterMap& converters = Converters();
  std::map<std::string, std::vector<std::string>> missing;
  for (int i = 0; i < model_.graph().node_size(); ++i) {
    const onnx::NodeProto& node = model_.graph().node(i);
    const bool default_domain = DefaultDomain(node);
    if (default_domain && (converters.count(node.op_type()) ||
                           (before_folding && (CanFold(node.op_type()) ||
                                               FunctionSchema(node.op_type(), opset_) != nullptr))))
      continue;
    const std::string type =
        default_domain ? node.op_type() : node.domain() + "::" + node.op_type();
    // A node may have neither name nor outputs (found by tests/fuzz/fuzz_onnx): its position.
    missing[type].push_back(!node.name().empty() ? Quote(node.name())
                            : node.output_size() > 0
                                ? Quote(node.output(0))
                                : Quote("#" + std::to_string(i)) + " (no name, no outputs)");
  }
  if (!missing.empty()) {
    std::string msg = path_ + ": " + std::to_string(missing.size()) + " unsupported ONNX op type" +
                      (missing.size() == 1 ? "" : "s") + " (opset " + std::to_string(opset_) + "):";
    for (const auto& [type, nodes] : missing) {
      msg += "\n  " + type + ": node" + (nodes.size() == 1 ? " " : "s ");
      for (size_t k = 0; k < nodes.size() && k < 8; ++k) msg += (k ? ", " : "") + nodes[k];
      if (nodes.size() > 8) msg += ", ... (" + std::to_string(nodes.size()) + " in all)";
    }
    throw Error(msg);
  }
}

void Importer::ConvertNodes() {
  CheckOpTypes(/*before_folding=*/false);
  const ConverterMap& converters = Converters();
  std::vector<std::string> problems;
  for (const auto& node : model_.graph().node()) {
    bool skip = false;
    for (const auto& in : node.input())
      if (!in.empty() && values_.count(in) && values_.at(in).failed) skip = true;
    if (!skip) {
      try {
        ConvertContext ctx(*this, node, opset_);
        // A node its converter does not take was meant to become ONNX's function body.
        if (NeedsBody(node))
          ctx.Fail(
              "these attributes / inputs have no MSC expression, and ONNX's function body "
              "could not be built (an input's type is unknown after shape inference)");
        converters.at(node.op_type())(ctx);
        for (const auto& out : node.output())
          if (!out.empty() && !values_.count(out))
            throw Error("internal: converter of " + NodeLabel(node) + " left '" + out +
                        "' unbound");
        continue;
      } catch (const Unsupported& e) {
        problems.push_back(e.what());
      }
    }
    for (const auto& out : node.output()) {
      Value v;
      v.failed = true;
      values_[out] = v;
    }
  }
  if (!problems.empty()) {
    std::string msg = path_ + ": " + std::to_string(problems.size()) + " node" +
                      (problems.size() == 1 ? "" : "s") +
                      " cannot be imported (unsupported attribute "
                      "or input):";
    for (const auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
}

void Importer::AddOutputs() {
  for (const auto& out : model_.graph().output()) {
    std::string tensor = TensorOf(out.name());
    ir::MSCTensor& t = TensorInfo(tensor);
    if (t.alias.empty()) t.alias = out.name();
    result_.graph.outputs.push_back(tensor);
  }
}

ImportResult Importer::Run() {
  Load();
  CheckDeclarations(path_, model_.graph());  // the model's own (before --input-shape edits it)
  ApplyInputShapes();
  CheckOpTypes(/*before_folding=*/true);
  InferAndFold();
  result_.graph.name = model_.graph().name().empty() ? "main" : model_.graph().name();
  result_.graph.source = path_;
  AddInputs();
  ConvertNodes();
  AddOutputs();
  result_.graph.BuildIndex();
  return std::move(result_);
}

// --- ConvertContext

ConvertContext::ConvertContext(Importer& importer, const onnx::NodeProto& n, int64_t op_version)
    : node(n), attrs(n), opset(op_version), imp_(importer) {}

std::string ConvertContext::Label() const { return "node " + NodeLabel(node); }

void ConvertContext::Fail(const std::string& what) const {
  throw Unsupported(Label() + ": " + what);
}

const Value& ConvertContext::In(int k) const {
  if (!Has(k)) Fail("input " + std::to_string(k) + " is required");
  return imp_.Val(node.input(k));
}

const Tensor& ConvertContext::Const(int k) const {
  const Value& v = In(k);
  if (!v.constant)
    Fail("input " + std::to_string(k) + " ('" + node.input(k) +
         "') must be a constant (an initializer or computable at import)");
  return *v.constant;
}

std::vector<int64_t> ConvertContext::ConstInts(int k) const {
  auto v = TensorInts(Const(k));
  if (!v) Fail("input " + std::to_string(k) + " ('" + node.input(k) + "') must hold integers");
  return *v;
}

std::vector<double> ConvertContext::ConstDoubles(int k) const { return TensorDoubles(Const(k)); }

std::string ConvertContext::T(int k) {
  In(k);
  return imp_.TensorOf(node.input(k));
}

std::string ConvertContext::T(const Value& item) {
  return item.tensor.empty() ? ConstTensor(*item.constant) : item.tensor;
}

const std::vector<Value>& ConvertContext::Seq(int k) const {
  const Value& v = In(k);
  if (!v.items) Fail("input " + std::to_string(k) + " ('" + node.input(k) + "') is not a sequence");
  return *v.items;
}

void ConvertContext::BindSeq(int k, std::vector<Value> items) {
  if (!HasOut(k)) return;
  Value v;
  v.items = std::make_shared<const std::vector<Value>>(std::move(items));
  imp_.SetValue(node.output(k), v);
}

void ConvertContext::BindItem(int k, const Value& item) {
  if (!HasOut(k)) return;
  if (item.tensor.empty()) return BindConst(k, *item.constant);
  Bind(k, item.tensor);
}

OutSpec ConvertContext::Out(int k) const { return imp_.StaticInfo(node.output(k), Label()); }

std::vector<std::string> ConvertContext::Emit(const std::string& optype,
                                              const std::vector<std::string>& inputs,
                                              const ir::OrderedMap<std::string>& attrs_,
                                              const std::vector<OutSpec>& outputs,
                                              const std::vector<WeightSpec>& weights,
                                              const std::string& hint) {
  return imp_.AddNode(optype, inputs, attrs_, outputs, weights, hint);
}

std::string ConvertContext::EmitOut(const std::string& optype,
                                    const std::vector<std::string>& inputs,
                                    const ir::OrderedMap<std::string>& attrs_,
                                    const std::vector<WeightSpec>& weights) {
  std::string t = Emit(optype, inputs, attrs_, {Out(0)}, weights)[0];
  Bind(0, t);
  return t;
}

std::string ConvertContext::ConstTensor(const Tensor& value, const std::string& alias) {
  return imp_.AddConstant(value, alias);
}

void ConvertContext::Bind(int k, const std::string& tensor) {
  if (!HasOut(k)) return;
  ir::MSCTensor& t = imp_.TensorInfo(tensor);
  if (t.alias.empty()) t.alias = node.output(k);
  Value v;
  v.tensor = tensor;
  v.dtype = t.dtype;
  v.shape = t.shape;
  v.prims = t.prims;
  imp_.SetValue(node.output(k), v);
}

void ConvertContext::BindConst(int k, Tensor value) {
  if (!HasOut(k)) return;
  Value v;
  v.dtype = value.dtype;
  v.shape = value.shape;
  v.constant = std::make_shared<Tensor>(std::move(value));
  imp_.SetValue(node.output(k), v);
}

const ir::MSCTensor& ConvertContext::Info(const std::string& tensor) const {
  return imp_.TensorInfo(tensor);
}

ir::OrderedMap<std::string> Attrs(std::initializer_list<std::pair<std::string, std::string>> kv) {
  return ir::OrderedMap<std::string>(kv.begin(), kv.end());
}

std::string Scalar(ConvertContext& c, const std::string& dtype, double v) {
  return c.ConstTensor(MakeTensor(dtype, {}, {v}));
}

int64_t NormAxis(const ConvertContext& c, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    c.Fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

const ConverterMap& Converters() {
  static const ConverterMap map = [] {
    ConverterMap m;
    RegisterElementwiseOps(m);
    RegisterNnOps(m);
    RegisterTensorOps(m);
    RegisterReduceOps(m);
    return m;
  }();
  return map;
}

const std::map<std::string, Takes>& PartialConverters() {
  static const std::map<std::string, Takes> map = {
      {"Attention", AttentionTakes},
      {"Swish", [](const onnx::NodeProto&, const NodeAttrs& a, int64_t,
                   const TypeOf&) { return SwishTakes(a); }},
      // GroupNormalization-18 scales per group; opset 21 per channel (nn.group_norm's gamma)
      {"GroupNormalization", [](const onnx::NodeProto&, const NodeAttrs&, int64_t opset,
                                const TypeOf&) { return opset >= 21; }},
  };
  return map;
}

// --- public API

ImportResult ImportOnnx(const std::string& path, const ImportOptions& options) {
  try {
    return Importer(path, options).Run();
  } catch (const Unsupported& e) {
    throw Error(path + ": " + e.what());
  }
}

bool IsOnnxFile(const std::string& path) {
  try {
    const weights::MappedFile file(path, "model");
    if (StartsLikeJson(file.data(), file.size())) return false;
    onnx::ModelProto m;
    return file.size() <= static_cast<uint64_t>(std::numeric_limits<int>::max()) &&
           m.ParseFromArray(file.data(), static_cast<int>(file.size())) && m.has_graph();
  } catch (const Error&) {
    return false;
  }
}

void ReadOnnxGolden(const std::string& dir, const ir::MSCGraph& graph, weights::TensorMap* inputs,
                    weights::TensorMap* outputs) {
  for (const bool is_input : {true, false}) {
    const auto& names = is_input ? graph.inputs : graph.outputs;
    const std::string prefix = is_input ? "input_" : "output_";
    size_t count = 0;
    while (fs::exists(fs::path(dir) / (prefix + std::to_string(count) + ".pb"))) ++count;
    if (count != names.size())
      throw Error(dir + ": " + std::to_string(count) + " " + prefix + "N.pb files, the graph has " +
                  std::to_string(names.size()) + (is_input ? " inputs" : " outputs"));
    for (size_t k = 0; k < count; ++k) {
      const std::string file = (fs::path(dir) / (prefix + std::to_string(k) + ".pb")).string();
      Tensor t = TensorFromProto(ReadTensorProtoFile(file), dir, file);
      const ir::MSCTensor* info = graph.FindTensor(names[k]);
      bool ok = info && info->dtype == t.dtype && info->shape.size() == t.shape.size();
      for (size_t d = 0; ok && d < t.shape.size(); ++d)
        ok = info->shape[d] < 0 || info->shape[d] == t.shape[d];
      if (!ok)
        throw Error(file + ": " + t.dtype + " " + weights::FormatShape(t.shape) +
                    " does not match " + (is_input ? "input " : "output ") + Quote(names[k]) +
                    " (" + (info ? info->dtype + " " + weights::FormatShape(info->shape) : "?") +
                    ")");
      (is_input ? *inputs : *outputs)[names[k]] = std::move(t);
    }
  }
}

}  // namespace msc::frontend::onnx_import
