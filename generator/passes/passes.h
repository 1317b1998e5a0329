// Graph passes: rewrites of an MSCGraph and its bound weights that a backend opts into in its
// backend.yaml (`passes: [fold_batch_norm]`), run by generate after the weights are bound and
// before the template context is built. Every pass keeps the graph valid (ir::Validate) and the
// computed function unchanged up to float rounding.
#pragma once

#include <cstdint>
#include <map>
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

/// The size guard of FoldConstant: a result larger than max(kFoldConstantMinLimitBytes, 2 x the
/// bytes of the node's inputs) is not folded (ones / broadcast_to of a large shape would bloat
/// the weights file with what the backend computes in a few microseconds).
constexpr int64_t kFoldConstantMinLimitBytes = int64_t{1} << 20;

/// Constant folding: every node whose inputs are all outputs of `constant` nodes with bound
/// weights (no inputs: ones, zeros, arange), with static-shape outputs of float32, float64,
/// float16, int8..int64, uint8 or bool, of an optype it evaluates:
///   reshape squeeze expand_dims permute_dims transpose astype cast broadcast_to concat
///   concatenate split tuple get_item strided_slice take where tril triu trilu full ones zeros
///   ones_like zeros_like arange; unary negative abs exp log sqrt rsqrt sin cos tanh erf sigmoid
///   square floor ceil round sign logical_not bitwise_not isnan isinf isfinite; binary (numpy
///   broadcasting) add subtract multiply divide power maximum minimum floor_divide floor_mod
///   equal not_equal greater greater_equal less less_equal logical_and logical_or logical_xor
///   bitwise_and bitwise_or bitwise_xor
/// is evaluated at generation time (semantics of TVM v0.20 relax, numerics of PyTorch's CPU
/// kernels: float32 / float16 arithmetic in float, rounded once per op; see fold_constant.cc)
/// and replaced by `constant` node(s) holding the result as a new weight (role `const`, tensor
/// `<node>.folded`, made unique; a result equal to an input's weight, as get_item's, reuses that
/// weight tensor). A one-output node's constant keeps the node's name and output tensor, so its
/// readers and a graph output it produces are unchanged; a multi-output node (split, tuple)
/// becomes one constant per output, `<node>.out<k>`, its readers rewired (not folded when one of
/// its outputs is a graph output). Nodes are visited in topological order, so chains fold
/// (constant -> permute_dims -> astype). Constants then read by nothing (and no graph output, and
/// named by no shared_ref) are removed, and weights no node uses any more are dropped.
/// Not folded, and left unchanged: other optypes, dynamic shapes, other dtypes, empty results
/// (0 elements), results past the size guard (kFoldConstantMinLimitBytes), operands of different
/// dtypes, a declared output dtype or shape other than the computed one, attributes that do not
/// parse, and results left undefined by C / TVM / torch (integer division by zero, float -> int
/// of NaN or out of range, take out of range in "fast" mode). Never throws for what it does not
/// fold.
/// Records: {"fold_constant", <node>, <constant>} for every folded node and every removed
/// constant, where <constant> is the node that holds its value now, in graph order; a constant
/// node made by folding thus lists (node.folded) every node that went into it, itself included.
std::vector<Folded> FoldConstant(ir::MSCGraph& graph, weights::TensorMap& weights);

/// Common subexpression elimination (TVM relax's EliminateCommonSubexpr, on the MSCGraph): a
/// node with the optype, attrs (a constant's ignored: its bytes decide), inputs (after the
/// renaming so far), output dtypes and shapes, weight roles and weight values (dtype, shape,
/// bytes) of an earlier node is removed and its readers read that node's outputs (output k for
/// output k), e.g. a transformer's attention mask, computed once per layer from the same input.
/// Graph inputs, nodes named by a shared_ref, nodes whose outputs are graph outputs and nodes
/// with unbound weights stay. Nodes are visited in order, so chains of duplicates go too (two
/// equal constants, then the two nodes reading them). Records {"eliminate_common_subexpr",
/// <removed>, <kept>}. Never throws.
std::vector<Folded> EliminateCommonSubexpr(ir::MSCGraph& graph, weights::TensorMap& weights);

/// Attention fusion (issue 25: a transformer written out op by op, as GPT-2's, pays one dispatch
/// per op): softmax(S) @ v, with S = [mask](scale(q @ k^T)), becomes one msc.attention:
///   - q [B, N, Sq, H] @ kt [B, N, H, Skv] (matmul) -> [B, N, Sq, Skv]; then optionally
///     multiply by / divide by a constant scalar c (finite, nonzero): scale = c / 1 / c (else 1);
///     then optionally a mask: add(., m) with m of the scores' dtype broadcasting to [B, N, Sq,
///     Skv] (the attention's additive mask input), or where(cond, fill, .) / where(cond, ., fill)
///     with cond a constant and fill a constant scalar <= -1e30 (-inf, or float32's lowest: then s
///     + fill rounds to fill, so an additive mask of fill where the key is removed and 0 where kept
///     computes the same); nn.softmax over the last axis; @ v [B, N, Skv, Hv] (matmul) -> [B, N,
///     Sq, Hv];
///   - every intermediate has one output, read once, not a graph output, not shared; all of
///     float32 or all of float16; no batch broadcasting; the matmuls' out_dtype is their output's.
/// The msc.attention takes the final matmul's name and output; axes [0, 2, 1, 3], axes_1
/// [0, 3, 1, 2] (k^T read as relax's [B, Skv, N, H]), axes_2 and axes_3 [0, 2, 1, 3], scale as
/// above. A where mask that removes exactly the keys j > i + (Skv - Sq) (broadcast over B and N;
/// Sq <= Skv) becomes causal_mask TopLeft (Sq = Skv) / BottomRight and no input; any other
/// becomes a constant `<where>.mask` (0 / fill, of cond's shape) in the where's place. The
/// absorbed nodes go, and so do constants read only by them. Records {"fuse_attention", <node>,
/// <attention>} for each. Run fold_transpose after it: the head transposes around the matmuls
/// then fold into the attention's axes. Never throws for what it does not fuse.
std::vector<Folded> FuseAttention(ir::MSCGraph& graph, weights::TensorMap& weights);

/// Transposes folded into msc.attention's indexing (issue 9: the q/k/v head split and merge of a
/// transformer dispatch nothing). msc.attention permutes q, k, v by its attrs axes, axes_1,
/// axes_2 to relax's [B, S, N, H] and its result back by axes_3 (MSC's default [0, 2, 1, 3]
/// where absent), so:
///   - an input t = permute_dims(x, p) (rank 4; null axes: reversed) is read as x with
///     axes_k'[d] = p[axes_k[d]]; the permute_dims stays while other nodes read it, else it is
///     removed; a chain of permute_dims composes the same way, link by link;
///   - a result y read by nothing but q = permute_dims(y, p) (neither y nor q's output a graph
///     output, q without shared_ref) is written as q's output directly: axes_3'[d] = axes_3[p[d]],
///     the attention output takes q's shape, layout and prims, q's readers read it, q is removed.
/// Attention nodes whose axes do not parse as permutations of 0..3 are left alone. Records
/// {"fold_transpose", <permute_dims>, <attention>} for each removed permute_dims.
std::vector<Folded> FoldTranspose(ir::MSCGraph& graph, weights::TensorMap& weights);

/// Weight storage in float16 (`generate --precision fp16`; issue 9): every float32 weight tensor
/// that is read only through the listed (optype -> node.weights roles, e.g. {"nn.conv2d":
/// ["weight"]}) is stored as float16, rounded to nearest even (IEEE 754 binary16; the backend's
/// kernels widen it to float32 and accumulate in float32). The tensor's dtype becomes "float16"
/// in `weights` and in every node naming it. A tensor also read through a role or optype not
/// listed stays float32, and so does one with a finite value past float16's range (|x| > 65504)
/// rather than turn infinite. Returns the converted tensor names, sorted. Never throws.
std::vector<std::string> StoreWeightsAsFloat16(
    ir::MSCGraph& graph, weights::TensorMap& weights,
    const std::map<std::string, std::vector<std::string>>& roles);

/// Activation storage in float16 (`generate --precision fp16`; issue 9): a float32 node output
/// (not a graph input, not a graph output, not a weight) becomes "float16" when its producer and
/// every node reading it have an optype in `mixed` or `same`, and, for every node of a `same`
/// optype, its float32 inputs and outputs all become float16 or none does (those kernels write
/// their input's dtype: data movement, unary ops, reductions). `mixed` optypes read and write
/// either float dtype in any combination (the backend's kernels widen float16 on load, compute
/// and accumulate in float32 and round to nearest even once, on their store). The graph's inputs
/// and outputs keep their dtype, so the golden data do too. Returns the converted tensor names
/// in graph order. Never throws.
std::vector<std::string> StoreActivationsAsFloat16(ir::MSCGraph& graph,
                                                   const std::vector<std::string>& mixed,
                                                   const std::vector<std::string>& same);

}  // namespace msc::passes
