#include "generator/passes/passes.h"

#include "generator/common/error.h"

namespace msc::passes {

const std::vector<std::string>& PassNames() {
  static const std::vector<std::string> names = {"fold_constant", "fold_batch_norm",
                                                 "fuse_attention", "fold_transpose"};
  return names;
}

std::vector<Folded> RunPasses(const std::vector<std::string>& names, ir::MSCGraph& graph,
                              weights::TensorMap& weights) {
  std::vector<Folded> all;
  for (const auto& name : names) {
    std::vector<Folded> done;
    if (name == "fold_constant")
      done = FoldConstant(graph, weights);
    else if (name == "fold_batch_norm")
      done = FoldBatchNorm(graph, weights);
    else if (name == "fuse_attention")
      done = FuseAttention(graph, weights);
    else if (name == "fold_transpose")
      done = FoldTranspose(graph, weights);
    else
      throw Error("unknown graph pass '" + name +
                  "' (known: fold_constant, fold_batch_norm, fuse_attention, fold_transpose)");
    all.insert(all.end(), done.begin(), done.end());
  }
  return all;
}

}  // namespace msc::passes
