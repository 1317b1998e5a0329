#include "fault.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "error.h"

namespace msc_vk {
namespace {

struct Faults {
  std::map<std::string, long> nth_call;  // site -> which call fails (1-based)
  std::map<std::string, VkResult> result;
  std::set<std::string> features;
  std::set<std::string> shaders;
  std::map<std::string, long> calls;  // site -> calls seen so far
};

[[noreturn]] void Bad(const std::string& item, const std::string& why) {
  throw Error("MSC_VK_FAULT: '" + item + "' " + why +
              " (expected a comma-separated list of oom[@N], device-lost[@N], "
              "no-feature=NAME, no-shader=STEM)");
}

long ParseCount(const std::string& item, const std::string& text) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 1) Bad(item, "has a call number that is not >= 1");
  return n;
}

Faults Parse(const char* env) {
  Faults f;
  if (env == nullptr) return f;
  const std::string all = env;
  size_t pos = 0;
  while (pos <= all.size()) {
    size_t comma = all.find(',', pos);
    if (comma == std::string::npos) comma = all.size();
    const std::string item = all.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    const size_t at = item.find('@');
    const std::string name = item.substr(0, at);
    const long nth = at == std::string::npos ? 1 : ParseCount(item, item.substr(at + 1));
    if (name == "oom") {
      f.nth_call["vkAllocateMemory"] = nth;
      f.result["vkAllocateMemory"] = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    } else if (name == "device-lost") {
      f.nth_call["vkQueueSubmit"] = nth;
      f.result["vkQueueSubmit"] = VK_ERROR_DEVICE_LOST;
    } else if (item.rfind("no-feature=", 0) == 0 && item.size() > 11) {
      const std::string feature = item.substr(11);
      if (feature != "shaderInt64" && feature != "storageBuffer16BitAccess" &&
          feature != "storageBuffer8BitAccess" && feature != "subgroupShuffle")
        Bad(item, "names an optional feature the runtime does not use");
      f.features.insert(feature);
    } else if (item.rfind("no-shader=", 0) == 0 && item.size() > 10) {
      f.shaders.insert(item.substr(10));
    } else {
      Bad(item, "is not a known fault");
    }
  }
  return f;
}

Faults& State() {
  static Faults faults = Parse(std::getenv("MSC_VK_FAULT"));
  return faults;
}

std::mutex& StateMutex() {
  static std::mutex m;
  return m;
}

}  // namespace

VkResult InjectedFault(const char* site) {
  std::lock_guard<std::mutex> lock(StateMutex());
  Faults& f = State();
  auto it = f.nth_call.find(site);
  if (it == f.nth_call.end()) return VK_SUCCESS;
  return ++f.calls[site] == it->second ? f.result.at(site) : VK_SUCCESS;
}

bool FeatureFaultInjected(const std::string& feature) {
  std::lock_guard<std::mutex> lock(StateMutex());
  return State().features.count(feature) != 0;
}

bool ShaderFaultInjected(const std::string& stem) {
  std::lock_guard<std::mutex> lock(StateMutex());
  return State().shaders.count(stem) != 0;
}

}  // namespace msc_vk
