// Who produces and who reads each tensor of an MSCGraph: the index the analyses (fusion.h,
// memory_plan.h) and the template context (emit/context.h) all start from, built once per graph.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "generator/ir/graph.h"

namespace msc::analyses {

/// A node output: graph.nodes[node].outputs[out].
struct TensorRef {
  size_t node = 0;
  size_t out = 0;
};

/// The use-def index of one graph. It views `graph` (names are pointers into it): the graph must
/// outlive it and stay unchanged.
class Dataflow {
 public:
  /// Node inputs resolve to the last output of that name produced by an EARLIER node (graphs are
  /// in topological order). Throws msc::Error "<source>: node "<name>" reads tensor "<t>", which no
  /// earlier node produces" (ir::Validate rejects such graphs first).
  explicit Dataflow(const ir::MSCGraph& graph);

  const ir::MSCGraph& graph() const { return *graph_; }
  /// Node i's inputs, in order.
  const std::vector<TensorRef>& inputs(size_t node) const { return inputs_[node]; }
  /// The tensor read as node i's input k.
  const ir::MSCTensor& input(size_t node, size_t k) const { return tensor(inputs_[node][k]); }
  const ir::MSCTensor& tensor(TensorRef t) const { return graph_->nodes[t.node].outputs[t.out]; }
  /// The distinct nodes reading output `out` of node i (any tensor of its name), in node order
  /// (names point into graph).
  const std::vector<const std::string*>& consumers(size_t node, size_t out) const;
  /// Whether a tensor name is one of graph.inputs / graph.outputs.
  bool is_graph_input(const std::string& tensor) const { return graph_in_.count(tensor) > 0; }
  bool is_graph_output(const std::string& tensor) const { return graph_out_.count(tensor) > 0; }
  /// The last node output of that name, or nullptr.
  const TensorRef* Find(std::string_view tensor) const;
  /// The index of the last node of that name, or nullptr.
  const size_t* FindNode(std::string_view name) const;

 private:
  const ir::MSCGraph* graph_;
  std::vector<std::vector<TensorRef>> inputs_;
  std::unordered_map<std::string_view, TensorRef> producer_;
  std::unordered_map<std::string_view, size_t> node_;
  std::unordered_map<std::string_view, std::vector<const std::string*>> consumers_;
  std::unordered_map<std::string_view, char> graph_in_, graph_out_;
};

}  // namespace msc::analyses
