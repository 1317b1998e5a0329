// Fault injection: a test hook that makes the runtime meet the failures real devices produce
// (out of device memory, a lost device, a missing optional feature, a missing shader) on any
// machine, so that their error paths can be tested. Off unless MSC_VK_FAULT is set.
//
//   MSC_VK_FAULT=<fault>[,<fault>...]
//     oom[@N]            the N-th vkAllocateMemory (default the 1st) returns
//                        VK_ERROR_OUT_OF_DEVICE_MEMORY instead of allocating
//     device-lost[@N]    the N-th vkQueueSubmit (default the 1st) returns VK_ERROR_DEVICE_LOST
//                        instead of submitting
//     no-feature=NAME    the device reports optional feature NAME as absent (shaderInt64,
//                        storageBuffer16BitAccess, storageBuffer8BitAccess, subgroupShuffle:
//                        compute subgroups with shuffles, DeviceFeatures::subgroup_shuffle_size)
//     no-shader=STEM     the embedded shader STEM (e.g. nn/conv2d) and its variants
//                        (nn/conv2d+sg, ...) are not found
//
// A malformed value throws msc_vk::Error naming the variable. Injection skips the real call, so
// no Vulkan object is left half-made and the validation layer sees only the calls made.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

namespace msc_vk {

// The result an injected fault gives for this call of `site` ("vkAllocateMemory",
// "vkQueueSubmit"), or VK_SUCCESS to make the real call. Counts the calls per site.
VkResult InjectedFault(const char* site);

// True if MSC_VK_FAULT names no-feature=`feature`.
bool FeatureFaultInjected(const std::string& feature);

// True if MSC_VK_FAULT names no-shader=`stem`.
bool ShaderFaultInjected(const std::string& stem);

}  // namespace msc_vk
