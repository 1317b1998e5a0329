// The main() of a generated Vulkan project as the differential test runs it
// (tests/difftest/difftest.py copies this file over the project's main.cc): loads every graph
// input from a safetensors file, runs one inference and writes every graph output, bit for bit,
// to another safetensors file, which the test compares with the reference itself (per-element
// tolerances; the project's own golden check takes one atol/rtol for all outputs).
//
//   model INPUTS.safetensors OUTPUTS.safetensors
//
// MSC_VK_VALIDATION=1 runs under VK_LAYER_KHRONOS_validation; any validation message is printed
// and fails the run. Exit status: 0 ok, 1 validation messages, 2 any error ("error: ..." on
// stderr, e.g. an op helper rejecting its node, naming the node's output tensor).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "msc_vk.h"

std::unique_ptr<msc_vk::Model> BuildModel(msc_vk::Context& ctx, const std::string& weights_path);

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUTS.safetensors OUTPUTS.safetensors\n", argv[0]);
    return 2;
  }
  try {
    msc_vk::ContextOptions options;
    const char* validation = std::getenv("MSC_VK_VALIDATION");
    options.validation = validation != nullptr && std::strcmp(validation, "0") != 0;
    msc_vk::Context ctx(options);
    std::unique_ptr<msc_vk::Model> model = BuildModel(ctx, MSC_DATA_DIR "/weights.safetensors");
    msc_vk::SafetensorsFile inputs(argv[1], "inputs file");
    for (size_t i = 0; i < model->inputs().size(); ++i) {
      const msc_vk::Tensor& t = model->inputs()[i];
      std::vector<uint8_t> data(static_cast<size_t>(t.bytes()));
      inputs.Read(t.name, t.dtype, t.shape, data.data(), data.size());
      model->SetInput(i, data.data(), data.size());
    }
    model->Run();
    std::vector<msc_vk::SafetensorsTensor> outputs;
    for (size_t i = 0; i < model->outputs().size(); ++i) {
      const msc_vk::Tensor& t = model->outputs()[i];
      msc_vk::SafetensorsTensor out{t.name, t.dtype, t.shape,
                                    std::vector<uint8_t>(static_cast<size_t>(t.bytes()))};
      model->GetOutput(i, out.data.data(), out.data.size());
      outputs.push_back(std::move(out));
    }
    msc_vk::WriteSafetensors(argv[2], outputs);
    if (ctx.message_count() != 0) {
      for (const std::string& m : ctx.messages()) std::printf("validation: %s\n", m.c_str());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
