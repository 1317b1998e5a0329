#include "vk_check.h"

#include "error.h"

namespace msc_vk {

const char* VkResultName(VkResult result) {
  switch (result) {
#define MSC_VK_CASE(x) \
  case x:              \
    return #x;
    MSC_VK_CASE(VK_SUCCESS)
    MSC_VK_CASE(VK_NOT_READY)
    MSC_VK_CASE(VK_TIMEOUT)
    MSC_VK_CASE(VK_INCOMPLETE)
    MSC_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    MSC_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    MSC_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    MSC_VK_CASE(VK_ERROR_DEVICE_LOST)
    MSC_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    MSC_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    MSC_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    MSC_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    MSC_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    MSC_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    MSC_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    MSC_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    MSC_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    MSC_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef MSC_VK_CASE
    default:
      return "VK_ERROR_UNKNOWN";
  }
}

void VkCheck(VkResult result, const std::string& what) {
  if (result == VK_SUCCESS) return;
  std::string hint;
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
    hint =
        ": the device ran out of memory (run a smaller batch, or pick a device with more memory "
        "with --device / MSC_VK_DEVICE)";
  else if (result == VK_ERROR_DEVICE_LOST)
    hint =
        ": the Vulkan device was lost (driver reset, GPU hang or crash); no result of this run "
        "can be trusted";
  throw Error(what + " failed: " + VkResultName(result) + " (" + std::to_string(result) + ")" +
              hint);
}

}  // namespace msc_vk
