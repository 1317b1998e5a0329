// msc_vk::Context: Vulkan instance, debug messenger, physical/logical device and compute queue.
//
// Device selection, first match wins:
//   1. ContextOptions::device_index >= 0 (the generated main's `--device INDEX`);
//   2. the environment variable MSC_VK_DEVICE=INDEX;
//   3. the best device by type: discrete GPU > integrated GPU > virtual GPU > CPU (lavapipe).
// INDEX is the position in vkEnumeratePhysicalDevices order (see ListDevices()). A bad index or a
// machine without any Vulkan device throws msc_vk::Error naming the devices that do exist.
//
// Validation: with ContextOptions::validation (or MSC_VK_VALIDATION=1) the context enables
// VK_LAYER_KHRONOS_validation with synchronization validation. Whenever VK_EXT_debug_utils is
// available (always with the Khronos loader) a messenger records every validation or
// performance message of severity WARNING or ERROR, and every ERROR (of any layer, including
// layers enabled by VK_INSTANCE_LAYERS); tests assert the count is zero. Loader GENERAL warnings
// are not counted (printed with ContextOptions::verbose).
#pragma once

#include <vulkan/vulkan.h>

#include <mutex>
#include <string>
#include <vector>

namespace msc_vk {

struct ContextOptions {
  int device_index = -1;       // -1: MSC_VK_DEVICE, else automatic choice
  bool validation = false;     // enable Khronos validation + synchronization validation
  bool force_staging = false;  // treat the device as non-UMA (tests the staging-copy paths)
  int tiled_kernels = -1;      // shared-memory tiled GEMM: -1 auto (GPUs only), 0 never, 1 always
  bool verbose = false;        // print the chosen device to stderr
  // Tests: do not enable the optional features below even when the device has them (as on a
  // device without them: "+ext" kernels then fail with Error naming the kernel and the feature).
  bool disable_optional_features = false;
  uint64_t fence_timeout_ns = 120ull * 1000 * 1000 * 1000;  // a GPU job longer than this fails
};

// One physical device as vkEnumeratePhysicalDevices reports it.
struct DeviceInfo {
  int index = 0;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
};

// Optional device features enabled at device creation when the device has them. The "+ext"
// shader variants (int64 / float16 / bool tensors, see shaders/common/dtype.glsl) need all of
// them and Vulkan 1.1; float32/int32 kernels need none. Program::AddKernel checks a shader's
// SPIR-V capabilities against these and names the kernel and the missing feature.
struct DeviceFeatures {
  bool vulkan_1_1 = false;    // device API >= 1.1 (SPIR-V 1.3 modules), not an optional feature
  bool shader_int64 = false;  // VkPhysicalDeviceFeatures::shaderInt64
  bool storage_buffer_16bit_access = false;  // VkPhysicalDevice16BitStorageFeatures
  bool storage_buffer_8bit_access = false;   // VK_KHR_8bit_storage
  // Compute-stage subgroups with basic + shuffle operations (VkPhysicalDeviceSubgroupProperties,
  // Vulkan 1.1): their size (lanes), else 0. The "+sg" kernel variants (register-blocked GEMM
  // on CPU devices, shaders/common/gemm.glsl SG) need it.
  uint32_t subgroup_shuffle_size = 0;
};

// "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other".
const char* DeviceTypeName(VkPhysicalDeviceType type);
// Lists the Vulkan devices (creates and destroys a throw-away instance).
std::vector<DeviceInfo> ListDevices();

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkCommandPool command_pool() const { return command_pool_; }
  const ContextOptions& options() const { return options_; }
  const DeviceInfo& info() const { return info_; }
  const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
  // Optional features enabled on the device (see DeviceFeatures).
  const DeviceFeatures& features() const { return features_; }

  // True when device-local memory is host-visible and coherent (CPU devices such as lavapipe,
  // most integrated GPUs): buffers are then mapped and written directly, no staging copies.
  bool uma() const { return uma_; }
  // True on GPUs (discrete/integrated/virtual): shared-memory tiling pays off there. False on
  // CPU devices, which get the register-blocked kernels without shared memory.
  bool prefers_shared_memory() const;
  // Whether the GEMM ops use the shared-memory tiled variant: ContextOptions::tiled_kernels, or
  // prefers_shared_memory() when that is -1.
  bool use_tiled_kernels() const;
  // "llvmpipe (LLVM 15.0.6, 256 bits) [CPU, Vulkan 1.3.230, index 0]".
  std::string Describe() const;

  // Index of a memory type allowed by `type_bits` having all `required` flags, preferring one
  // that also has `preferred`; throws when none exists.
  uint32_t FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags required,
                          VkMemoryPropertyFlags preferred) const;

  // Records `record` into a one-time command buffer, submits it and waits (weight uploads).
  template <class F>
  void SubmitAndWait(F&& record) {
    VkCommandBuffer cmd = BeginOneTime();
    record(cmd);
    EndOneTimeAndWait(cmd);
  }
  // Submits one primary command buffer and blocks until it finished (fence wait with timeout).
  void SubmitAndWait(VkCommandBuffer cmd, VkFence fence) const;

  // Counted validation / driver messages seen so far (see the header comment), each also
  // printed to stderr as "vulkan: ERROR: ..." / "vulkan: WARNING: ...".
  size_t message_count() const;
  std::vector<std::string> messages() const;
  void ClearMessages();

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL OnMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                  VkDebugUtilsMessageTypeFlagsEXT types,
                                                  const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                  void* user);
  void CreateInstance();
  void PickPhysicalDevice();
  void CreateDevice();
  void Release();  // destroys every handle created so far (destructor, failed constructor)
  VkCommandBuffer BeginOneTime();
  void EndOneTimeAndWait(VkCommandBuffer cmd);

  ContextOptions options_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  DeviceInfo info_;
  DeviceFeatures features_;
  bool uma_ = false;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;

  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

}  // namespace msc_vk
