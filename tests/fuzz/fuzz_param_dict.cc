// libFuzzer harness: the TVM param-dict reader (generator/weights/param_dict.cc), i.e. the
// "<graph>_params.bin" files MSC saved with tvm.runtime.save_param_dict, and the content sniffing
// of `--weights` (weights::ReadWeights).
//
//   input bytes -> <scratch>/fuzz.params -> weights::ReadParamDict(path)
//                                        -> weights::ReadWeights(path)
// Either may reject the input with an msc::Error naming the file; when the input starts with the
// param-dict magic, ReadWeights must give exactly what ReadParamDict gives (same tensors, or an
// error as well). Accepted tensors must be self-consistent (data size = numel * item size).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "generator/common/error.h"
#include "generator/weights/weights.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "param_dict";
constexpr uint8_t kMagic[8] = {0xB7, 0x9C, 0x04, 0x05, 0x4F, 0x8D, 0xE5, 0xF7};  // LE 0xF7E5...

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=16384", msc::fuzz::DictFlag(kHarness)});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace w = msc::weights;
  const std::string path = msc::fuzz::Scratch::Get().Write("fuzz.params", data, size);
  w::TensorMap direct, sniffed;
  const bool ok =
      msc::fuzz::Accepts<msc::Error>(kHarness, path, [&] { direct = w::ReadParamDict(path); });
  const bool sniff_ok =
      msc::fuzz::Accepts<msc::Error>(kHarness, path, [&] { sniffed = w::ReadWeights(path); });
  if (size >= 8 && std::memcmp(data, kMagic, 8) == 0 && (ok != sniff_ok || direct != sniffed))
    msc::fuzz::Finding(kHarness, "ReadWeights disagrees with ReadParamDict on a param dict");
  for (const auto& [name, t] : direct) {
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;  // the reader checked for overflow
    if (static_cast<uint64_t>(numel * w::DtypeItemSize(t.dtype)) != t.data.size())
      msc::fuzz::Finding(kHarness, "tensor '" + name + "' has an inconsistent data size");
  }
  return 0;
}
