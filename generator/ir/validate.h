// Semantic checks of an MSCGraph against MSC's rules and the opdefs.
#pragma once

#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"

namespace msc::ir {

/// dtypes msc-codegen knows (MSC's DLDataTypeToString names).
bool IsKnownDtype(const std::string& dtype);

/// Checks, and reports ALL problems found in one msc::Error (one line each, "<source>: nodes[3]
/// (node 'relu'): ..."):
///  - duplicate node names, index != position;
///  - output tensor names other than "<node>:<i>", unknown dtypes, bad dims (< -1);
///  - inputs that name no output of an earlier node ("<node>:<idx>", split on the last ':'),
///    with "not topologically ordered" when the producer comes later (cycles included);
///  - parents not equal to the distinct producers of inputs, in first-use order;
///  - graph inputs/outputs that name no tensor; graph inputs not produced by `input` nodes;
///  - with `opdefs`: unknown optype, wrong number of tensor inputs, missing or unknown weight
///  roles,
///    missing required attrs, attrs that do not parse as their opdef type or break constraints.
/// Returns normally when the graph is valid.
void Validate(const MSCGraph& graph, const opdef::OpDefRegistry* opdefs);

}  // namespace msc::ir
