// Shape specialization: turn a graph with dynamic dims (MSC prims) into a static one by giving
// the graph inputs concrete shapes.
//
// MSC writes a dynamic dim as -1 in `shape` and names its symbolic value in the tensor's `prims`
// (one entry per dim: a prim name such as "bz" or "MUL_3", or the literal dim "3"); the graph's
// `prims` list is the DAG of those values (apache/tvm src/contrib/msc/core/ir/graph_builder.cc,
// GraphBuilder::MatchOrCreatePrim; ../shared/reference/mscgraph_schema.md "Prim object").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generator/ir/graph.h"

namespace msc::ir {

/// Parses one `--shape` argument "NAME=1,3,224,224" into (NAME, dims). NAME may contain '='
/// (the last one splits). Throws msc::Error "--shape 'x': expected NAME=D0,D1,..." on bad text.
std::pair<std::string, std::vector<int64_t>> ParseShapeArg(const std::string& arg);

/// Replaces every dynamic dim of `graph` by its value under `input_shapes`, keyed by a graph
/// input's tensor name ("inp_0:0"), alias or node name ("inp_0").
///
/// Each given shape must have the input's rank and agree with its static dims; the prims of its
/// dynamic dims are bound to the given sizes, then the graph's prims are evaluated in order:
/// `shape` (attrs producer, out_idx, dim), `Int` (attr value), `Add Sub Mul Div FloorDiv Mod
/// FloorMod Max Min` (Div/Mod truncate toward zero like TIR's integer Div/Mod; FloorDiv/FloorMod
/// round toward -inf), `EQ NE LT LE GT GE` (0/1) and `if_then_else` (3 parents).
/// Afterwards every tensor's -1 dims hold their values, tensor `prims` are [] and the graph's
/// `prims` are empty (what MSC writes for a static graph).
///
/// Throws msc::Error naming the graph file and the input, prim or tensor when: a name is not a
/// graph input; a rank or static dim disagrees; two bindings of one prim disagree; a prim has an
/// unknown optype, a missing parent or divides by zero; a dynamic dim's prim has no value (the
/// message lists the inputs still needing --shape); a resulting dim is negative.
void SpecializeShapes(MSCGraph& graph,
                      const std::map<std::string, std::vector<int64_t>>& input_shapes);

}  // namespace msc::ir
