// msc_vk::Weights: all weights of a model in one device buffer, read from a safetensors file
// and uploaded once.
//
//   msc_vk::Weights weights(ctx, "model.safetensors", {
//       {"conv1.weight", msc_vk::DType::kFloat32, {64, 3, 7, 7}},
//       {"conv1.bias", msc_vk::DType::kFloat32, {64}},
//   });
//   msc_vk::Tensor w = weights.Get("conv1.weight");
//
// Each tensor's dtype and shape are checked against the file (an error names the file and the
// tensor). Offsets inside the buffer are 256-byte aligned (valid on every Vulkan device).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "buffer.h"

namespace msc_vk {

struct WeightSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
};

class Weights {
 public:
  // With an empty `specs` the file is not opened (graphs without weights).
  Weights(Context& ctx, const std::string& path, const std::vector<WeightSpec>& specs);
  // The weight tensor `name`; throws when it was not in `specs`.
  const Tensor& Get(const std::string& name) const;
  uint64_t bytes() const { return buffer_ ? buffer_->size() : 0; }

 private:
  std::string path_;
  std::unique_ptr<Buffer> buffer_;
  std::map<std::string, Tensor> tensors_;
};

}  // namespace msc_vk
