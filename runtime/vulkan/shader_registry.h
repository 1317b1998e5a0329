// Embedded SPIR-V shaders, looked up by file stem.
//
// cmake/EmbedShaders.cmake compiles shaders/<ns>/<op>.comp with glslc and generates a .cc that
// defines kEmbeddedShaders / kEmbeddedShaderCount below (one entry per shader, stem "<ns>/<op>",
// e.g. "msc/linear_bias", "add", its variants "matmul+sg", and for a shader of several kernels one
// per kernel, "nn/conv2d@gemm1x1"). Every program that links this runtime must also compile that
// generated file (msc_vk_embed_shaders() adds it to a target).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace msc_vk {

struct ShaderCode {
  const char* stem;       // "nn/conv2d@direct"
  const uint32_t* words;  // SPIR-V
  size_t word_count;
};

// Defined by the generated shader file.
extern const ShaderCode kEmbeddedShaders[];
extern const size_t kEmbeddedShaderCount;

// Normalizes an optype or stem to the stem form: "nn.conv2d" -> "nn/conv2d".
std::string ShaderStem(const std::string& optype_or_stem);
// The shader for `optype_or_stem`, or nullptr.
const ShaderCode* FindEmbeddedShader(const std::string& optype_or_stem);
// The shader for `optype_or_stem`; throws Error("no Vulkan shader for op 'x.y' (expected
// runtime/vulkan/shaders/x/y.comp); embedded shaders: ...") when absent (for "x/y@k": expected
// "kernel 'k' of runtime/vulkan/shaders/x/y.comp").
const ShaderCode& GetEmbeddedShader(const std::string& optype_or_stem);
// All embedded stems, sorted.
std::vector<std::string> EmbeddedShaderStems();

// What the runtime reads from a SPIR-V module: the bindings of descriptor set 0, the workgroup
// size (OpExecutionMode LocalSize), the declared capabilities (OpCapability) and the SPIR-V
// version (header word 1, 0x00010000 = 1.0).
struct ShaderInfo {
  std::vector<uint32_t> bindings;  // sorted, unique
  uint32_t local_size[3] = {1, 1, 1};
  std::vector<uint32_t> capabilities;  // SPIR-V Capability enumerants, in module order
  uint32_t spirv_version = 0;
};
// Throws Error naming `stem` when the words are not a SPIR-V module.
ShaderInfo ReflectShader(const std::string& stem, const uint32_t* words, size_t word_count);

}  // namespace msc_vk
