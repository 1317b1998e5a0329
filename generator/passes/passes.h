// Graph passes: rewrites of an MSCGraph and its bound weights that a backend opts into in its
// backend.yaml (`passes: [fold_batch_norm]`), run by generate after the weights are bound and
// before the template context is built. Every pass keeps the graph valid (ir::Validate) and the
// computed function unchanged up to float rounding.
#pragma once

#include <string>
#include <vector>

#include "generator/ir/graph.h"
#include "generator/weights/weights.h"

namespace msc::passes {

/// What a pass did to one node: `node` (removed) was folded into `into` (kept), e.g.
/// {"fold_batch_norm", "batch_norm_3", "conv2d_3"}. Templates show these as comments
/// (`# folded: batch_norm_3 into conv2d_3`) through node.folded in the context.
struct Folded {
  std::string pass;
  std::string node;
  std::string into;
};

/// Names of the passes a backend.yaml may list.
const std::vector<std::string>& PassNames();

/// Runs the named passes in order on `graph` and its bound `weights` (keyed by weight tensor
/// name, as weights::BindGraphWeights returns them). Throws msc::Error for an unknown name.
std::vector<Folded> RunPasses(const std::vector<std::string>& names, ir::MSCGraph& graph,
                              weights::TensorMap& weights);

/// BatchNorm folding (inference): every nn.batch_norm (axis 1, running statistics) whose input is
/// the output of an nn.conv2d / msc.conv2d_bias (NCHW data, OIHW kernel, float32) read by nothing
/// else, and whose output is read only directly or through get_item index 0 (never a graph
/// output), is folded into the convolution, which becomes msc.conv2d_bias with
///   s[o] = gamma[o] / sqrt(var[o] + epsilon)          (gamma = 1 when scale="0")
///   W'[o, ...] = W[o, ...] * s[o]
///   b'[o] = (b[o] - mean[o]) * s[o] + beta[o]          (b = 0 without a bias, beta = 0 when
///   center="0")
/// computed in double and rounded to float32 once (Ioffe & Szegedy 2015, "Batch Normalization",
/// eq. in section 3.1, applied to the affine output of the convolution). The folded weights get
/// new tensor names (`<weight>.folded`, `<conv>.bias.folded`, made unique), so weights shared with
/// other nodes are untouched. The batch_norm and its get_item nodes are removed, their readers
/// read the convolution's output, and node indices and parents are renumbered / recomputed.
std::vector<Folded> FoldBatchNorm(ir::MSCGraph& graph, weights::TensorMap& weights);

}  // namespace msc::passes
