#include "context.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "error.h"
#include "fault.h"
#include "vk_check.h"

namespace msc_vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr const char* kNoDriverHint =
    "install a Vulkan driver (Debian: mesa-vulkan-drivers provides the lavapipe CPU device) "
    "and check VK_ICD_FILENAMES / VK_DRIVER_FILES";

bool HasExtension(const char* layer, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> props(n);
  if (vkEnumerateInstanceExtensionProperties(layer, &n, props.data()) != VK_SUCCESS) return false;
  for (const auto& p : props) {
    if (std::strcmp(p.extensionName, name) == 0) return true;
  }
  return false;
}

bool HasLayer(const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> props(n);
  if (vkEnumerateInstanceLayerProperties(&n, props.data()) != VK_SUCCESS) return false;
  for (const auto& p : props) {
    if (std::strcmp(p.layerName, name) == 0) return true;
  }
  return false;
}

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

int TypeRank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 1;
    default:
      return 0;
  }
}

bool ComputeQueueFamily(VkPhysicalDevice dev, uint32_t* family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(dev, &n, nullptr);
  std::vector<VkQueueFamilyProperties> props(n);
  vkGetPhysicalDeviceQueueFamilyProperties(dev, &n, props.data());
  for (uint32_t i = 0; i < n; ++i) {
    if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      *family = i;
      return true;
    }
  }
  return false;
}

std::string VersionString(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string DeviceListString(const std::vector<DeviceInfo>& devices) {
  std::string s;
  for (const DeviceInfo& d : devices) {
    s += "\n  " + std::to_string(d.index) + ": " + d.name + " (" + DeviceTypeName(d.type) + ")";
  }
  return s;
}

std::vector<DeviceInfo> DescribeDevices(const std::vector<VkPhysicalDevice>& devices) {
  std::vector<DeviceInfo> out;
  for (size_t i = 0; i < devices.size(); ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(devices[i], &p);
    out.push_back({static_cast<int>(i), p.deviceName, p.deviceType, p.apiVersion});
  }
  return out;
}

// Creates an instance; converts "no driver" results into a helpful error.
VkInstance CreateInstanceOrThrow(const VkInstanceCreateInfo& ci) {
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&ci, nullptr, &instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    throw Error(std::string("no Vulkan device found: vkCreateInstance returned "
                            "VK_ERROR_INCOMPATIBLE_DRIVER (no Vulkan driver is installed); ") +
                kNoDriverHint);
  }
  VkCheck(r, "vkCreateInstance");
  return instance;
}

std::vector<VkPhysicalDevice> PhysicalDevices(VkInstance instance) {
  uint32_t n = 0;
  VkCheck(vkEnumeratePhysicalDevices(instance, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(n);
  if (n)
    VkCheck(vkEnumeratePhysicalDevices(instance, &n, devices.data()), "vkEnumeratePhysicalDevices");
  devices.resize(n);
  return devices;
}

}  // namespace

const char* DeviceTypeName(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU";
    default:
      return "other";
  }
}

std::vector<DeviceInfo> ListDevices() {
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  VkInstance instance = CreateInstanceOrThrow(ci);
  std::vector<DeviceInfo> out;
  try {
    out = DescribeDevices(PhysicalDevices(instance));
  } catch (...) {
    vkDestroyInstance(instance, nullptr);
    throw;
  }
  vkDestroyInstance(instance, nullptr);
  return out;
}

Context::Context(const ContextOptions& options) : options_(options) {
  if (EnvFlag("MSC_VK_VALIDATION")) options_.validation = true;
  try {
    CreateInstance();
    PickPhysicalDevice();
    CreateDevice();
  } catch (...) {
    Release();
    throw;
  }
}

Context::~Context() { Release(); }

void Context::Release() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
  command_pool_ = VK_NULL_HANDLE;
  device_ = VK_NULL_HANDLE;
  messenger_ = VK_NULL_HANDLE;
  instance_ = VK_NULL_HANDLE;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Context::OnMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                  VkDebugUtilsMessageTypeFlagsEXT types,
                                                  const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                  void* user) {
  auto* self = static_cast<Context*>(user);
  const bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  // Loader chatter ("env var VK_INSTANCE_LAYERS defined ...") is a GENERAL warning: not counted.
  const bool counted = error || (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)) != 0;
  std::string text = error ? "ERROR: " : "WARNING: ";
  text += (data && data->pMessage) ? data->pMessage : "(no message)";
  if (!counted) {
    if (self->options_.verbose) std::fprintf(stderr, "vulkan: %s\n", text.c_str());
    return VK_FALSE;
  }
  std::fprintf(stderr, "vulkan: %s\n", text.c_str());
  std::lock_guard<std::mutex> lock(self->messages_mutex_);
  self->messages_.push_back(std::move(text));
  return VK_FALSE;
}

void Context::CreateInstance() {
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  bool features_ext = false;
  if (options_.validation) {
    if (!HasLayer(kValidationLayer)) {
      throw Error(std::string("validation requested but ") + kValidationLayer +
                  " is not installed (Debian: vulkan-validationlayers)");
    }
    layers.push_back(kValidationLayer);
    features_ext = HasExtension(kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    if (features_ext) extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  const bool debug_utils =
      HasExtension(nullptr, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
      (options_.validation && HasExtension(kValidationLayer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME));
  if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

  VkDebugUtilsMessengerCreateInfoEXT messenger_ci{};

  messenger_ci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                             VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                             VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_ci.pfnUserCallback = &Context::OnMessage;
  messenger_ci.pUserData = this;

  const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  VkApplicationInfo app{};

  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "msc_vk";
  app.pEngineName = "msc_vk";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  const void* chain = nullptr;
  if (debug_utils) {
    messenger_ci.pNext = chain;
    chain = &messenger_ci;
  }
  if (features_ext) {
    features.pNext = chain;
    chain = &features;
  }
  ci.pNext = chain;
  instance_ = CreateInstanceOrThrow(ci);

  if (debug_utils) {
    messenger_ci.pNext = nullptr;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create) throw Error("vkCreateDebugUtilsMessengerEXT is not available");
    VkCheck(create(instance_, &messenger_ci, nullptr, &messenger_),
            "vkCreateDebugUtilsMessengerEXT");
  }
}

void Context::PickPhysicalDevice() {
  std::vector<VkPhysicalDevice> devices = PhysicalDevices(instance_);
  if (devices.empty()) {
    throw Error(
        std::string("no Vulkan device found (vkEnumeratePhysicalDevices returned 0 devices); ") +
        kNoDriverHint);
  }
  std::vector<DeviceInfo> infos = DescribeDevices(devices);

  int index = options_.device_index;
  std::string source = "--device";
  if (index < 0) {
    if (const char* env = std::getenv("MSC_VK_DEVICE"); env && *env) {
      char* end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v < 0) {
        throw Error(std::string("MSC_VK_DEVICE='") + env +
                    "' is not a device index; devices:" + DeviceListString(infos));
      }
      index = static_cast<int>(v);
      source = "MSC_VK_DEVICE";
    }
  }
  if (index >= static_cast<int>(devices.size())) {
    throw Error("Vulkan device index " + std::to_string(index) + " (" + source +
                ") is out of range; " + std::to_string(devices.size()) +
                " device(s):" + DeviceListString(infos));
  }
  if (index < 0) {
    int best_rank = -1;
    for (size_t i = 0; i < devices.size(); ++i) {
      uint32_t family;
      if (!ComputeQueueFamily(devices[i], &family)) continue;
      if (TypeRank(infos[i].type) > best_rank) {
        best_rank = TypeRank(infos[i].type);
        index = static_cast<int>(i);
      }
    }
    if (index < 0)
      throw Error("no Vulkan device has a compute queue; devices:" + DeviceListString(infos));
  }
  physical_device_ = devices[index];
  info_ = infos[index];
  if (!ComputeQueueFamily(physical_device_, &queue_family_)) {
    throw Error("Vulkan device " + std::to_string(index) + " (" + info_.name +
                ") has no compute queue");
  }
  vkGetPhysicalDeviceProperties(physical_device_, &properties_);
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory_properties_);

  const VkMemoryPropertyFlags shared = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  bool has_shared = false;
  for (uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
    if ((memory_properties_.memoryTypes[i].propertyFlags & shared) == shared) has_shared = true;
  }
  uma_ = has_shared && !options_.force_staging &&
         (info_.type == VK_PHYSICAL_DEVICE_TYPE_CPU ||
          info_.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU);
  if (options_.verbose) std::fprintf(stderr, "msc_vk: using %s\n", Describe().c_str());
}

namespace {

bool HasDeviceExtension(VkPhysicalDevice dev, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(dev, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> props(n);
  if (vkEnumerateDeviceExtensionProperties(dev, nullptr, &n, props.data()) != VK_SUCCESS)
    return false;
  for (const auto& p : props) {
    if (std::strcmp(p.extensionName, name) == 0) return true;
  }
  return false;
}

}  // namespace

void Context::CreateDevice() {
  const float priority = 1.0f;
  // Optional features (DeviceFeatures): queried through vkGetPhysicalDeviceFeatures2 (Vulkan
  // 1.1), enabled when present unless disable_optional_features.
  VkPhysicalDevice8BitStorageFeaturesKHR f8{};
  f8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR;
  VkPhysicalDevice16BitStorageFeatures f16{};
  f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  std::vector<const char*> extensions;
  const bool v11 = info_.api_version >= VK_API_VERSION_1_1;
  const bool has_8bit_ext = v11 && HasDeviceExtension(physical_device_, "VK_KHR_8bit_storage");
  features_.vulkan_1_1 = v11;
  if (v11 && !options_.disable_optional_features) {
    f2.pNext = &f16;
    if (has_8bit_ext) f16.pNext = &f8;
    vkGetPhysicalDeviceFeatures2(physical_device_, &f2);
    features_.shader_int64 =
        f2.features.shaderInt64 == VK_TRUE && !FeatureFaultInjected("shaderInt64");
    features_.storage_buffer_16bit_access = f16.storageBuffer16BitAccess == VK_TRUE &&
                                            !FeatureFaultInjected("storageBuffer16BitAccess");
    features_.storage_buffer_8bit_access =
        f8.storageBuffer8BitAccess == VK_TRUE && !FeatureFaultInjected("storageBuffer8BitAccess");
    VkPhysicalDeviceSubgroupProperties sg{};
    sg.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &sg;
    vkGetPhysicalDeviceProperties2(physical_device_, &p2);
    const VkSubgroupFeatureFlags ops =
        VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    if ((sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
        (sg.supportedOperations & ops) == ops && !FeatureFaultInjected("subgroupShuffle"))
      features_.subgroup_shuffle_size = sg.subgroupSize;
    // Enable exactly these (everything else off).
    VkPhysicalDeviceFeatures2 enable{};
    f2.features = enable.features;
    f2.features.shaderInt64 = features_.shader_int64 ? VK_TRUE : VK_FALSE;
    f16 = VkPhysicalDevice16BitStorageFeatures{};
    f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    f16.storageBuffer16BitAccess = features_.storage_buffer_16bit_access ? VK_TRUE : VK_FALSE;
    f8 = VkPhysicalDevice8BitStorageFeaturesKHR{};
    f8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR;
    f8.storageBuffer8BitAccess = features_.storage_buffer_8bit_access ? VK_TRUE : VK_FALSE;
    f2.pNext = &f16;
    if (features_.storage_buffer_8bit_access) {
      f16.pNext = &f8;
      extensions.push_back("VK_KHR_8bit_storage");
    }
  }
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  if (features_.vulkan_1_1) dci.pNext = &f2;  // features via the pNext chain, pEnabledFeatures null
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VkCheck(vkCreateDevice(physical_device_, &dci, nullptr, &device_),
          "vkCreateDevice(" + info_.name + ")");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pci{};

  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  VkCheck(vkCreateCommandPool(device_, &pci, nullptr, &command_pool_), "vkCreateCommandPool");
}

bool Context::prefers_shared_memory() const { return info_.type != VK_PHYSICAL_DEVICE_TYPE_CPU; }

bool Context::use_tiled_kernels() const {
  return options_.tiled_kernels < 0 ? prefers_shared_memory() : options_.tiled_kernels != 0;
}

std::string Context::Describe() const {
  return info_.name + " [" + DeviceTypeName(info_.type) + ", Vulkan " +
         VersionString(info_.api_version) + ", index " + std::to_string(info_.index) +
         (uma_ ? ", unified memory" : "") + "]";
}

uint32_t Context::FindMemoryType(uint32_t type_bits, VkMemoryPropertyFlags required,
                                 VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = memory_properties_.memoryTypes[i].propertyFlags;
    if ((f & required) != required) continue;
    if ((f & preferred) == preferred) return i;
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  if (fallback < 0) {
    throw Error("device " + info_.name + " has no memory type with property flags 0x" +
                std::to_string(required));
  }
  return static_cast<uint32_t>(fallback);
}

void Context::SubmitAndWait(VkCommandBuffer cmd, VkFence fence) const {
  VkCheck(vkResetFences(device_, 1, &fence), "vkResetFences");
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  const VkResult injected = InjectedFault("vkQueueSubmit");
  VkCheck(injected != VK_SUCCESS ? injected : vkQueueSubmit(queue_, 1, &si, fence),
          "vkQueueSubmit");
  VkResult r = vkWaitForFences(device_, 1, &fence, VK_TRUE, options_.fence_timeout_ns);
  if (r == VK_TIMEOUT) {
    throw Error("GPU work did not finish within " +
                std::to_string(options_.fence_timeout_ns / 1000000000ull) +
                " s (fence timeout) on " + info_.name);
  }
  VkCheck(r, "vkWaitForFences");
}

VkCommandBuffer Context::BeginOneTime() {
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  VkCheck(vkAllocateCommandBuffers(device_, &ai, &cmd), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VkResult r = vkBeginCommandBuffer(cmd, &bi);
  if (r != VK_SUCCESS) vkFreeCommandBuffers(device_, command_pool_, 1, &cmd);
  VkCheck(r, "vkBeginCommandBuffer");
  return cmd;
}

void Context::EndOneTimeAndWait(VkCommandBuffer cmd) {
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkResult r = vkEndCommandBuffer(cmd);
  if (r == VK_SUCCESS) r = vkCreateFence(device_, &fci, nullptr, &fence);
  try {
    VkCheck(r, "vkEndCommandBuffer/vkCreateFence");
    SubmitAndWait(cmd, fence);
  } catch (...) {
    vkDeviceWaitIdle(device_);
    if (fence) vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, command_pool_, 1, &cmd);
    throw;
  }
  vkDestroyFence(device_, fence, nullptr);
  vkFreeCommandBuffers(device_, command_pool_, 1, &cmd);
}

size_t Context::message_count() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return messages_.size();
}

std::vector<std::string> Context::messages() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return messages_;
}

void Context::ClearMessages() {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  messages_.clear();
}

}  // namespace msc_vk
