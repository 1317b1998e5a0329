// msc_vk::Pipeline: shader module + descriptor set layout (bindings 0..N-1: storage or texel
// buffers)
// + pipeline layout (one push-constant range) + compute pipeline with specialization constants.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace msc_vk {

class Context;

class Pipeline {
 public:
  // `words`: SPIR-V of a compute shader with entry point "main". types[i]: descriptor type of
  // binding i (storage buffer or uniform texel buffer). `push_bytes` <= 128 (and the device's
  // maxPushConstantsSize). spec[i] is the value of constant_id i.
  Pipeline(Context& ctx, const std::string& stem, const uint32_t* words, size_t word_count,
           const std::vector<VkDescriptorType>& types, uint32_t push_bytes,
           const std::vector<uint32_t>& spec);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  VkPipeline handle() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  uint32_t push_bytes() const { return push_bytes_; }

 private:
  void Release();

  Context& ctx_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  uint32_t push_bytes_ = 0;
};

}  // namespace msc_vk
