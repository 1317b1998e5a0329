// libFuzzer harness: the generator's safetensors reader (generator/weights/safetensors.cc), which
// reads `--weights` and golden files.
//
//   input bytes -> <scratch>/fuzz.safetensors -> weights::ReadSafetensors(path, &metadata)
//     accepted: WriteSafetensors(tensors, metadata) -> ReadSafetensors gives the same tensors and
//     metadata (the writer's output is canonical, so a second write is byte-identical);
//     rejected: msc::Error naming the file.
// The reader's only API takes a path (it checks every size field against the file size before
// allocating), so each input is written to a file on tmpfs first.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "generator/common/error.h"
#include "generator/weights/weights.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "safetensors";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=16384", msc::fuzz::DictFlag(kHarness)});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace w = msc::weights;
  auto& scratch = msc::fuzz::Scratch::Get();
  const std::string path = scratch.Write("fuzz.safetensors", data, size);
  w::TensorMap tensors;
  std::map<std::string, std::string> metadata;
  if (!msc::fuzz::Accepts<msc::Error>(kHarness, path,
                                      [&] { tensors = w::ReadSafetensors(path, &metadata); }))
    return 0;
  // Round trip. Names and metadata are valid UTF-8 here (the reader's JSON parser checked), so the
  // writer must accept everything the reader returned.
  const std::string copy = scratch.dir() + "/copy.safetensors";
  w::TensorMap back;
  std::map<std::string, std::string> back_meta;
  try {
    w::WriteSafetensors(copy, tensors, metadata);
    back = w::ReadSafetensors(copy, &back_meta);
  } catch (const msc::Error& e) {
    msc::fuzz::Finding(kHarness, std::string("accepted file does not round-trip: ") + e.what());
  }
  if (back != tensors || back_meta != metadata)
    msc::fuzz::Finding(kHarness, "write -> read changed the tensors or the metadata");
  const std::string first = Slurp(copy);
  w::WriteSafetensors(copy, back, back_meta);
  if (Slurp(copy) != first) msc::fuzz::Finding(kHarness, "the writer's output is not canonical");
  return 0;
}
