// Binding a graph's weight tensors to the tensors of a weights file (see weights.h).
//
// Graph side: MSCGraph node "weights" ({role: tensor}, ../shared/reference/mscgraph_schema.md,
// from apache/tvm src/contrib/msc/core/ir/graph.h JsonMSCJoint). Weight tensor names are the
// constants' names ("const", "const_1", ...), which is how MSC keys its saved weights; aliases are
// the frontend's names ("conv2d.weight"). A constant feeding several nodes keeps one name, and
// nodes after the first carry shared_ref = the first consumer (graph_builder SetExprName);
// MSC's WeightGraph skips them, so their weights are bound once.
#include <map>
#include <string>
#include <vector>

#include "generator/common/error.h"
#include "generator/weights/file_io.h"
#include "generator/weights/weights.h"

namespace msc::weights {

namespace {

std::string Describe(const ir::MSCJoint& node, const std::string& role, const ir::MSCTensor& w) {
  std::string s = "node '" + node.name + "' role '" + role + "' tensor '" + w.name + "'";
  if (!w.alias.empty()) s += " (alias '" + w.alias + "')";
  return s;
}

/// The weight of `node` for `role`, or nullptr (a local lookup: node.weights is a short list).
const ir::MSCTensor* WeightOf(const ir::MSCJoint& node, const std::string& role) {
  for (const auto& [r, t] : node.weights) {
    if (r == role) return &t;
  }
  return nullptr;
}

struct Declared {
  const ir::MSCJoint* node;
  std::string role;
  const ir::MSCTensor* tensor;
};

}  // namespace

TensorMap BindGraphWeights(const ir::MSCGraph& graph, const TensorMap& available,
                           const std::string& weights_source) {
  TensorMap bound;
  std::map<std::string, Declared> declared;            // weight name -> first declaration
  std::map<std::string, const ir::MSCJoint*> earlier;  // node name -> node, nodes seen so far
  std::vector<std::string> problems;

  for (const ir::MSCJoint& node : graph.nodes) {
    const ir::MSCJoint* ref = nullptr;
    if (!node.shared_ref.empty()) {
      auto r = earlier.find(node.shared_ref);
      if (r != earlier.end()) ref = r->second;
    }
    for (const auto& [role, w] : node.weights) {
      const std::string who = Describe(node, role, w);

      // A name seen before is bound once; its declarations must agree.
      auto prev = declared.find(w.name);
      if (prev != declared.end()) {
        const ir::MSCTensor& p = *prev->second.tensor;
        if (p.dtype != w.dtype || p.shape != w.shape) {
          problems.push_back(who + ": declared as " + w.dtype + " " + FormatShape(w.shape) +
                             " but as " + p.dtype + " " + FormatShape(p.shape) + " by node '" +
                             prev->second.node->name + "' role '" + prev->second.role + "'");
        }
        continue;
      }
      declared[w.name] = Declared{&node, role, &w};

      if (w.name.empty()) {
        problems.push_back(who + ": the weight tensor has no name");
        continue;
      }
      std::vector<std::string> graph_issues;
      if (DtypeItemSize(w.dtype) == 0)
        graph_issues.push_back("unsupported dtype '" + w.dtype + "' in the graph");
      for (int64_t d : w.shape) {
        if (d < 0) {
          graph_issues.push_back("graph shape " + FormatShape(w.shape) +
                                 " has dynamic dims, but weights must be static");
          break;
        }
      }
      int64_t want_bytes = 0;
      if (graph_issues.empty() &&
          !detail::CheckedMul(detail::CheckedNumel(w.shape), DtypeItemSize(w.dtype), &want_bytes)) {
        graph_issues.push_back("graph shape " + FormatShape(w.shape) + " overflows");
      }
      if (!graph_issues.empty()) {
        std::string msg;
        for (const auto& g : graph_issues) msg += (msg.empty() ? "" : "; ") + g;
        problems.push_back(who + ": " + msg);
        continue;
      }

      // Shared weight under a new name: reuse what the referenced node's same role bound.
      if (ref != nullptr) {
        if (const ir::MSCTensor* rw = WeightOf(*ref, role)) {
          if (rw->dtype != w.dtype || rw->shape != w.shape) {
            problems.push_back(who + ": shares the weight of node '" + ref->name + "' role '" +
                               role + "' tensor '" + rw->name + "', which is " + rw->dtype + " " +
                               FormatShape(rw->shape) + ", but is declared " + w.dtype + " " +
                               FormatShape(w.shape));
          } else {
            auto b = bound.find(rw->name);
            if (b != bound.end()) bound[w.name] = b->second;
            // else: the referenced weight already has a problem listed.
          }
          continue;
        }
      }

      auto found = available.find(w.name);
      std::string file_name = w.name;
      if (found == available.end() && !w.alias.empty()) {
        found = available.find(w.alias);
        file_name = w.alias;
      }
      if (found == available.end()) {
        problems.push_back(who + ": not found in the weights file (by name or alias)");
        continue;
      }
      const Tensor& t = found->second;
      std::string mismatch;
      if (t.dtype != w.dtype) mismatch += "dtype " + w.dtype + " expected, file has " + t.dtype;
      if (t.shape != w.shape) {
        mismatch += std::string(mismatch.empty() ? "" : "; ") + "shape " + FormatShape(w.shape) +
                    " expected, file has " + FormatShape(t.shape);
      }
      if (mismatch.empty() && static_cast<uint64_t>(want_bytes) != t.data.size()) {
        mismatch = "file tensor has " + std::to_string(t.data.size()) + " data bytes, " +
                   std::to_string(want_bytes) + " expected";
      }
      if (!mismatch.empty()) {
        if (file_name != w.name) mismatch += " (file tensor '" + file_name + "')";
        problems.push_back(who + ": " + mismatch);
        continue;
      }
      bound[w.name] = t;
    }
    earlier.emplace(node.name, &node);
  }

  if (!problems.empty()) {
    std::string msg = weights_source + ": " + std::to_string(problems.size()) + " weight problem" +
                      (problems.size() == 1 ? "" : "s") + ":";
    for (const auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
  return bound;
}

}  // namespace msc::weights
