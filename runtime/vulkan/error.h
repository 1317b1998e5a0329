// msc_vk::Error: the one exception type of the Vulkan runtime.
//
// Every failure (no device, bad weights file, missing golden file, unknown shader, Vulkan call
// failure, tolerance exceeded in a helper) throws msc_vk::Error whose what() is a complete,
// user-facing sentence naming the file / tensor / kernel involved. main() catches it, prints
// "error: <what()>" and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace msc_vk {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace msc_vk
