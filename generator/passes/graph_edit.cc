#include "generator/passes/graph_edit.h"

namespace msc::passes {

opdef::Json AttrValue(const ir::MSCJoint& n, const std::string& key, opdef::AttrType type) {
  const std::string* v = n.FindAttr(key);
  if (!v) return nullptr;
  opdef::AttrDef def;
  def.name = key;
  def.type = type;
  def.nullable = true;
  return opdef::ParseAttr(def, *v);
}

int64_t IntAttr(const ir::MSCJoint& n, const std::string& key, int64_t fallback) {
  const opdef::Json v = AttrValue(n, key, opdef::AttrType::kInt);
  return v.is_null() ? fallback : v.get<int64_t>();
}

std::optional<std::vector<int64_t>> IntsAttr(const ir::MSCJoint& n, const std::string& key) {
  const opdef::Json v = AttrValue(n, key, opdef::AttrType::kIntList);
  if (v.is_null() || v.empty()) return std::nullopt;
  return v.get<std::vector<int64_t>>();
}

const weights::Tensor* BoundConstant(const ir::MSCJoint& n, const weights::TensorMap& weights) {
  const ir::MSCTensor* w = n.FindWeight("const");
  if (n.optype != "constant" || !w || n.outputs.size() != 1) return nullptr;
  auto it = weights.find(w->name);
  if (it == weights.end() || it->second.dtype != n.outputs[0].dtype ||
      it->second.shape != n.outputs[0].shape)
    return nullptr;
  return &it->second;
}

std::string UniqueName(const std::string& base, std::set<std::string>& taken) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

bool RenameInputs(ir::MSCJoint& n, const std::map<std::string, std::string>& rename) {
  bool changed = false;
  for (auto& in : n.inputs) {
    auto it = rename.find(in);
    if (it != rename.end()) {
      in = it->second;
      changed = true;
    }
  }
  if (changed) n.parents = ir::ParentsOf(n.inputs);
  return changed;
}

void DropUnusedWeights(const ir::MSCGraph& graph, weights::TensorMap& weights) {
  std::set<std::string> used;
  for (const auto& n : graph.nodes)
    for (const auto& [role, t] : n.weights) used.insert(t.name);
  for (auto it = weights.begin(); it != weights.end();)
    it = used.count(it->first) ? std::next(it) : weights.erase(it);
}

void RemoveNodes(ir::MSCGraph& graph, const std::set<size_t>& removed,
                 const std::map<std::string, std::string>& rename, weights::TensorMap& weights) {
  std::vector<ir::MSCJoint> kept;
  kept.reserve(graph.nodes.size() - removed.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (removed.count(i)) continue;
    ir::MSCJoint n = std::move(graph.nodes[i]);
    n.index = static_cast<int64_t>(kept.size());
    RenameInputs(n, rename);
    kept.push_back(std::move(n));
  }
  graph.nodes = std::move(kept);
  graph.BuildIndex();
  DropUnusedWeights(graph, weights);
}

}  // namespace msc::passes
