// Graph edits shared by the graph passes (generator/passes): typed attribute reads, bound
// constants, fresh names, rewired readers, and the weights a rewritten graph no longer reads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"
#include "generator/weights/weights.h"

namespace msc::passes {

/// Attribute `key` of `n` parsed as `type` by opdef::ParseAttr (MSC's strings: "1,2", "1,", "",
/// "0.500000", "inf"); null when `n` lacks it or it is "" (MSC's None). Throws msc::Error when the
/// string does not parse (a pass then leaves the node alone).
opdef::Json AttrValue(const ir::MSCJoint& n, const std::string& key, opdef::AttrType type);
/// An int attr; `fallback` when absent or "". Throws as AttrValue.
int64_t IntAttr(const ir::MSCJoint& n, const std::string& key, int64_t fallback);
/// An int list attr; nullopt when absent or "" (null: the op's "all axes" / default). Throws as
/// AttrValue.
std::optional<std::vector<int64_t>> IntsAttr(const ir::MSCJoint& n, const std::string& key);

/// The weight `n` makes when `n` is a `constant` node of one output whose "const" weight is bound
/// in `weights` with that output's dtype and shape (what a pass may read as the tensor's values);
/// else nullptr.
const weights::Tensor* BoundConstant(const ir::MSCJoint& n, const weights::TensorMap& weights);

/// `base`, or `base_1`, `base_2`, ... : the first not in `taken`, which is then added to it.
std::string UniqueName(const std::string& base, std::set<std::string>& taken);

/// Replaces every input of `n` found in `rename` (tensor read -> tensor to read instead); when one
/// changed, recomputes n.parents (ir::ParentsOf). Returns whether one changed.
bool RenameInputs(ir::MSCJoint& n, const std::map<std::string, std::string>& rename);

/// Drops the weights no node of `graph` uses any more, so the project carries only what it reads.
void DropUnusedWeights(const ir::MSCGraph& graph, weights::TensorMap& weights);

/// Removes the nodes at the indices in `removed`, points the remaining nodes' inputs through
/// `rename` (RenameInputs), renumbers node indices, rebuilds the graph's index and drops the
/// weights no node uses any more (DropUnusedWeights).
void RemoveNodes(ir::MSCGraph& graph, const std::set<size_t>& removed,
                 const std::map<std::string, std::string>& rename, weights::TensorMap& weights);

}  // namespace msc::passes
