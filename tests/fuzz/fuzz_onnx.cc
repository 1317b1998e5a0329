// libFuzzer harness: the ONNX importer (generator/frontend/onnx: protobuf parse, ONNX's checker and
// shape inference from Debian's libonnx, constant folding, the per-op converters).
//
//   input bytes -> <scratch>/onnx/model.onnx -> onnx_import::ImportOnnx(path)
//     accepted: what `msc-codegen import` then does must succeed, because "what import writes,
//     generate accepts": ir::Validate(graph, &opdefs of the repo), BindGraphWeights(graph,
//     weights) (every weight the graph names was imported, with its dtype and shape), and
//     graph.json written by SaveGraphString parses and validates again; IsOnnxFile(path) (how
//     `generate` sniffs a model) is true;
//     rejected: msc::Error naming the model file.
// The model sits alone in its own folder, so external-data locations resolve to nothing outside
// the scratch folder (the importer also refuses absolute and ".." locations).
#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/weights/weights.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "onnx";
const msc::opdef::OpDefRegistry* g_opdefs = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=16384", msc::fuzz::DictFlag(kHarness)});
  g_opdefs = new msc::opdef::OpDefRegistry(
      msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs"));
  boost::filesystem::create_directories(msc::fuzz::Scratch::Get().dir() + "/onnx");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace onnx_import = msc::frontend::onnx_import;
  const std::string path = msc::fuzz::Scratch::Get().Write("onnx/model.onnx", data, size);
  onnx_import::ImportResult result;
  if (!msc::fuzz::Accepts<msc::Error>(kHarness, path,
                                      [&] { result = onnx_import::ImportOnnx(path); }))
    return 0;
  const char* stage = "Validate";
  try {
    msc::ir::Validate(result.graph, g_opdefs);
    stage = "BindGraphWeights";
    msc::weights::BindGraphWeights(result.graph, result.weights, path);
    stage = "SaveGraphString";
    const std::string json = msc::ir::SaveGraphString(result.graph);
    stage = "ParseGraph of the saved graph";
    const msc::ir::MSCGraph again = msc::ir::ParseGraph(json, "graph.json");
    stage = "Validate of the saved graph";
    msc::ir::Validate(again, g_opdefs);
  } catch (const std::exception& e) {
    msc::fuzz::Finding(kHarness, std::string("an imported model fails ") + stage + ": " + e.what());
  }
  if (!onnx_import::IsOnnxFile(path))
    msc::fuzz::Finding(kHarness, "ImportOnnx accepted a file IsOnnxFile does not recognize");
  return 0;
}
