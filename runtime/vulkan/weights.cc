#include "weights.h"

#include "context.h"
#include "error.h"
#include "safetensors.h"

namespace msc_vk {

Weights::Weights(Context& ctx, const std::string& path, const std::vector<WeightSpec>& specs)
    : path_(path) {
  if (specs.empty()) return;
  SafetensorsFile file(path, "weights file");
  constexpr uint64_t kAlign = 256;
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  for (const WeightSpec& s : specs) {
    if (tensors_.count(s.name)) throw Error("weight '" + s.name + "' is declared twice");
    tensors_[s.name];  // reserve the name
    offsets.push_back(total);
    total += (static_cast<uint64_t>(NumElements(s.shape)) * DTypeSize(s.dtype) + kAlign - 1) /
             kAlign * kAlign;
  }
  buffer_ = std::make_unique<Buffer>(ctx, total, MemoryKind::kDevice, "weights");
  std::unique_ptr<Buffer> staging;
  uint8_t* dst = buffer_->mapped();
  if (!dst) {
    staging = std::make_unique<Buffer>(ctx, total, MemoryKind::kHost, "weights.staging");
    dst = staging->mapped();
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const WeightSpec& s = specs[i];
    Tensor t = MakeTensor(*buffer_, s.name, s.dtype, s.shape, offsets[i]);
    file.Read(s.name, s.dtype, s.shape, dst + offsets[i], t.bytes());
    tensors_[s.name] = t;
  }
  if (staging) {
    ctx.SubmitAndWait([&](VkCommandBuffer cmd) {
      VkBufferCopy region{0, 0, total};
      vkCmdCopyBuffer(cmd, staging->handle(), buffer_->handle(), 1, &region);
    });
  }
}

const Tensor& Weights::Get(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw Error("weight '" + name + "' was not declared (weights file '" + path_ + "')");
  return it->second;
}

}  // namespace msc_vk
