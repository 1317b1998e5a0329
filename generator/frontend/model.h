// Frontends: where a source format ends. Every format msc-codegen reads (MSCGraph JSON, ONNX)
// becomes an MSCGraph, the weights the model file itself carries, and golden tensors keyed by the
// graph's tensor names; every stage after this (validate, specialize, bind weights, passes,
// analyses, render, write) sees only those.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "generator/ir/graph.h"
#include "generator/weights/weights.h"

namespace msc::frontend {

struct LoadedModel {
  ir::MSCGraph graph;
  /// The model file carries its weights (ONNX initializers, in `weights`, keyed by MSC weight
  /// name); false for MSCGraph JSON, whose weights come from a separate file.
  bool carries_weights = false;
  weights::TensorMap weights;
  /// The frontend applied the input shapes itself (ONNX: at import, before shape inference);
  /// false: the graph's dynamic dims are still to be specialized (ir::SpecializeShapes).
  bool shapes_applied = false;
};

/// Loads `path`: ONNX when its content is an ONNX model (onnx_import::IsOnnxFile), else MSCGraph
/// JSON (ir::LoadGraph, at most `max_nodes` nodes; an imported model is held to the same limit).
/// `input_shapes` (graph input -> dims) go to the ONNX importer; JSON graphs are returned as read.
/// Throws msc::Error naming the file (and the JSON path or ONNX node).
LoadedModel LoadModel(const std::string& path,
                      const std::map<std::string, std::vector<int64_t>>& input_shapes,
                      size_t max_nodes);

/// Golden data of a graph: the tensors its golden test feeds and expects.
struct GoldenData {
  weights::TensorMap inputs;   ///< keyed by graph input tensor name
  weights::TensorMap outputs;  ///< keyed by graph output tensor name
  /// Other *.safetensors files of the folder (e.g. a dataset), sorted; each was read once to
  /// check that it is a valid safetensors file. Copied verbatim into projects.
  std::vector<std::string> extra_files;
};

/// Reads the golden folder `dir` for `graph`: inputs.safetensors and outputs.safetensors (a tensor
/// found by its name or its alias; dtype and static dims must match the graph), or an ONNX
/// backend-test folder (input_N.pb, output_N.pb; onnx_import::ReadOnnxGolden). Throws msc::Error
/// naming the folder or file and listing every tensor that is missing or does not match.
GoldenData LoadGoldenData(const std::string& dir, const ir::MSCGraph& graph);

}  // namespace msc::frontend
