// Common subexpression elimination: a node computing what an earlier node computes reads that
// node's outputs instead (see passes.h).
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "generator/passes/graph_edit.h"
#include "generator/passes/passes.h"

namespace msc::passes {
namespace {

using ir::MSCGraph;
using ir::MSCJoint;

/// What decides that two nodes compute the same, but for their weights' values: optype, attrs,
/// inputs (as renamed so far), the outputs' dtypes and shapes, the weight roles.
using Key =
    std::tuple<std::string, ir::OrderedMap<std::string>, std::vector<std::string>,
               std::vector<std::pair<std::string, std::vector<int64_t>>>, std::vector<std::string>>;

}  // namespace

std::vector<Folded> EliminateCommonSubexpr(MSCGraph& graph, weights::TensorMap& weights) {
  const std::set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::map<std::string, std::string> rename;  // output of a removed node -> the kept one's
  std::set<size_t> removed;
  std::vector<Folded> done;
  std::map<Key, std::vector<size_t>> seen;  // candidates, compared by their weights' values
  // Node i's weights, bound (null when one is not).
  auto bound = [&](const MSCJoint& n) {
    std::vector<const weights::Tensor*> ws;
    for (const auto& [role, w] : n.weights) {
      auto it = weights.find(w.name);
      if (it == weights.end()) return std::vector<const weights::Tensor*>{nullptr};
      ws.push_back(&it->second);
    }
    return ws;
  };
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    MSCJoint& n = graph.nodes[i];
    RenameInputs(n, rename);
    // Graph inputs are distinct values whatever their shapes; a node named by a shared_ref, or
    // whose output is a graph output (read by name), stays.
    if (n.optype == "input" || !n.shared_ref.empty() || n.outputs.empty()) continue;
    const std::vector<const weights::Tensor*> ws = bound(n);
    if (!ws.empty() && !ws[0]) continue;
    // A constant's `scalar` attr only repeats its value: the bytes decide.
    Key key{n.optype,
            n.optype == "constant" ? ir::OrderedMap<std::string>{} : n.attrs,
            n.inputs,
            {},
            {}};
    bool keep = false;
    for (const auto& t : n.outputs) {
      keep = keep || graph_outputs.count(t.name) > 0;
      std::get<3>(key).emplace_back(t.dtype, t.shape);
    }
    for (const auto& [role, w] : n.weights) std::get<4>(key).push_back(role);
    std::vector<size_t>& candidates = seen[std::move(key)];
    const MSCJoint* same = nullptr;
    for (size_t c : candidates) {
      const std::vector<const weights::Tensor*> cw = bound(graph.nodes[c]);
      bool equal = true;
      for (size_t k = 0; equal && k < ws.size(); ++k) equal = *ws[k] == *cw[k];
      if (equal) {
        same = &graph.nodes[c];
        break;
      }
    }
    if (!same || keep) {
      if (!same) candidates.push_back(i);
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) rename[n.outputs[k].name] = same->outputs[k].name;
    removed.insert(i);
    done.push_back({"eliminate_common_subexpr", n.name, same->name});
  }
  if (done.empty()) return done;
  RemoveNodes(graph, removed, rename, weights);
  return done;
}

}  // namespace msc::passes
