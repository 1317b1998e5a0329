// MSC's text form of a graph (MSC's ReprPrinter for MSCGraphNode / MSCJointNode / MSCTensorNode in
// apache/tvm src/contrib/msc/core/ir/graph.cc), with the "ID_<index>" node heads of MSC releases.
#pragma once

#include <string>

#include "generator/ir/graph.h"

namespace msc::ir {

/// "<name> <INPUTS: a:0| OUTPUTS: b:0>\n" then per prim "P_<i> name <PARENTS: ..| CHILDERN: ..>"
/// and per node:
///   ID_1 conv2d <PARENTS: inp_0| CHILDERN: relu>
///     IN: inp_0:0(inp_0)<1,3,4,4|float32|NCHW>
///     OUT: conv2d:0<1,6,4,4|float32|NCHW>
///     OPTYPE: nn.conv2d
///     ATTRS: strides=1,1 padding=0,0,0,0 ...
///     WEIGHTS:
///       weight: const(conv2d.weight)<6,3,1,1|float32|OIHW>
/// Tensors print prims for dynamic dims. Attrs and weights in stored order.
std::string InspectGraph(const MSCGraph& graph);

}  // namespace msc::ir
