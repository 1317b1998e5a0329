#include "generator/passes/passes.h"

#include <utility>

#include "generator/common/error.h"

namespace msc::passes {
namespace {

using Pass = std::vector<Folded> (*)(ir::MSCGraph&, weights::TensorMap&);

/// Every pass a backend.yaml may list, by name.
const std::vector<std::pair<std::string, Pass>>& Passes() {
  static const std::vector<std::pair<std::string, Pass>> passes = {
      {"fold_constant", FoldConstant},
      {"fold_batch_norm", FoldBatchNorm},
      {"eliminate_common_subexpr", EliminateCommonSubexpr},
      {"fuse_attention", FuseAttention},
      {"fold_transpose", FoldTranspose}};
  return passes;
}

}  // namespace

const std::vector<std::string>& PassNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, pass] : Passes()) v.push_back(name);
    return v;
  }();
  return names;
}

std::vector<Folded> RunPasses(const std::vector<std::string>& names, ir::MSCGraph& graph,
                              weights::TensorMap& weights) {
  std::vector<Folded> all;
  for (const auto& name : names) {
    Pass pass = nullptr;
    std::string known;
    for (const auto& [n, p] : Passes()) {
      if (n == name) pass = p;
      known += (known.empty() ? "" : ", ") + n;
    }
    if (!pass) throw Error("unknown graph pass '" + name + "' (known: " + known + ")");
    std::vector<Folded> done = pass(graph, weights);
    all.insert(all.end(), done.begin(), done.end());
  }
  return all;
}

}  // namespace msc::passes
