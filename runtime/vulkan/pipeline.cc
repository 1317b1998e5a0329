#include "pipeline.h"

#include "context.h"
#include "error.h"
#include "vk_check.h"

namespace msc_vk {

Pipeline::Pipeline(Context& ctx, const std::string& stem, const uint32_t* words, size_t word_count,
                   const std::vector<VkDescriptorType>& types, uint32_t push_bytes,
                   const std::vector<uint32_t>& spec)
    : ctx_(ctx), push_bytes_(push_bytes) {
  const uint32_t max_push =
      ctx.limits().maxPushConstantsSize < 128 ? ctx.limits().maxPushConstantsSize : 128;
  if (push_bytes > max_push || push_bytes % 4 != 0) {
    throw Error("shader '" + stem + "': " + std::to_string(push_bytes) +
                " bytes of push constants (must be a multiple of 4 and <= " +
                std::to_string(max_push) + ")");
  }
  VkDevice dev = ctx.device();
  try {
    VkShaderModuleCreateInfo smci{};
    smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    smci.codeSize = word_count * sizeof(uint32_t);
    smci.pCode = words;
    VkCheck(vkCreateShaderModule(dev, &smci, nullptr, &module_),
            "vkCreateShaderModule('" + stem + "')");

    const uint32_t num_bindings = static_cast<uint32_t>(types.size());
    std::vector<VkDescriptorSetLayoutBinding> bindings(num_bindings);
    for (uint32_t i = 0; i < num_bindings; ++i) {
      bindings[i] = {i, types[i], 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    VkDescriptorSetLayoutCreateInfo dslci{};
    dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dslci.bindingCount = num_bindings;
    dslci.pBindings = bindings.data();
    VkCheck(vkCreateDescriptorSetLayout(dev, &dslci, nullptr, &set_layout_),
            "vkCreateDescriptorSetLayout");

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo plci{};
    plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &set_layout_;
    plci.pushConstantRangeCount = push_bytes ? 1 : 0;
    plci.pPushConstantRanges = push_bytes ? &range : nullptr;
    VkCheck(vkCreatePipelineLayout(dev, &plci, nullptr, &layout_), "vkCreatePipelineLayout");

    std::vector<VkSpecializationMapEntry> entries(spec.size());
    for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4u, 4};
    VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), spec.size() * 4,
                            spec.data()};
    VkComputePipelineCreateInfo cpci{};
    cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpci.stage.module = module_;
    cpci.stage.pName = "main";
    cpci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
    cpci.layout = layout_;
    VkCheck(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline_),
            "vkCreateComputePipelines('" + stem + "')");
  } catch (...) {
    Release();
    throw;
  }
}

Pipeline::~Pipeline() { Release(); }

void Pipeline::Release() {
  VkDevice dev = ctx_.device();
  if (pipeline_) vkDestroyPipeline(dev, pipeline_, nullptr);
  if (layout_) vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (module_) vkDestroyShaderModule(dev, module_, nullptr);
  pipeline_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  module_ = VK_NULL_HANDLE;
}

}  // namespace msc_vk
