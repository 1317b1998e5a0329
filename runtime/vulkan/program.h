// msc_vk::Program: the whole inference as ONE command buffer, recorded once, replayed per Run().
//
//   msc_vk::Program prog(ctx);
//   msc_vk::Kernel& k = prog.AddKernel("nn/softmax", {In(x), Out(y)}, push, {spec...});
//   prog.Dispatch(k, gx, gy, gz);      // workgroup counts
//   ...
//   prog.Run();                        // records on first call; one vkQueueSubmit + fence wait
//
// AddKernel() finds the embedded shader by stem (ShaderStem: "nn.conv2d" and "nn/conv2d" are the
// same), checks that every binding the shader declares is < N for the N bindings given and that
// the device enabled every optional feature the shader's SPIR-V capabilities need (Int64,
// 8/16-bit storage: Context::features(); else Error naming the kernel and the feature), and
// creates (or reuses) a compute pipeline for (shader, specialization constants, push size).
// Each binding is a Tensor view (buffer, byte offset, byte range) with its access mode.
//
// Barriers: recording walks the dispatches in order and tracks byte ranges read and written
// since the last barrier. A dispatch that reads a range written earlier (RAW), or writes a range
// read or written earlier (WAR/WAW), gets a compute->compute vkCmdPipelineBarrier with one
// VkBufferMemoryBarrier per pending written range first; independent dispatches get none.
//
// Host I/O: Write()/Read() copy host data into/out of tensors. On UMA devices (lavapipe) this
// is a memcpy into the mapped arena; otherwise the tensor must have been declared with
// AddInput()/AddOutput() before the first Run(), which gives it a staging buffer and records
// the copies into the same command buffer (so an inference stays one submit).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "buffer.h"

namespace msc_vk {

class Context;

enum class Access { kRead, kWrite, kReadWrite };

// How the shader sees a binding: a storage buffer (`buffer { float x[]; }`), or a read-only
// uniform texel buffer (texelFetch) of float (R32_SFLOAT) or vec4 (R32G32B32A32_SFLOAT) texels
// (`uniform samplerBuffer`; a float16 tensor gets R16_SFLOAT / R16G16B16A16_SFLOAT, widened to
// float by the fetch: the fp16 weights of `--precision fp16`, no shaderFloat16 needed), or of raw
// element bits (`uniform usamplerBuffer`): kTexelUint has one texel per element in the unsigned
// format of the tensor's element size (R8_UINT, R16_UINT, R32_UINT, R32G32_UINT for 1/2/4/8 bytes),
// kTexelUvec4 four 4-byte elements per texel (R32G32B32A32_UINT). Texel fetches are gathers on CPU
// devices, far cheaper there than storage-buffer loads; kernels use them for their big read-only
// operands.
enum class View { kStorage, kTexelFloat, kTexelVec4, kTexelUint, kTexelUvec4 };

struct Binding {
  Tensor tensor;
  Access access = Access::kRead;
  View view = View::kStorage;
};
inline Binding In(const Tensor& t) { return {t, Access::kRead, View::kStorage}; }
inline Binding Out(const Tensor& t) { return {t, Access::kWrite, View::kStorage}; }
inline Binding InOut(const Tensor& t) { return {t, Access::kReadWrite, View::kStorage}; }
inline Binding InTexel(const Tensor& t, View view = View::kTexelFloat) {
  return {t, Access::kRead, view};
}

// Bytes per texel of a texel view of `t` (0 for kStorage).
uint32_t TexelBytes(View view, const Tensor& t);

// Specialization constant values; element i is constant_id i (int/uint as is, float via SpecFloat).
using SpecConstants = std::vector<uint32_t>;
uint32_t SpecFloat(float value);

class Pipeline;

// One node's kernel: pipeline + descriptor set + push-constant bytes. Owned by the Program.
struct Kernel {
  std::string name;  // for error messages: node name or stem
  std::string stem;  // "nn/softmax", "nn/conv2d@gemm1x1+sg"
  Pipeline* pipeline = nullptr;
  std::vector<Binding> bindings;
  std::vector<uint8_t> push;           // <= 128 bytes, multiple of 4
  uint32_t local_size[3] = {1, 1, 1};  // from the shader (OpExecutionMode LocalSize)
  VkDescriptorSet set = VK_NULL_HANDLE;
};

class Program {
 public:
  explicit Program(Context& ctx);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Context& context() const { return ctx_; }

  // Adds a kernel using the embedded shader `stem` (see shader_registry.h). `push` is copied.
  Kernel& AddKernel(const std::string& stem, std::vector<Binding> bindings, const void* push,
                    size_t push_bytes, const SpecConstants& spec = {},
                    const std::string& name = "");
  // Same with a push-constant struct (all 4-byte scalars, <= 128 bytes).
  template <class P>
  Kernel& AddKernel(const std::string& stem, std::vector<Binding> bindings, const P& push,
                    const SpecConstants& spec = {}, const std::string& name = "") {
    static_assert(std::is_trivially_copyable<P>::value,
                  "push constants must be trivially copyable");
    static_assert(sizeof(P) <= 128 && sizeof(P) % 4 == 0,
                  "push constants: <= 128 bytes, 4-byte multiple");
    return AddKernel(stem, std::move(bindings), &push, sizeof(P), spec, name);
  }
  // Same with explicit SPIR-V words (not looked up by stem).
  Kernel& AddKernelSpirv(const std::string& stem, const uint32_t* words, size_t word_count,
                         std::vector<Binding> bindings, const void* push, size_t push_bytes,
                         const SpecConstants& spec = {}, const std::string& name = "");

  // Appends a dispatch of `k` with the given workgroup counts (each <= the device's
  // maxComputeWorkGroupCount, i.e. 65535 on most devices; a zero count is a no-op).
  void Dispatch(const Kernel& k, uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);

  // Kernel-private memory (workspaces, pre-transformed weights): a device buffer owned by the
  // program, returned as a tensor at offset 0; it lives as long as the program.
  Tensor AddBuffer(const std::string& name, DType dtype, const Shape& shape);
  // Host work run once, in order, by the first Run() before the first submit (e.g. deriving a
  // transformed copy of constant weights). No AddKernel/Dispatch from inside it.
  void AddSetup(std::function<void()> fn);
  // Declares that the bytes of `t` never change after the first Run() (Model marks its weights).
  // Kernels may then precompute data from them once (AddSetup). IsConstant: `t` lies inside one
  // marked tensor.
  void MarkConstant(const Tensor& t);
  bool IsConstant(const Tensor& t) const;

  // Host I/O tensors (required before the first Run() on non-UMA devices; harmless on UMA).
  void AddInput(const Tensor& t);
  void AddOutput(const Tensor& t);
  // Host -> tensor / tensor -> host. `bytes` must equal t.bytes().
  void Write(const Tensor& t, const void* data, size_t bytes);
  void Read(const Tensor& t, void* data, size_t bytes);

  // Records the command buffer (Run() calls it on first use). No AddKernel/Dispatch afterwards.
  void Finalize();
  // One vkQueueSubmit of the recorded command buffer, then a fence wait (with timeout).
  void Run();

  // Per-dispatch GPU time (timestamp queries): call before the first Run() (before or after the
  // kernels are added; the query pool is sized when the program is finalized). Each Run() then
  // adds the time between the timestamps around every dispatch (including the barrier before it)
  // to Profile(). Error if the device's compute queue has no timestamps (timestampValidBits 0).
  void EnableProfiling();
  // Forgets the runs profiled so far (e.g. warm-up runs).
  void ResetProfile() {
    profile_.clear();
    profiled_runs_ = 0;
  }
  // GPU time per kernel stem ("nn/conv2d": {dispatches per run, total ns over all runs}), and the
  // number of runs profiled. Empty unless EnableProfiling() was called.
  struct ProfileEntry {
    size_t dispatches = 0;
    double total_ns = 0;
  };
  const std::map<std::string, ProfileEntry>& Profile() const { return profile_; }
  size_t profiled_runs() const { return profiled_runs_; }

  // Host time spent creating compute pipelines (vkCreateComputePipelines, in AddKernel) per shader
  // stem ("nn/conv2d@gemm1x1+sg": {pipelines created, total ns}): one pipeline per distinct
  // (stem, bindings, push size, specialization constants). On CPU drivers (lavapipe) creation
  // compiles the shader and is most of a model's start-up; its time grows with the size of the
  // whole SPIR-V module, not of the specialized kernel.
  struct PipelineEntry {
    size_t pipelines = 0;
    double total_ns = 0;
  };
  const std::map<std::string, PipelineEntry>& PipelineStats() const { return pipeline_stats_; }

  size_t num_kernels() const { return kernels_.size(); }
  size_t num_dispatches() const { return dispatches_.size(); }
  // Workgroups of all dispatches (sum of gx * gy * gz): how much of the grids the kernels fill.
  uint64_t num_workgroups() const {
    uint64_t n = 0;
    for (const DispatchCmd& d : dispatches_) n += uint64_t{d.groups[0]} * d.groups[1] * d.groups[2];
    return n;
  }
  size_t num_barriers() const { return num_barriers_; }  // after Finalize()

 private:
  struct DispatchCmd {
    const Kernel* kernel;
    uint32_t groups[3];
  };
  struct Staged {
    Tensor tensor;
    std::unique_ptr<Buffer> staging;
    bool is_input;
  };
  Staged* FindStaged(const Tensor& t, bool is_input);
  void AddStaged(const Tensor& t, bool is_input);
  void WriteDescriptorSets();
  void Record();

  Context& ctx_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::vector<std::unique_ptr<Kernel>> kernels_;
  std::vector<DispatchCmd> dispatches_;
  std::vector<Staged> staged_;
  std::vector<std::unique_ptr<Buffer>> owned_;  // AddBuffer
  std::vector<std::function<void()>> setup_;    // AddSetup, run by the first Run()
  std::vector<Tensor> constants_;               // MarkConstant
  std::vector<VkBufferView> views_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool finalized_ = false;
  bool profiling_ = false;  // EnableProfiling(): Finalize() makes the query pool
  size_t num_barriers_ = 0;
  VkQueryPool queries_ = VK_NULL_HANDLE;  // profiling: dispatches + 1 timestamps
  std::map<std::string, ProfileEntry> profile_;
  std::map<std::string, PipelineEntry> pipeline_stats_;
  size_t profiled_runs_ = 0;
};

}  // namespace msc_vk
