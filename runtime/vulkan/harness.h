// The main() of generated projects: golden check (default) or `--bench N`.
//
//   int main(int argc, char** argv) {
//     return msc_vk::RunMain(argc, argv, BuildModel, {MSC_DATA_DIR "/model.safetensors",
//                                                     MSC_DATA_DIR "/golden.safetensors"});
//   }
//
// Golden data (--golden PATH): a directory holding inputs.safetensors and outputs.safetensors
// (what python/msc_export writes: golden/), or one safetensors file holding both; tensors are
// keyed by the names given to Model::Input()/Model::Output() (the MSC tensor names, e.g.
// "inp_0:0", "relu:0"). Golden mode loads the inputs, runs once, compares
// each output (float32: |a-b| <= atol + rtol*|b|; other dtypes: exact) and prints one line per
// output with max abs/rel error. Exit status: 0 all outputs pass, 1 some output fails (or a
// Vulkan validation message was reported), 2 any error (bad arguments, no device, bad weights
// or golden file, missing shader, Vulkan failure) — printed as "error: <message>".
// `--save-outputs FILE` loads the golden inputs, runs once and writes every output, bit for bit,
// keyed by its tensor name, to the safetensors file FILE instead of comparing (exit status 0, or 1
// on validation messages, or 2 on errors): for a differential tester that compares them itself.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "golden.h"

namespace msc_vk {

class Context;
class Model;

struct MainOptions {
  std::string weights;        // --weights PATH
  std::string golden;         // --golden PATH (directory or file, see above)
  int device = -1;            // --device INDEX (-1: MSC_VK_DEVICE or automatic)
  int bench = 0;              // --bench N: N timed runs (0: golden check)
  int warmup = 5;             // --warmup N
  Tolerance tol;              // --atol X --rtol X
  bool validation = false;    // --validation
  bool list_devices = false;  // --list-devices
  bool verbose = false;       // --verbose
  bool profile = false;       // --profile: GPU time per op type (timestamp queries)
  bool help = false;          // -h / --help
  std::string save_outputs;   // --save-outputs FILE
};

// Usage text; `program` is argv[0].
std::string Usage(const std::string& program);
// Parses argv (argv[0] ignored) over `defaults`; throws Error on unknown or malformed options.
MainOptions ParseMainOptions(const std::vector<std::string>& args, const MainOptions& defaults);

// Builds the model on `ctx` reading weights from `weights_path`.
using BuildFn =
    std::function<std::unique_ptr<Model>(Context& ctx, const std::string& weights_path)>;

// Parses options, creates the Context, builds the model, runs the golden check or the
// benchmark. Never throws; returns the exit status described above.
int RunMain(int argc, char** argv, const BuildFn& build, const MainOptions& defaults = {});

}  // namespace msc_vk
