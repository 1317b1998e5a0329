#include "generator/analyses/dataflow.h"

#include "generator/common/error.h"

namespace msc::analyses {

Dataflow::Dataflow(const ir::MSCGraph& graph) : graph_(&graph) {
  for (const auto& t : graph.inputs) graph_in_.emplace(t, 1);
  for (const auto& t : graph.outputs) graph_out_.emplace(t, 1);
  const size_t n = graph.nodes.size();
  inputs_.resize(n);
  node_.reserve(n);
  producer_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const ir::MSCJoint& node = graph.nodes[i];
    node_[node.name] = i;
    inputs_[i].reserve(node.inputs.size());
    for (const auto& in : node.inputs) {
      auto it = producer_.find(in);
      if (it == producer_.end())
        throw Error(graph.source + ": node " + ir::Json(node.name).dump() + " reads tensor " +
                    ir::Json(in).dump() + ", which no earlier node produces");
      inputs_[i].push_back(it->second);
      auto& c = consumers_[in];
      if (c.empty() || *c.back() != node.name) c.push_back(&node.name);
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const std::string& name = node.outputs[k].name;
      producer_.insert_or_assign(name, TensorRef{i, k});  // a later one of that name wins
    }
  }
}

const std::vector<const std::string*>& Dataflow::consumers(size_t node, size_t out) const {
  static const std::vector<const std::string*> kNone;
  auto it = consumers_.find(graph_->nodes[node].outputs[out].name);
  return it == consumers_.end() ? kNone : it->second;
}

const TensorRef* Dataflow::Find(std::string_view tensor) const {
  auto it = producer_.find(tensor);
  return it == producer_.end() ? nullptr : &it->second;
}

const size_t* Dataflow::FindNode(std::string_view name) const {
  auto it = node_.find(name);
  return it == node_.end() ? nullptr : &it->second;
}

}  // namespace msc::analyses
