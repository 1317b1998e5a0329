// The memory plan (issue 9): one arena for all activations of a graph (graph inputs,
// intermediates, graph outputs; not constants, which are weights), for backends that set
// backend.yaml's memory_plan (emit::BackendSpec memory_*). emit::Context writes it into the
// template context as each tensor's `offset`, node.in_place and graph.memory
// (docs/template-context.md).
//
// Each tensor lives from its producer to its last consumer; graph inputs from before the first
// node (the host writes them before the run), graph outputs to after the last. Outputs of
// `alias_optypes` nodes share their input's bytes (output k <- input k; get_item: input[index]);
// those of nodes fused into a producer (NodeFusion::into, no chain, not own_bytes) the bytes of
// their input alias_input, never the residual's (the producer reads R while it writes y, and R,
// live until the add's position, never shares y's bytes). Members of a fused elementwise chain
// other than its root are not planned (no offset: their values never leave the root's kernel) and
// read their inputs at the root's position, and so are split views (NodeFusion::view: the split
// and the views of its pieces, read in place at `into`, where the split's input is read). A norm
// fused into its producer (own_bytes) has bytes of its own, written, and its input read, at the
// producer's position. A node of a `concat_in_place` optype (attr `axis`) whose output dims before
// the axis are all 1 is in place when every input's alias group can be a slice of its output's
// (input k at the output's offset + the bytes of inputs 0..k-1; each group in one such concat at
// most, distinct, not the output's own, every slice offset a multiple of `alignment`): the
// producers then write into the output and the concat has nothing to do. The outputs of one node (a
// split's pieces) of one size whose alias groups end at the same step are slices of one block,
// output k at k * its aligned size (a kernel can write them as one evenly spaced span; the Vulkan
// runtime's split does). Slices nest; a group lives as long as its members and slices together; an
// alias group as long as its longest member. Placement is greedy by size, largest first, each block
// at the lowest `alignment`-aligned offset free for its whole lifetime (the "greedy by size" offset
// calculation of Pisarchyk & Lee 2020, "Efficient Memory Management for Deep Neural Net Inference",
// arXiv:2001.03288).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "generator/analyses/dataflow.h"
#include "generator/analyses/fusion.h"
#include "generator/opdef/opdef.h"

namespace msc::analyses {

/// backend.yaml's memory_plan (emit::BackendSpec memory_*).
struct MemoryOptions {
  long long alignment = 256;                 ///< bytes; every block and slice offset a multiple
  std::vector<std::string> alias_optypes;    ///< memory_alias
  std::vector<std::string> concat_in_place;  ///< memory_concat_in_place
};

struct MemoryPlan {
  struct Tensor {
    const std::string* name;  ///< points into the graph
    long long offset, nbytes;
  };
  std::vector<Tensor> tensors;  ///< every planned tensor, in node order (outputs in order)
  /// Planned tensor name (viewing the graph's string) -> byte offset in the arena.
  std::unordered_map<std::string_view, long long> offset;
  long long peak = 0;          ///< arena size in bytes
  long long naive = 0;         ///< bytes with each block at its own offset
  long long lower_bound = 0;   ///< the largest sum of aligned blocks live at one step
  std::vector<bool> in_place;  ///< per node: a concat whose inputs are written into its output
};

/// Plans dataflow.graph() after `fusion` (PlanFusion of the same graph). Attrs (get_item's
/// `index`, a concat's `axis`) are read as their opdef types them (defaults included). Throws
/// msc::Error naming the tensor, its node and the prims behind its dims for a dynamic (-1) shape
/// (sizes must be static: specialize with --shape), naming the node for a get_item without an
/// integer `index`, and for options.alignment <= 0.
MemoryPlan PlanMemory(const Dataflow& dataflow, const FusionPlan& fusion,
                      const opdef::OpDefRegistry& opdefs, const MemoryOptions& options);

/// The bytes of a tensor: Numel() x DtypeBytes(dtype); -1 for a dynamic shape.
long long TensorBytes(const ir::MSCTensor& tensor);

}  // namespace msc::analyses
