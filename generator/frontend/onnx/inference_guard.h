// Making ONNX's shape inference safe on untrusted models.
//
// The importer runs ONNX's own type-and-shape inference (onnx::shape_inference::InferShapes of the
// ONNX library it is built on: 1.23.2, or Debian's 1.12.0) before it converts anything. Several
// of ONNX's inference and data propagation functions read input dims, attribute lists or constant
// data without checking that they exist: a malformed but parseable model then crashes the process
// (null dereference, out-of-bounds read, SIGFPE) or hangs it instead of failing. The sites were
// found by tests/fuzz/fuzz_onnx (Gemm-6, GRU-3), by an audit of the v1.12.0 sources (onnx/defs/**,
// onnx/defs/shape_inference.h, onnx/defs/tensor_proto_util.cc) for every op type the importer
// takes, and by an audit of the 1.23.2 sources for the op types of opsets 18-28 and the data
// propagation context (Split-18, Einsum, Slice, Resize, Range, long rank-1 inputs); the table is
// in inference_guard.cc.
//
// Two layers:
//   - CheckConstantPayloads(): the byte size of Constant tensors, before ONNX's checker (whose
//     message, since ONNX 1.16, names no node), a msc::Error naming the file and the node;
//   - CheckDeclarations(): whole-model checks before inference (value types, dims), each a
//     msc::Error naming the file and the value;
//   - GuardedSchemaRegistry(): ONNX's schema registry with a check in front of each unsafe
//     inference function. A failed check throws ONNX's InferenceError, which InferShapes records
//     and skips like any inference that cannot conclude (error_mode 0), so neither the inference
//     nor the op's data propagation runs; the output's type stays unknown and the converter then
//     names the problem (e.g. "A and B must be 2-D").
// Only op types the importer can convert (or fold) reach inference (Importer::CheckOpTypes), so
// the guards cover those.
#pragma once

#include <string>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

namespace msc::frontend::onnx_import {

/// Checks, for the top-level graph of the model at `path` (subgraphs belong to op types the
/// importer rejects):
///   - every graph input, graph output and value_info that has a type is a dense tensor
///     (tensor_type), not a sparse tensor, sequence, map or optional;
///   - every declared dim_value is >= 0 and the product of a value's known dims fits in int64.
/// Throws msc::Error ("<path>: graph input 'x' ...").
void CheckDeclarations(const std::string& path, const onnx::GraphProto& graph);

/// Every Constant node's tensor `value` stored as raw_data holds exactly numel x element size
/// bytes (ONNX 1.12's ParseData copies raw_data without checking its length; from 1.16 the
/// checker refuses it without naming the node). Throws msc::Error "<path>: node 'c' (Constant):
/// value holds 3 bytes of raw_data, its shape needs 8".
void CheckConstantPayloads(const std::string& path, const onnx::GraphProto& graph);

/// The schema registry to hand to onnx::shape_inference::InferShapes: ONNX's own schemas, with the
/// checks of inference_guard.cc in front of the unsafe ones (patched copies, made once per
/// schema version). Not thread-safe: one process imports one model at a time.
const onnx::ISchemaRegistry* GuardedSchemaRegistry();

}  // namespace msc::frontend::onnx_import
