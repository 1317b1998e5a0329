// The template context: an MSCGraph + its OpDefs turned into one JSON document that every backend's
// templates read. All derived facts (typed attrs with defaults, identifiers, byte sizes, layout
// dims, memory plan) are computed here, once, in C++ — never in templates.
//
// Shape of the context (keys are MSC's names; see templates/README.md for the full reference):
//   graph:   {name, ident, inputs:[T], outputs:[T], nodes:[N], weights:[T], optypes:[str],
//             prims:[{index,name,optype,parents,attrs}], memory:{alignment, peak_bytes,
//             naive_bytes, lower_bound_bytes, tensors:[{name, offset, nbytes}]} (only when the
//             backend plans memory)}
//   N (node): {index, name, ident, optype, ns, op, summary, parents:[str], inputs:[T],
//             outputs:[T], attrs:{typed}, attrs_raw:{str}, weights:{role: T}, is_output:bool,
//             code:{section: rendered snippet}}
//   T (tensor): {name, alias, dtype, layout, shape, prims, ndim, numel, nbytes, ident, producer,
//             producer_ident, out_idx, dims:{axis letter: size}, consumers:[node names],
//             is_graph_input, is_graph_output, is_weight, key (safetensors key for weights),
//             offset (arena byte offset, when planned)}
#pragma once

#include "generator/emit/backend_spec.h"
#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"

namespace msc::emit {

using Json = nlohmann::ordered_json;

/// Builds the context. Assumes ir::Validate(graph, &opdefs) passed. Throws msc::Error naming the
/// node for attrs that do not parse.
Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                  const BackendSpec& spec);

/// Epilogue fusion: a node whose optype is in `producers`, with one output that is not a graph
/// output and has exactly one consumer whose optype is in `epilogues` (taking it as its only
/// input), gets `fused_epilogue` = {name, ident, optype, attrs} of that consumer, and the consumer
/// gets `fused_into` = the producer's name. Templates then emit the producer with the epilogue and
/// nothing for the consumer; PlanMemory makes the consumer's output share the producer's bytes.
void FuseEpilogues(Json& graph, const std::vector<std::string>& producers,
                   const std::vector<std::string>& epilogues);

/// One arena for all activations (graph inputs, intermediates, graph outputs; not constants, which
/// are weights). Each tensor lives from its producer to its last consumer; graph inputs from before
/// the first node (the host writes them before the run), graph outputs to after the last. Outputs
/// of `alias_optypes` nodes and of fused epilogues share their input's bytes (output k <- input k;
/// get_item: input[index]); an alias group lives as long as its longest member. Greedy by size,
/// largest first, each block at the lowest `alignment`-aligned offset free for its whole lifetime.
/// Adds `offset` to every planned tensor in the context and graph.memory = {alignment, peak_bytes,
/// naive_bytes (each block at its own offset), lower_bound_bytes (the largest sum of aligned
/// blocks live at one step: no plan can use less), tensors}. Dynamic (-1) shapes are an msc::Error
/// (sizes must be static).
void PlanMemory(Json& graph, long long alignment, const std::vector<std::string>& alias_optypes);

}  // namespace msc::emit
