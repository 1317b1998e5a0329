// Import-time evaluation of ONNX nodes whose inputs are all known (constant folding).
//
// Exported models compute shapes at run time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
// torch.onnx's usual pattern); MSC's ops take such shapes as static attrs, so the importer folds
// these subgraphs as TVM's relax ONNX frontend does. Only integer / bool / float32 / float64
// tensors of at most kMaxFoldElements elements are folded; anything else is left to the converters.
// Semantics are the ONNX operator spec (onnx/docs/Operators.md, opsets 7-28).
#pragma once

#include <optional>
#include <vector>

#include <onnx/onnx_pb.h>

#include "generator/weights/values.h"
#include "generator/weights/weights.h"

namespace msc::frontend::onnx_import {

/// Largest tensor the folder produces (elements).
constexpr int64_t kMaxFoldElements = 1 << 20;

/// Whether the folder knows `op_type` (default domain).
bool CanFold(const std::string& op_type);

/// The opset from which reduction `op_type` takes its axes as input 1 instead of the `axes`
/// attribute: 13 for ReduceSum, 18 for every other Reduce* (onnx/docs/Changelog.md).
inline int64_t ReduceAxesInputSince(const std::string& op_type) {
  return op_type == "ReduceSum" ? 13 : 18;
}

/// Evaluates `node` (opset `opset`) on constant inputs (nullptr for an omitted optional input).
/// Returns nullopt when the case is not supported (dtype, size, attribute) — the node is then
/// converted like any other. Throws msc::Error for inputs the spec forbids (out-of-range gather
/// index, reshape to an incompatible size), naming the node.
std::optional<std::vector<weights::Tensor>> FoldNode(
    const onnx::NodeProto& node, const std::vector<const weights::Tensor*>& inputs, int64_t opset);

// The tensor value helpers (generator/weights/values.h), used by the converters under these names.
using weights::DoubleToInt64;
using weights::FitsInt64;
using weights::MakeIntTensor;
using weights::MakeTensor;
using weights::TensorDoubles;
using weights::TensorInts;

}  // namespace msc::frontend::onnx_import
