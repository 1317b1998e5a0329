// libFuzzer harness: the backend.yaml loader (generator/emit/backend_spec.cc on
// common/strict_yaml.cc).
//
//   input bytes -> <scratch>/fuzz/backend.yaml -> emit::LoadBackendSpec(<scratch>, "fuzz")
//     accepted: the spec's invariants hold (op_template, op_sections and files non-empty; weights,
//     golden and every output path relative without ".."; memory alignment 0 or a power of two),
//     and OpTemplateFor works for a few optypes;
//     rejected: msc::Error naming the backend.yaml path.
// LoadBackendSpec takes a folder and a backend name, so each input is written to a file on tmpfs.
#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "backend_spec";

bool Relative(const std::string& p) {
  boost::filesystem::path path(p);
  if (p.empty() || path.is_absolute()) return false;
  for (const auto& part : path)
    if (part == "..") return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=8192", msc::fuzz::DictFlag(kHarness)});
  boost::filesystem::create_directories(msc::fuzz::Scratch::Get().dir() + "/fuzz");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& scratch = msc::fuzz::Scratch::Get();
  const std::string path = scratch.Write("fuzz/backend.yaml", data, size);
  msc::emit::BackendSpec spec;
  if (!msc::fuzz::Accepts<msc::Error>(
          kHarness, path, [&] { spec = msc::emit::LoadBackendSpec(scratch.dir(), "fuzz"); }))
    return 0;
  if (spec.op_template.empty() || spec.op_sections.empty() || spec.files.empty())
    msc::fuzz::Finding(kHarness, "accepted a spec without op_template, op_sections or files");
  if ((!spec.weights_output.empty() && !Relative(spec.weights_output)) ||
      (!spec.golden_output.empty() && !Relative(spec.golden_output)))
    msc::fuzz::Finding(kHarness, "accepted a weights/golden path outside the output folder");
  for (const auto& f : spec.files)
    if (!Relative(f.output)) msc::fuzz::Finding(kHarness, "accepted output '" + f.output + "'");
  for (const auto& c : spec.copy)
    if (!Relative(c.to)) msc::fuzz::Finding(kHarness, "accepted copy target '" + c.to + "'");
  if (spec.memory.alignment < 0 || (spec.memory.alignment & (spec.memory.alignment - 1)) != 0)
    msc::fuzz::Finding(kHarness,
                       "accepted memory alignment " + std::to_string(spec.memory.alignment));
  for (const char* optype : {"nn.conv2d", "add", "msc.linear_bias", ""}) spec.OpTemplateFor(optype);
  return 0;
}
