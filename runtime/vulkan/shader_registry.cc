#include "shader_registry.h"

#include <algorithm>

#include "error.h"
#include "fault.h"

namespace msc_vk {

std::string ShaderStem(const std::string& optype_or_stem) {
  std::string stem = optype_or_stem;
  std::replace(stem.begin(), stem.end(), '.', '/');
  return stem;
}

const ShaderCode* FindEmbeddedShader(const std::string& optype_or_stem) {
  const std::string stem = ShaderStem(optype_or_stem);
  // A missing .comp takes its variants ("<stem>+ext", "<stem>+sg") with it.
  if (ShaderFaultInjected(stem) || ShaderFaultInjected(stem.substr(0, stem.find('+'))))
    return nullptr;
  for (size_t i = 0; i < kEmbeddedShaderCount; ++i) {
    if (stem == kEmbeddedShaders[i].stem) return &kEmbeddedShaders[i];
  }
  return nullptr;
}

std::vector<std::string> EmbeddedShaderStems() {
  std::vector<std::string> stems;
  for (size_t i = 0; i < kEmbeddedShaderCount; ++i) stems.push_back(kEmbeddedShaders[i].stem);
  std::sort(stems.begin(), stems.end());
  return stems;
}

const ShaderCode& GetEmbeddedShader(const std::string& optype_or_stem) {
  if (const ShaderCode* code = FindEmbeddedShader(optype_or_stem)) return *code;
  std::string list;  // the ops (stems without their "+ext" variants)
  for (const std::string& s : EmbeddedShaderStems()) {
    if (s.find('+') == std::string::npos) list += (list.empty() ? "" : ", ") + s;
  }
  throw Error("no Vulkan shader for op '" + optype_or_stem + "' (expected runtime/vulkan/shaders/" +
              ShaderStem(optype_or_stem) +
              ".comp); embedded shaders: " + (list.empty() ? "none" : list));
}

ShaderInfo ReflectShader(const std::string& stem, const uint32_t* words, size_t word_count) {
  constexpr uint32_t kMagic = 0x07230203, kOpExecutionMode = 16, kOpDecorate = 71,
                     kOpCapability = 17;
  constexpr uint32_t kLocalSize = 17, kBinding = 33;
  if (word_count < 5 || words[0] != kMagic) {
    throw Error("shader '" + stem + "' is not a SPIR-V module (bad magic number or too short)");
  }
  ShaderInfo info;
  info.spirv_version = words[1];
  for (size_t i = 5; i < word_count;) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xffffu;
    if (count == 0 || i + count > word_count) {
      throw Error("shader '" + stem + "' is a truncated SPIR-V module (instruction at word " +
                  std::to_string(i) + ")");
    }
    if (op == kOpCapability && count >= 2) info.capabilities.push_back(words[i + 1]);
    if (op == kOpDecorate && count >= 4 && words[i + 2] == kBinding)
      info.bindings.push_back(words[i + 3]);
    if (op == kOpExecutionMode && count >= 6 && words[i + 2] == kLocalSize) {
      for (int d = 0; d < 3; ++d) info.local_size[d] = words[i + 3 + d];
    }
    i += count;
  }
  std::sort(info.bindings.begin(), info.bindings.end());
  info.bindings.erase(std::unique(info.bindings.begin(), info.bindings.end()), info.bindings.end());
  return info;
}

}  // namespace msc_vk
