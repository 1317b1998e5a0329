// StoreWeightsAsFloat16 (generate --precision fp16): see passes.h.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "generator/common/float16.h"
#include "generator/passes/passes.h"

namespace msc::passes {

namespace {

/// The float16 bits of float32 tensor `t` (rounded to nearest even), or false when a finite value
/// is beyond float16's range (|x| > 65504 after rounding) and would become infinite.
bool ToFloat16(const weights::Tensor& t, weights::Tensor* out) {
  const size_t n = t.data.size() / 4;
  std::vector<uint8_t> bytes(n * 2);
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, t.data.data() + 4 * i, 4);
    const uint16_t h = FloatToHalf(f);
    if (std::isfinite(f) && (h & 0x7c00u) == 0x7c00u) return false;
    bytes[2 * i] = static_cast<uint8_t>(h & 0xffu);
    bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  out->dtype = "float16";
  out->shape = t.shape;
  out->data = weights::Bytes(std::move(bytes));
  return true;
}

}  // namespace

std::vector<std::string> StoreWeightsAsFloat16(
    ir::MSCGraph& graph, weights::TensorMap& weights,
    const std::map<std::string, std::vector<std::string>>& roles) {
  // A tensor is converted only when every (node, role) naming it is listed: a weight shared with
  // a reader that computes with float32 (a tied embedding, a constant node) stays float32.
  std::map<std::string, bool> eligible;
  for (const auto& n : graph.nodes) {
    const auto listed = roles.find(n.optype);
    for (const auto& [role, t] : n.weights) {
      const bool ok =
          t.dtype == "float32" && listed != roles.end() &&
          std::find(listed->second.begin(), listed->second.end(), role) != listed->second.end();
      auto [it, fresh] = eligible.emplace(t.name, ok);
      if (!fresh) it->second = it->second && ok;
    }
  }
  std::set<std::string> converted;
  for (const auto& [name, ok] : eligible) {
    auto w = weights.find(name);
    if (!ok || w == weights.end() || w->second.dtype != "float32") continue;
    weights::Tensor half;
    if (!ToFloat16(w->second, &half)) continue;
    w->second = std::move(half);
    converted.insert(name);
  }
  for (auto& n : graph.nodes)
    for (auto& [role, t] : n.weights)
      if (converted.count(t.name)) t.dtype = "float16";
  return {converted.begin(), converted.end()};
}

std::vector<std::string> StoreActivationsAsFloat16(ir::MSCGraph& graph,
                                                   const std::vector<std::string>& mixed,
                                                   const std::vector<std::string>& same) {
  const std::set<std::string> same_set(same.begin(), same.end());
  std::set<std::string> listed(mixed.begin(), mixed.end());
  listed.insert(same.begin(), same.end());
  const std::set<std::string> outputs(graph.outputs.begin(), graph.outputs.end());
  // Readers of each tensor that are not listed make it stay float32.
  std::set<std::string> unlisted_reader;
  for (const auto& n : graph.nodes)
    if (!listed.count(n.optype))
      for (const auto& t : n.inputs) unlisted_reader.insert(t);
  std::set<std::string> half;  // the candidates
  for (const auto& n : graph.nodes) {
    if (!listed.count(n.optype)) continue;
    for (const auto& t : n.outputs)
      if (t.dtype == "float32" && !outputs.count(t.name) && !unlisted_reader.count(t.name))
        half.insert(t.name);
  }
  // float32 tensors of each `same` node (inputs and outputs): all float16 or none.
  std::map<std::string, const ir::MSCTensor*> by_name;
  for (const auto& n : graph.nodes)
    for (const auto& t : n.outputs) by_name[t.name] = &t;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& n : graph.nodes) {
      if (!same_set.count(n.optype)) continue;
      std::vector<const std::string*> group;
      for (const auto& name : n.inputs) {
        const auto t = by_name.find(name);
        if (t != by_name.end() && t->second->dtype == "float32") group.push_back(&name);
      }
      for (const auto& t : n.outputs)
        if (t.dtype == "float32") group.push_back(&t.name);
      bool all = true, any = false;
      for (const std::string* t : group) {
        const bool h = half.count(*t) > 0;
        all = all && h;
        any = any || h;
      }
      if (any && !all) {
        for (const std::string* t : group) half.erase(*t);
        changed = true;
      }
    }
  }
  std::vector<std::string> converted;
  for (auto& n : graph.nodes)
    for (auto& t : n.outputs)
      if (half.count(t.name)) {
        t.dtype = "float16";
        converted.push_back(t.name);
      }
  return converted;
}

}  // namespace msc::passes
