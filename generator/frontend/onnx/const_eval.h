// Import-time evaluation of ONNX nodes whose inputs are all known (constant folding).
//
// Exported models compute shapes at run time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
// torch.onnx's usual pattern); MSC's ops take such shapes as static attrs, so the importer folds
// these subgraphs as TVM's relax ONNX frontend does. Only integer / bool / float32 / float64
// tensors of at most kMaxFoldElements elements are folded; anything else is left to the converters.
// Semantics are the ONNX operator spec (onnx/docs/Operators.md, opsets 7-17).
#pragma once

#include <optional>
#include <vector>

#include <onnx/onnx_pb.h>

#include "generator/weights/weights.h"

namespace msc::frontend::onnx_import {

/// Largest tensor the folder produces (elements).
constexpr int64_t kMaxFoldElements = 1 << 20;

/// Whether the folder knows `op_type` (default domain).
bool CanFold(const std::string& op_type);

/// Evaluates `node` (opset `opset`) on constant inputs (nullptr for an omitted optional input).
/// Returns nullopt when the case is not supported (dtype, size, attribute) — the node is then
/// converted like any other. Throws msc::Error for inputs the spec forbids (out-of-range gather
/// index, reshape to an incompatible size), naming the node.
std::optional<std::vector<weights::Tensor>> FoldNode(
    const onnx::NodeProto& node, const std::vector<const weights::Tensor*>& inputs, int64_t opset);

/// Integer values of an integer tensor (int8..int64, uint8, bool); nullopt for floats.
std::optional<std::vector<int64_t>> TensorInts(const weights::Tensor& t);
/// x truncated toward zero to int64 as x86's cvttsd2si converts (what numpy, torch and ONNX
/// Runtime give there): NaN and values outside [-2^63, 2^63) become INT64_MIN. static_cast is
/// undefined behavior for those (found by tests/fuzz/fuzz_onnx).
int64_t DoubleToInt64(double x);
/// Whether x truncated toward zero is an int64 (false for NaN, +-inf and |x| >= 2^63): the
/// condition under which static_cast<int64_t>(x) is defined (C++17 [conv.fpint]).
bool FitsInt64(double x);
/// Values of a tensor as doubles (any numeric dtype incl. float16).
std::vector<double> TensorDoubles(const weights::Tensor& t);
/// A tensor of `dtype` and `shape` holding `values` (converted).
weights::Tensor MakeTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                           const std::vector<double>& values);
weights::Tensor MakeIntTensor(const std::string& dtype, const std::vector<int64_t>& shape,
                              const std::vector<int64_t>& values);

}  // namespace msc::frontend::onnx_import
