// Turning VkResult codes into msc_vk::Error exceptions.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

namespace msc_vk {

// Name of a VkResult, e.g. "VK_ERROR_OUT_OF_DEVICE_MEMORY".
const char* VkResultName(VkResult result);

// Throws Error("<what> failed: <VkResultName>") unless result == VK_SUCCESS.
void VkCheck(VkResult result, const std::string& what);

}  // namespace msc_vk
