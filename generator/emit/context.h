// The template context: an MSCGraph + its OpDefs turned into one JSON document that every backend's
// templates read. All derived facts (typed attrs with defaults, identifiers, byte sizes, layout
// dims, memory plan) are computed here, once, in C++ — never in templates.
//
// Shape of the context (keys are MSC's names; see templates/README.md for the full reference):
//   graph:   {name, ident, inputs:[T], outputs:[T], nodes:[N], weights:[T], optypes:[str],
//             prims:[{index,name,optype,parents,attrs}], memory:{alignment, peak_bytes, naive_bytes,
//             tensors:[{name, offset, nbytes}]} (only when the backend plans memory)}
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
Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs, const BackendSpec& spec);

/// Arena plan for intermediate tensors (not graph inputs/outputs, not weights): each lives from
/// its producer to its last consumer; greedy by size (largest first), each placed at the lowest
/// `alignment`-aligned offset free for its whole lifetime. Adds `offset` to those tensors in
/// graph.nodes[*].outputs and graph.nodes[*].inputs, and graph.memory = {alignment, peak_bytes,
/// naive_bytes, tensors}. Dynamic (-1) shapes are an msc::Error (sizes must be static).
void PlanMemory(Json& graph, long long alignment);

}  // namespace msc::emit
