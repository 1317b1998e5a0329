// Fusion decisions on an MSCGraph (issue 9 item 2): which activation consumers (relu, clip, and
// whatever else a backend's `epilogues` lists: vulkan takes every unary_math op) run as their
// producer's epilogue, which residual adds fold into a conv/GEMM producer, and which trees of
// elementwise nodes run as one kernel. A backend opts in with backend.yaml's fuse_* keys
// (emit::BackendSpec); emit::Context writes the decisions into the template context as
// fused_epilogue / fused_residual / fused_into / fused_chain (docs/template-context.md), and
// PlanMemory (memory_plan.h) lets fused outputs share bytes or get none.
//
// Epilogue fusion: a node whose optype is in `producers`, with one output that is not a graph
// output and has exactly one consumer whose optype is in `epilogues` (taking it as its only
// input), runs that consumer as its epilogue (NodeFusion::epilogue; the consumer's `into` = the
// producer). Templates then emit the producer with the epilogue and nothing for the consumer.
//
// Residual fusion: a node P whose optype is in `residual_producers`, with one output y that is not
// a graph output and whose only consumer is a node A of an optype in `residual` (e.g. add) with
// exactly two inputs and one output, y and R, where R is not y, R and A's output have y's dtype and
// shape exactly (no broadcasting), and R is ready when P runs (R's producer comes before P in node
// order, or R is a graph input or a constant's output): P computes act(P(...) + R)
// (NodeFusion::residual_add = A, residual_input = R's index in A's inputs) and A's `into` = P, its
// output sharing y's bytes (alias_input = y's index in A's inputs). Then, when A's output is not a
// graph output and its only consumer E is an epilogue as above, E is fused into P too. The
// producer's position is where the fused nodes now compute, so nothing reads their outputs earlier.
//
// Norm epilogues: after the above, let t be the producer P's last fused value (its output y, the
// residual sum, or the activation after them). A consumer N of t whose optype is in `norms` (e.g.
// nn.layer_norm), P's optype in `norm_producers`, N taking t as its only input and having one
// output z of t's dtype and shape, runs in P's epilogue too (NodeFusion::norm = N, N's `into` = P,
// N's `own_bytes`: z is a tensor of its own, written and t read at P's position). t's other
// readers, if any, still read t (NodeFusion::norm_keeps_input: t is also a graph output or read by
// another node, so P must store it).
//
// Split views (after the above; backend.yaml fuse_views): a node S of an optype in `view_splits`
// (one input x of a static shape, outputs differing from x in one dim only, whose sizes sum to
// x's) whose every piece is read, directly or through nodes of `view_through` optypes (trait
// view: reshape, squeeze, expand_dims, get_item), only at the inputs `view_consumers` lists for
// their optypes (e.g. msc.attention's q, k, v) is never computed: each consumer input reads x in
// place as a strided view (NodeFusion::input_views: x's name, an element offset, one stride per
// dim of the input's shape; a reshape of a non-contiguous piece must be expressible as strides,
// as torch's view() requires, else nothing is fused). S and the nodes in between get `view` and
// `into` = the last consumer (where x is read); none of their outputs may be a graph output.
//
// Elementwise chains (after the above: nodes fused there take no part): trees of elementwise nodes
// run as ONE kernel at the position of their last node, the root. A node can join when its optype
// is in `elementwise_ops` (its inputs and output float32 or float16: computed in float32, rounded
// once on the root's store; one or two inputs) or in `elementwise_selects` (three inputs: a
// condition of any dtype, then two float values; e.g. where), it has one output of a static shape,
// and, except for the root, that output is no graph output, is read by exactly one node, a member
// of the chain, and has the root output's shape (so the chain's outside inputs broadcast
// numpy-style to it). Chains grow from each root (nodes visited last to first) over its operands'
// producers, as long as they keep at most `max_ops` nodes and `max_inputs` distinct outside input
// tensors; a chain of one node is none. Members other than the root get `into` = the root.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "generator/analyses/dataflow.h"

namespace msc::analyses {

/// backend.yaml's fusion lists (emit::BackendSpec fuse_*); all empty: nothing is fused.
struct FusionOptions {
  std::vector<std::string> producers;            ///< fuse_producers
  std::vector<std::string> epilogues;            ///< fuse_epilogues
  std::vector<std::string> residual;             ///< fuse_residual
  std::vector<std::string> residual_producers;   ///< fuse_residual_producers
  std::vector<std::string> norms;                ///< fuse_epilogues.norms
  std::vector<std::string> norm_producers;       ///< fuse_epilogues.norm_producers
  std::vector<std::string> elementwise_ops;      ///< fuse_elementwise_ops
  std::vector<std::string> elementwise_selects;  ///< fuse_elementwise_selects
  long long max_ops = 0;                         ///< fuse_elementwise_max_ops
  long long max_inputs = 0;                      ///< fuse_elementwise_max_inputs
  std::vector<std::string> view_splits;          ///< fuse_views.splits
  std::vector<std::string> view_through;         ///< fuse_views.through
  /// fuse_views.consumers: optype -> the input indices it reads as strided views
  std::vector<std::pair<std::string, std::vector<size_t>>> view_consumers;
};

/// A consumer input read in place as a strided view of another tensor (split views, above).
struct InputView {
  std::string base;              ///< the tensor viewed; "" = none (the input is read as it is)
  int64_t offset = 0;            ///< elements
  std::vector<int64_t> strides;  ///< elements, one per dim of the input's shape
};

/// The decisions for one node; indices are node indices, -1 for none.
struct NodeFusion {
  long long epilogue = -1;      ///< the activation consumer run as this node's epilogue
  long long residual_add = -1;  ///< the add consumer run as this node's residual
  size_t residual_input = 0;    ///< which input of residual_add is the residual R
  long long into = -1;          ///< the producer (or chain root) this node was fused into
  size_t alias_input = 0;       ///< fused into a producer: the input whose bytes the output shares
  long long chain = -1;         ///< the chain (FusionPlan::chains) this node is a member of
  long long norm = -1;          ///< the norm consumer run in this node's epilogue
  bool norm_keeps_input = false;  ///< the norm's input is read elsewhere too: store it
  bool own_bytes = false;         ///< fused into a producer, with an output of its own (a norm)
  bool view =
      false;  ///< a split (or a view of its pieces) read in place by `into`: computes nothing
  std::vector<InputView> input_views;  ///< per input ({} when none is a view)
};

/// One fused elementwise chain.
struct Chain {
  struct Operand {
    bool step = false;  ///< false: the chain's inputs[index]; true: the value of step `index`
    size_t index = 0;
  };
  std::vector<size_t> members;  ///< node indices in node order; back() is the root
  /// The outside input tensors in first-use order, each as (member step, input k) of its first
  /// reader.
  std::vector<std::pair<size_t, size_t>> inputs;
  std::vector<std::vector<Operand>> operands;  ///< per member, per node input
};

struct FusionPlan {
  std::vector<NodeFusion> nodes;  ///< per graph node
  std::vector<Chain> chains;
};

/// The fusion decisions for dataflow.graph() (see above). Pure: reads the graph only.
FusionPlan PlanFusion(const Dataflow& dataflow, const FusionOptions& options);

}  // namespace msc::analyses
