// MSCGraph: the DAG IR of Apache TVM's Multi-System Compiler (MSC), as C++ values.
//
// Field names follow MSC's JSON keys verbatim (see ../shared/reference/mscgraph_schema.md, read
// from apache/tvm src/contrib/msc/core/ir/graph.h: JsonMSCTensor, JsonMSCJoint, JsonMSCPrim,
// JsonMSCGraph). Objects keep the order of `attrs` and `weights` as read, so that
// LoadGraph -> SaveGraph reproduces MSC's files key for key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace msc::ir {

using Json = nlohmann::ordered_json;

/// An ordered string -> T map: MSC's JSON objects keep their key order through load/save.
template <typename T>
using OrderedMap = std::vector<std::pair<std::string, T>>;

/// The element count of a shape, the one product every layer uses (weights' ShapeNumel and
/// CheckedNumel map its results to their callers' conventions): 1 for 0-d; -1 if any dim is
/// dynamic (negative); else 0 if any dim is 0, wherever it stands (dims before it may multiply past
/// int64); else -2 if the product overflows int64.
int64_t ShapeNumel(const std::vector<int64_t>& shape);

/// One tensor: a node output, a graph input, or a weight (JsonMSCTensor).
struct MSCTensor {
  std::string name;    ///< "<node>:<idx>" for node outputs; the constant's name for weights.
  std::string alias;   ///< user-facing name, "" when none.
  std::string dtype;   ///< "float32", "float16", "int64", "int32", "bool", ...
  std::string layout;  ///< axis letters ("NCHW", "OIHW", "NC", "O") or "" when unknown.
  std::vector<int64_t> shape;      ///< static dims; dynamic dims are -1.
  std::vector<std::string> prims;  ///< [] when static, else one MSCPrim name or literal per dim.
  Json extra = Json::object();     ///< keys MSC did not define, kept for round trip.

  /// Number of elements (product of shape; 1 for 0-d). -1 if any dim is dynamic (-1); else 0 if
  /// any dim is 0, whatever the others (the order of the dims does not matter); else -2 if the
  /// product overflows int64 (Validate rejects such tensors, see kMaxTensorBytes).
  int64_t Numel() const { return ShapeNumel(shape); }
  /// Size of one element in bytes for dtype ("bool" = 1), 0 for unknown dtypes.
  static int64_t DtypeBytes(const std::string& dtype);
};

/// One node (JsonMSCJoint / MSCJoint).
struct MSCJoint {
  int64_t index = 0;
  std::string name;
  std::string shared_ref;
  std::string optype;
  std::vector<std::string> parents;
  std::vector<std::string>
      inputs;  ///< tensor names "<producer>:<out_idx>" (split on the last ':').
  std::vector<MSCTensor> outputs;
  OrderedMap<std::string> attrs;  ///< MSC's attribute strings, unparsed ("1,1", "1,", "0.000010").
  OrderedMap<MSCTensor> weights;  ///< role ("weight", "bias", "gamma", ...) -> weight tensor.
  Json extra = Json::object();

  /// Attribute string for key, or nullptr.
  const std::string* FindAttr(const std::string& key) const;
  /// Weight tensor for role, or nullptr.
  const MSCTensor* FindWeight(const std::string& role) const;
};

/// One symbolic-shape node (JsonMSCPrim).
struct MSCPrim {
  int64_t index = 0;
  std::string name;
  std::string optype;
  std::vector<std::string> parents;
  OrderedMap<std::string> attrs;
  Json extra = Json::object();
};

/// A whole graph (JsonMSCGraph). `source` is the file it was read from, for error messages.
struct MSCGraph {
  std::string name;
  std::vector<std::string> inputs;   ///< graph input tensor names.
  std::vector<std::string> outputs;  ///< graph output tensor names.
  std::vector<MSCJoint> nodes;       ///< in topological order.
  std::vector<MSCPrim> prims;
  Json extra = Json::object();
  std::string source = "<memory>";

  /// Node by name, or nullptr. O(1) after BuildIndex() (called by LoadGraph).
  const MSCJoint* FindNode(const std::string& name) const;
  /// Output tensor by tensor name or alias (graph.find_tensor() semantics), or nullptr.
  const MSCTensor* FindTensor(const std::string& name_or_alias) const;
  /// Rebuilds the name lookup tables; call after editing nodes.
  void BuildIndex();

 private:
  std::map<std::string, size_t> node_index_;
};

/// Splits "<node>:<idx>" on the LAST ':' (MSC's StringUtils::SplitOnce, from_left=false).
/// Returns nullopt if there is no ':' or idx is not a non-negative integer.
std::optional<std::pair<std::string, int64_t>> SplitTensorName(const std::string& tensor_name);

/// A node's `parents` as MSC writes them: the distinct producers of `inputs` ("<node>:<idx>") in
/// first-use order (a name without a valid ":<idx>" counts as its own producer; Validate reports
/// it). Source: the MSCJoint constructor in tvm/src/contrib/msc/core/ir/graph.cc (added_parents).
std::vector<std::string> ParentsOf(const std::vector<std::string>& inputs);

/// Default limit on the node count of a graph (`--max-nodes`): 250,000 nodes need about 2 GB of
/// memory to generate (measured ~7 KB/node peak RSS on every backend, 100,000 nodes,
/// scripts/bench_generate.py).
inline constexpr size_t kDefaultMaxNodes = 250000;

/// Parses MSCGraph JSON text. `source` names the file in errors.
/// Throws msc::Error: "<source>:<line>:<col>: invalid JSON: ..." for syntax errors, and
/// "<source>: <json path> (node '<name>'): missing required field 'optype'" / "expected <type>"
/// for schema errors. Does not run the semantic checks of Validate().
/// A graph with more than `max_nodes` nodes is refused while it is parsed, before its JSON tree
/// is built: "<source>: nodes[<max_nodes>]: the graph has more than <max_nodes> nodes, the
/// limit (...)". Generation needs about 7 KB of memory per node (README "Limits").
MSCGraph ParseGraph(const std::string& text, const std::string& source,
                    size_t max_nodes = kDefaultMaxNodes);
/// Reads and parses a graph file. Throws msc::Error naming the file if it cannot be read.
MSCGraph LoadGraph(const std::string& path, size_t max_nodes = kDefaultMaxNodes);
/// The error for a graph of more than `max_nodes` nodes ("<where>: the graph has more than ...").
std::string TooManyNodesMessage(size_t max_nodes);
/// Serializes in MSC's key order (graph: name, inputs, outputs, nodes, prims; node: index, name,
/// shared_ref, optype, parents, inputs, outputs, attrs, weights; tensor: name, alias, dtype,
/// layout, shape, prims), attrs/weights in stored order, extra keys last.
Json GraphToJson(const MSCGraph& graph);
/// One tensor in MSC's key order (name, alias, dtype, layout, shape, prims), extra keys last.
Json TensorToJson(const MSCTensor& tensor);
std::string SaveGraphString(const MSCGraph& graph, int indent = 2);

}  // namespace msc::ir
