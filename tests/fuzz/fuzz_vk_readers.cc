// libFuzzer harness: the Vulkan runtime's own file readers, which ship in every generated Vulkan
// project: runtime/vulkan/safetensors.cc (weights and golden files) and golden.cc (the golden
// comparison), compiled into this harness with dtype.cc; no Vulkan device is involved.
//
//   input bytes -> <scratch>/golden.safetensors -> msc_vk::SafetensorsFile(path, "golden file")
//     accepted: for every tensor, Entry / ReadBytes / Read with its own dtype and shape, a Read
//     with a wrong shape (must throw), then the golden comparison of the tensor against itself
//     (must pass: NaN matches NaN) and against its bytes reversed (any verdict), and Summary();
//     a name that is not in the file must throw;
//     rejected: msc_vk::Error naming the file.
// What RunMain does with a golden file, minus the model run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/vulkan/dtype.h"
#include "runtime/vulkan/error.h"
#include "runtime/vulkan/golden.h"
#include "runtime/vulkan/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kHarness = "vk_readers";

msc_vk::CompareResult Compare(const std::string& name, msc_vk::DType dtype,
                              const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                              size_t n) {
  switch (dtype) {
    case msc_vk::DType::kFloat32:
      return msc_vk::CompareFloat32(name, reinterpret_cast<const float*>(a.data()),
                                    reinterpret_cast<const float*>(b.data()), n);
    case msc_vk::DType::kFloat16:
      return msc_vk::CompareFloat16(name, reinterpret_cast<const uint16_t*>(a.data()),
                                    reinterpret_cast<const uint16_t*>(b.data()), n);
    default:
      return msc_vk::CompareExact(name, a.data(), b.data(), n, msc_vk::DTypeSize(dtype));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  msc::fuzz::AddDefaultFlags(argc, argv, {"-max_len=16384", msc::fuzz::DictFlag(kHarness)});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = msc::fuzz::Scratch::Get().Write("golden.safetensors", data, size);
  msc::fuzz::Accepts<msc_vk::Error>(kHarness, path, [&] {
    const msc_vk::SafetensorsFile file(path, "golden file");
    for (const std::string& name : file.Names()) {
      const msc_vk::SafetensorsEntry& e = file.Entry(name);
      const std::vector<uint8_t> bytes = file.ReadBytes(name);
      std::vector<uint8_t> again(bytes.size());
      file.Read(name, e.dtype, e.shape, again.data(), again.size());
      if (again != bytes) msc::fuzz::Finding(kHarness, "Read and ReadBytes differ for " + name);
      msc_vk::Shape wrong = e.shape;
      wrong.push_back(2);
      bool threw = false;
      try {
        file.Read(name, e.dtype, wrong, again.data(), again.size());
      } catch (const msc_vk::Error&) {
        threw = true;
      }
      if (!threw) msc::fuzz::Finding(kHarness, "Read accepted a wrong shape for " + name);
      const size_t item = msc_vk::DTypeSize(e.dtype);
      const size_t n = bytes.size() / item;
      // Aligned copies: the comparison reads floats / halves.
      std::vector<uint8_t> reversed(bytes.rbegin(), bytes.rend());
      const msc_vk::CompareResult self = Compare(name, e.dtype, bytes, bytes, n);
      if (!self.pass())
        msc::fuzz::Finding(kHarness, "a tensor differs from itself: " + self.Summary());
      Compare(name, e.dtype, bytes, reversed, n).Summary();
    }
    const std::string missing = "no such tensor \x01";
    bool threw = file.Has(missing);
    try {
      file.Entry(missing);
    } catch (const msc_vk::Error& err) {
      threw = std::string(err.what()).find(path) != std::string::npos;
    }
    if (!threw)
      msc::fuzz::Finding(kHarness,
                         "Entry of a missing name did not throw an error naming the file");
  });
  return 0;
}
