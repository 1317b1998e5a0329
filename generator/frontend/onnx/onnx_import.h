// ONNX frontend: an ONNX model file -> MSCGraph + weights, named as TVM's relax ONNX frontend
// followed by MSC's translation would name them.
//
//   * nodes get MSC optypes ("nn.conv2d", "msc.conv2d_bias", "msc.linear_bias", "nn.batch_norm" +
//     "get_item", ...) and MSC's names: the op name without namespace ("conv2d", "relu", "matmul"
//     for msc.linear*), made unique with "_1", "_2" ... in node order (MSC's SetExprName); a
//     get_item is "<producer>.<index>"; graph inputs keep their ONNX names;
//   * tensors are "<node>:<index>"; every tensor that holds an ONNX value has that value's name as
//     alias, so golden data, `--shape` and error messages can use the ONNX names;
//   * initializers and Constant outputs that an op takes as parameters become the node's weights
//     (roles weight/bias/gamma/beta/mean/var); other constants become `constant` nodes (weight
//     `const`); weight tensors are named "const", "const_1", ... with the initializer's name as
//     alias. Subgraphs that only compute on constants and static shapes (Shape -> Gather ->
//     Concat -> Reshape) are folded at import;
//   * where one ONNX op becomes several MSC nodes, each is named after its own optype in order
//     (e.g. Gemm with transA: "permute_dims", then "matmul").
//
// Supported: IR versions 3-8, default-domain opsets 1-17 (ops and attributes listed in
// docs/onnx-conformance.md); ONNX's checker and shape inference run first (onnx/checker.h,
// onnx/shape_inference/implementation.h of Debian's libonnx-dev).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generator/ir/graph.h"
#include "generator/weights/weights.h"

namespace msc::frontend::onnx_import {

struct ImportOptions {
  /// Graph input (ONNX name) -> static shape, overriding the model's dims (incl. dim_params).
  std::map<std::string, std::vector<int64_t>> input_shapes;
};

struct ImportResult {
  ir::MSCGraph graph;
  weights::TensorMap weights;  ///< keyed by weight tensor name ("const", "const_1", ...).
};

/// Imports `path`. Throws msc::Error naming the file and the node for: a file that is not an
/// ONNX model, a model ONNX's checker rejects, unsupported IR version / opset / domain, ops with no
/// converter (one error listing every unsupported op type with its node names and the opset),
/// unsupported attribute values (all of them, one line each), dims that stay unknown after shape
/// inference. Nothing is written anywhere.
ImportResult ImportOnnx(const std::string& path, const ImportOptions& options = {});

/// Whether `path` holds an ONNX model rather than MSCGraph JSON: the first non-blank byte is not
/// '{' or '[' and the file parses as an onnx.ModelProto with a graph. Never throws. ImportOnnx
/// accepts no file this rejects.
bool IsOnnxFile(const std::string& path);

/// Golden data of an ONNX backend test folder (test_data_set_N/input_K.pb, output_K.pb): the
/// TensorProtos as tensors keyed by the MSC graph's input / output tensor names, in order.
/// Throws msc::Error when the counts, dtypes or shapes do not match the graph.
void ReadOnnxGolden(const std::string& dir, const ir::MSCGraph& graph, weights::TensorMap* inputs,
                    weights::TensorMap* outputs);

}  // namespace msc::frontend::onnx_import
