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
  // A missing .comp takes its kernels ("<stem>@direct") and variants ("<stem>+sg") with it.
  if (ShaderFaultInjected(stem) || ShaderFaultInjected(stem.substr(0, stem.find_first_of("@+"))))
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
  std::vector<std::string> shaders;  // the .comp files: stems without "@kernel" and "+variant"
  for (const std::string& s : EmbeddedShaderStems()) {
    const std::string shader = s.substr(0, s.find_first_of("@+"));
    if (shaders.empty() || shaders.back() != shader) shaders.push_back(shader);
  }
  std::string list;
  for (const std::string& s : shaders) list += (list.empty() ? "" : ", ") + s;
  const std::string stem = ShaderStem(optype_or_stem);
  const size_t at = stem.find('@');
  const std::string expected =
      at == std::string::npos ? "runtime/vulkan/shaders/" + stem + ".comp"
                              : "kernel '" + stem.substr(at + 1) + "' of runtime/vulkan/shaders/" +
                                    stem.substr(0, at) + ".comp (its \"// msc_vk:kernel\" lines)";
  throw Error("no Vulkan shader for op '" + optype_or_stem + "' (expected " + expected +
              "); embedded shaders: " + (list.empty() ? "none" : list));
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
