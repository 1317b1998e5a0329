#include "generator/frontend/model.h"

#include <algorithm>

#include <boost/filesystem.hpp>
#include <nlohmann/json.hpp>

#include "generator/common/error.h"
#include "generator/frontend/onnx/onnx_import.h"

namespace msc::frontend {

namespace fs = boost::filesystem;
using Json = nlohmann::json;

LoadedModel LoadModel(const std::string& path,
                      const std::map<std::string, std::vector<int64_t>>& input_shapes,
                      size_t max_nodes) {
  LoadedModel m;
  if (!onnx_import::IsOnnxFile(path)) {
    m.graph = ir::LoadGraph(path, max_nodes);
    return m;
  }
  onnx_import::ImportOptions io;
  io.input_shapes = input_shapes;  // ONNX input names are the input nodes' names
  auto result = onnx_import::ImportOnnx(path, io);
  m.graph = std::move(result.graph);
  m.weights = std::move(result.weights);
  m.carries_weights = true;
  m.shapes_applied = true;
  if (m.graph.nodes.size() > max_nodes)
    throw Error(path + ": " + ir::TooManyNodesMessage(max_nodes));
  return m;
}

namespace {

/// Reads `file` and returns the tensors `names` of `graph` from it, checked against the graph.
weights::TensorMap ReadGoldenFile(const std::string& file, const ir::MSCGraph& graph,
                                  const std::vector<std::string>& names) {
  weights::TensorMap found = weights::ReadSafetensors(file);
  weights::TensorMap out;
  std::string problems;
  for (const auto& name : names) {
    const ir::MSCTensor* t = graph.FindTensor(name);
    auto it = found.find(name);
    if (it == found.end() && t && !t->alias.empty()) it = found.find(t->alias);
    if (it == found.end()) {
      problems += "\n  tensor " + Json(name).dump() +
                  (t && !t->alias.empty() ? " (alias " + Json(t->alias).dump() + ")" : "") +
                  ": missing";
      continue;
    }
    bool shape_ok = t && t->shape.size() == it->second.shape.size();
    for (size_t i = 0; shape_ok && i < t->shape.size(); ++i)
      shape_ok = t->shape[i] < 0 || t->shape[i] == it->second.shape[i];
    if (!t || t->dtype != it->second.dtype || !shape_ok) {
      problems += "\n  tensor " + Json(name).dump() + ": expected " +
                  (t ? t->dtype + " " + Json(t->shape).dump() : "?") + ", file has " +
                  it->second.dtype + " " + Json(it->second.shape).dump();
      continue;
    }
    out[name] = it->second;
  }
  if (!problems.empty()) throw Error(file + ": golden data does not match the graph:" + problems);
  return out;
}

}  // namespace

GoldenData LoadGoldenData(const std::string& dir_path, const ir::MSCGraph& graph) {
  GoldenData g;
  const fs::path dir(dir_path);
  if (!fs::is_directory(dir)) throw Error(dir_path + ": golden folder not found");
  // An ONNX backend-test folder (input_N.pb / output_N.pb TensorProtos) works as golden data too.
  const bool onnx_pb = !fs::exists(dir / "inputs.safetensors") &&
                       (fs::exists(dir / "input_0.pb") || fs::exists(dir / "output_0.pb"));
  if (onnx_pb) {
    onnx_import::ReadOnnxGolden(dir.string(), graph, &g.inputs, &g.outputs);
  } else {
    g.inputs = ReadGoldenFile((dir / "inputs.safetensors").string(), graph, graph.inputs);
    g.outputs = ReadGoldenFile((dir / "outputs.safetensors").string(), graph, graph.outputs);
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string fname = e.path().filename().string();
    if (e.path().extension() == ".safetensors" && fname != "inputs.safetensors" &&
        fname != "outputs.safetensors")
      g.extra_files.push_back(e.path().string());
  }
  std::sort(g.extra_files.begin(), g.extra_files.end());
  for (const auto& f : g.extra_files) weights::ReadSafetensors(f);  // fail now, not in a project
  return g;
}

}  // namespace msc::frontend
