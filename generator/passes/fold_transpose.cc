// Transposes folded into the indexing of the msc.attention that reads or writes through them (see
// passes.h).
#include <array>
#include <map>
#include <optional>
#include <set>

#include "generator/common/error.h"
#include "generator/ir/attr_format.h"
#include "generator/passes/graph_edit.h"
#include "generator/passes/passes.h"

namespace msc::passes {
namespace {

using ir::MSCGraph;
using ir::MSCJoint;
using Perm = std::vector<int64_t>;

/// msc.attention's permutation attrs: q, k, v to relax's [B, S, N, H], and the result back.
const char* const kAxesAttrs[4] = {"axes", "axes_1", "axes_2", "axes_3"};

/// `axes` made a permutation of 0..rank-1 (negative axes count from the end), or nullopt.
std::optional<Perm> Permutation(Perm axes, size_t rank) {
  if (axes.size() != rank) return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(a)])
      return std::nullopt;
    seen[static_cast<size_t>(a)] = true;
  }
  return axes;
}

/// The permutation a permute_dims node of rank 4 applies (attr axes; null: reversed), or nullopt
/// (another rank, an attr that does not parse or is no permutation).
std::optional<Perm> PermuteOf(const MSCJoint& n) {
  if (n.optype != "permute_dims" || n.inputs.size() != 1 || n.outputs.size() != 1 ||
      n.outputs[0].shape.size() != 4)
    return std::nullopt;
  std::optional<Perm> axes;
  try {
    axes = IntsAttr(n, "axes");
  } catch (const Error&) {
    return std::nullopt;
  }
  return Permutation(axes ? *axes : Perm{3, 2, 1, 0}, 4);
}

/// The four permutations of an msc.attention node (MSC's default [0, 2, 1, 3] where an attr is
/// absent or ""), or nullopt when one is no permutation.
std::optional<std::array<Perm, 4>> AttentionAxes(const MSCJoint& n) {
  std::array<Perm, 4> axes;
  for (size_t k = 0; k < 4; ++k) {
    std::optional<Perm> a;
    try {
      a = IntsAttr(n, kAxesAttrs[k]);
    } catch (const Error&) {
      return std::nullopt;
    }
    std::optional<Perm> p = Permutation(a ? *a : Perm{0, 2, 1, 3}, 4);
    if (!p) return std::nullopt;
    axes[k] = *p;
  }
  return axes;
}

/// Sets attr `key` of `n` (replaced in place, or appended).
void SetAttr(MSCJoint& n, const std::string& key, const std::string& value) {
  for (auto& [k, v] : n.attrs) {
    if (k == key) {
      v = value;
      return;
    }
  }
  n.attrs.emplace_back(key, value);
}

}  // namespace

std::vector<Folded> FoldTranspose(MSCGraph& graph, weights::TensorMap& weights) {
  std::map<std::string, size_t> producer;  // tensor -> node index
  std::map<std::string, size_t> reads;     // tensor -> number of inputs reading it
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& t : graph.nodes[i].outputs) producer[t.name] = i;
    for (const auto& t : graph.nodes[i].inputs) ++reads[t];
  }
  const std::set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  std::set<size_t> removed;
  std::map<std::string, std::string> rename;  // output of a removed permute -> attention output
  std::map<size_t, std::string> folded_into;  // input permute -> the first attention it went into
  std::vector<Folded> done;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    MSCJoint& a = graph.nodes[i];
    if (a.optype != "msc.attention" || a.outputs.size() != 1 || a.inputs.size() < 3) continue;
    std::optional<std::array<Perm, 4>> axes = AttentionAxes(a);
    if (!axes) continue;
    bool changed = false;
    // q, k, v = permute_dims(x, p): the attention permutes x by p then axes[k], i.e. by
    // axes'[d] = p[axes[k][d]], and reads x.
    // A chain of permutes composes link by link.
    for (size_t k = 0; k < 3; ++k) {
      for (;;) {
        auto it = producer.find(a.inputs[k]);
        // A permute an earlier attention already wrote through (its output fold) is that
        // attention's output now: reading it is reading the permuted value, nothing to compose.
        if (it == producer.end() || removed.count(it->second)) break;
        const MSCJoint& p = graph.nodes[it->second];
        const std::optional<Perm> perm = PermuteOf(p);
        if (!perm) break;
        Perm composed(4);
        for (size_t d = 0; d < 4; ++d) composed[d] = (*perm)[static_cast<size_t>((*axes)[k][d])];
        (*axes)[k] = composed;
        // p read by nothing else now goes (below), and its read of its input with it.
        if (--reads[a.inputs[k]] == 0 && !graph_outputs.count(a.inputs[k]) && p.shared_ref.empty())
          --reads[p.inputs[0]];
        a.inputs[k] = p.inputs[0];
        ++reads[a.inputs[k]];
        folded_into.emplace(it->second, a.name);
        changed = true;
      }
    }
    // The result y read only by q = permute_dims(y, p) (neither a graph output): the attention
    // writes q directly, permuting its result by axes'[d] = axes[3][p[d]].
    const std::string& y = a.outputs[0].name;
    if (reads[y] == 1 && !graph_outputs.count(y)) {
      for (size_t j = i + 1; j < graph.nodes.size(); ++j) {
        const MSCJoint& q = graph.nodes[j];
        if (q.inputs.empty() || q.inputs[0] != y) continue;
        const std::optional<Perm> perm = PermuteOf(q);
        if (perm && !graph_outputs.count(q.outputs[0].name) && q.shared_ref.empty()) {
          Perm composed(4);
          for (size_t d = 0; d < 4; ++d) composed[d] = (*axes)[3][static_cast<size_t>((*perm)[d])];
          (*axes)[3] = composed;
          a.outputs[0].shape = q.outputs[0].shape;
          a.outputs[0].layout = q.outputs[0].layout;
          a.outputs[0].prims = q.outputs[0].prims;
          rename[q.outputs[0].name] = y;
          removed.insert(j);
          done.push_back({"fold_transpose", q.name, a.name});
          changed = true;
        }
        break;
      }
    }
    if (!changed) continue;
    for (size_t k = 0; k < 4; ++k) SetAttr(a, kAxesAttrs[k], ir::AttrInts((*axes)[k]));
    a.parents = ir::ParentsOf(a.inputs);
  }
  // Input permutes nothing reads any more (and no graph output) are gone.
  for (const auto& [p, into] : folded_into) {
    const MSCJoint& n = graph.nodes[p];
    if (reads[n.outputs[0].name] == 0 && !graph_outputs.count(n.outputs[0].name) &&
        n.shared_ref.empty()) {
      removed.insert(p);
      done.push_back({"fold_transpose", n.name, into});
    }
  }
  if (folded_into.empty() && done.empty()) return done;
  RemoveNodes(graph, removed, rename, weights);
  return done;
}

}  // namespace msc::passes
