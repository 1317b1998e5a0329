// libFuzzer harness: MSCGraph JSON, along the paths the CLI takes with a graph file.
//
//   input bytes -> ir::ParseGraph(text, "fuzz.json")          (inspect / validate / generate)
//     -> ir::InspectGraph                                     (`msc-codegen inspect`: unvalidated)
//     -> SaveGraphString -> ParseGraph -> SaveGraphString     (round trip must be a fixed point)
//     -> ir::Validate(graph, nullptr) -> GraphToDot, GraphToPrototxt   (`visualize`)
//     -> ir::Validate(graph, &opdefs of the repo)             (`validate`, `generate`)
//     -> weights bound (made-up values), the vulkan backend's graph passes (fold_batch_norm), after
//        which the graph must still pass Validate               (`generate`)
//     -> emit::BuildContext with the vulkan backend.yaml      (`generate`: typed attrs, fusion,
//                                                              memory plan)
// The opdefs (opdefs/*.yaml) and the backend spec are loaded once. Only msc::Error may escape a
// stage, and ParseGraph / Validate errors must name "fuzz.json".
#include <cstddef>
#include <cstdint>
#include <string>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/emit/context.h"
#include "generator/ir/graph.h"
#include "generator/ir/inspect.h"
#include "generator/ir/validate.h"
#include "generator/ir/visualize.h"
#include "generator/opdef/opdef.h"
#include "generator/passes/passes.h"
#include "generator/weights/weights.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "graph";
const std::string kSource = "fuzz.json";

const msc::opdef::OpDefRegistry* g_opdefs = nullptr;
const msc::emit::BackendSpec* g_spec = nullptr;
constexpr int64_t kMaxWeightElements = 1 << 16;  // per weight: keeps an execution fast

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=65536", msc::fuzz::DictFlag(kHarness)});
  g_opdefs = new msc::opdef::OpDefRegistry(
      msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs"));
  g_spec = new msc::emit::BackendSpec(
      msc::emit::LoadBackendSpec(std::string(MSC_SOURCE_DIR) + "/templates", "vulkan"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using msc::Error;
  namespace ir = msc::ir;
  const std::string text(reinterpret_cast<const char*>(data), size);
  ir::MSCGraph graph;
  if (!msc::fuzz::Accepts<Error>(kHarness, kSource, [&] { graph = ir::ParseGraph(text, kSource); }))
    return 0;
  msc::fuzz::Accepts<Error>(kHarness, "", [&] { ir::InspectGraph(graph); });

  // Whatever ParseGraph accepts, SaveGraphString writes back as a graph that parses to itself.
  msc::fuzz::Accepts<Error>(kHarness, "", [&] {
    const std::string saved = ir::SaveGraphString(graph);
    std::string again;
    try {
      again = ir::SaveGraphString(ir::ParseGraph(saved, kSource));
    } catch (const Error& e) {
      msc::fuzz::Finding(kHarness, std::string("saved graph does not parse again: ") + e.what());
    }
    if (again != saved) msc::fuzz::Finding(kHarness, "save -> parse -> save is not a fixed point");
  });

  if (!msc::fuzz::Accepts<Error>(kHarness, kSource, [&] { ir::Validate(graph, nullptr); }))
    return 0;
  msc::fuzz::Accepts<Error>(kHarness, "", [&] {
    ir::GraphToDot(graph);
    ir::GraphToPrototxt(graph);
  });
  if (!msc::fuzz::Accepts<Error>(kHarness, kSource, [&] { ir::Validate(graph, g_opdefs); }))
    return 0;
  for (const auto& node : graph.nodes) {  // `generate` stops here for these (not an error path)
    const msc::opdef::OpDef* def = g_opdefs->Find(node.optype);
    if (def != nullptr && !def->not_for_inference.empty()) return 0;
  }
  // As `generate`: bind weights (made up here: every weight the graph names, all elements 0.5 in
  // float32, other dtypes the same bytes pattern; skipped for big weights), run the backend's graph
  // passes, which must keep the graph valid, then build the template context.
  msc::weights::TensorMap available;
  bool small = true;
  for (const auto& node : graph.nodes) {
    for (const auto& [role, t] : node.weights) {
      const int64_t numel = t.Numel(), item = ir::MSCTensor::DtypeBytes(t.dtype);
      small = small && numel >= 0 && numel <= kMaxWeightElements && item > 0;
      if (!small) break;
      std::vector<uint8_t> bytes(static_cast<size_t>(numel * item), 0);
      for (size_t k = item - 1; k < bytes.size(); k += item) bytes[k] = 0x3F;  // 0x3F000000 = 0.5f
      available[t.name] = msc::weights::Tensor{t.dtype, t.shape, std::move(bytes)};
    }
  }
  if (small) {
    msc::weights::TensorMap bound;
    if (!msc::fuzz::Accepts<Error>(kHarness, kSource, [&] {
          bound = msc::weights::BindGraphWeights(graph, available, kSource);
        }))
      return 0;
    if (!msc::fuzz::Accepts<Error>(kHarness, "",
                                   [&] { msc::passes::RunPasses(g_spec->passes, graph, bound); }))
      return 0;
    try {
      ir::Validate(graph, g_opdefs);
    } catch (const Error& e) {
      msc::fuzz::Finding(kHarness,
                         std::string("the graph passes broke a valid graph: ") + e.what());
    }
  }
  msc::fuzz::Accepts<Error>(kHarness, "",
                            [&] { msc::emit::BuildContext(graph, *g_opdefs, *g_spec); });
  return 0;
}
