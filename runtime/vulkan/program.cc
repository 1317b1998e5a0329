#include "program.h"

#include <chrono>
#include <cstring>

#include "context.h"
#include "error.h"
#include "pipeline.h"
#include "shader_registry.h"
#include "vk_check.h"

namespace msc_vk {
namespace {

struct Range {
  VkBuffer buffer;
  VkDeviceSize begin, end;
  bool Overlaps(const Range& o) const {
    return buffer == o.buffer && begin < o.end && o.begin < end;
  }
};

bool OverlapsAny(const Range& r, const std::vector<Range>& list) {
  for (const Range& o : list) {
    if (r.Overlaps(o)) return true;
  }
  return false;
}

// Bytes bound for a tensor: its size, at least 4 (Vulkan forbids empty ranges); texel views
// cover whole texels (vec4 views round up to 16 bytes, staying inside the buffer).
VkDeviceSize BoundRange(const Binding& b) {
  const Tensor& t = b.tensor;
  const VkDeviceSize texel = b.view == View::kStorage ? 4 : TexelBytes(b.view, t);
  VkDeviceSize range = t.bytes() < texel ? texel : t.bytes();
  if (b.view != View::kStorage) range = (range + texel - 1) / texel * texel;
  VkDeviceSize left = t.buffer->size() - t.offset;
  if (b.view != View::kStorage) left = left / texel * texel;
  return range < left ? range : left;
}

VkFormat TexelFormat(View view, const Tensor& t) {
  switch (view) {
    case View::kTexelFloat:  // float16 tensors (weights at --precision fp16) widen on fetch
      return t.dtype == DType::kFloat16 ? VK_FORMAT_R16_SFLOAT : VK_FORMAT_R32_SFLOAT;
    case View::kTexelVec4:
      return t.dtype == DType::kFloat16 ? VK_FORMAT_R16G16B16A16_SFLOAT
                                        : VK_FORMAT_R32G32B32A32_SFLOAT;
    case View::kTexelUvec4:
      return VK_FORMAT_R32G32B32A32_UINT;
    case View::kTexelUint:
      switch (DTypeSize(t.dtype)) {
        case 1:
          return VK_FORMAT_R8_UINT;
        case 2:
          return VK_FORMAT_R16_UINT;
        case 4:
          return VK_FORMAT_R32_UINT;
        default:
          return VK_FORMAT_R32G32_UINT;
      }
    default:
      return VK_FORMAT_UNDEFINED;
  }
}

const char* TexelFormatName(VkFormat f) {
  switch (f) {
    case VK_FORMAT_R32_SFLOAT:
      return "R32_SFLOAT";
    case VK_FORMAT_R32G32B32A32_SFLOAT:
      return "R32G32B32A32_SFLOAT";
    case VK_FORMAT_R32G32B32A32_UINT:
      return "R32G32B32A32_UINT";
    case VK_FORMAT_R16_SFLOAT:
      return "R16_SFLOAT";
    case VK_FORMAT_R16G16B16A16_SFLOAT:
      return "R16G16B16A16_SFLOAT";
    case VK_FORMAT_R8_UINT:
      return "R8_UINT";
    case VK_FORMAT_R16_UINT:
      return "R16_UINT";
    case VK_FORMAT_R32_UINT:
      return "R32_UINT";
    case VK_FORMAT_R32G32_UINT:
      return "R32G32_UINT";
    default:
      return "?";
  }
}

// The optional device feature a SPIR-V capability needs, or nullptr when it needs none the
// runtime knows of (Shader, SampledBuffer, ...). Sets *enabled from the context.
const char* CapabilityFeature(uint32_t cap, const DeviceFeatures& f, bool* enabled) {
  switch (cap) {
    case 11:  // Int64
      *enabled = f.shader_int64;
      return "shaderInt64 (64-bit integer arithmetic)";
    case 4433:  // StorageBuffer16BitAccess
      *enabled = f.storage_buffer_16bit_access;
      return "storageBuffer16BitAccess (16-bit storage buffer access)";
    case 4448:  // StorageBuffer8BitAccess
      *enabled = f.storage_buffer_8bit_access;
      return "storageBuffer8BitAccess (VK_KHR_8bit_storage)";
    case 61:  // GroupNonUniform
    case 66:  // GroupNonUniformShuffle
      *enabled = f.subgroup_shuffle_size != 0;
      return "compute subgroups with shuffle operations (VkPhysicalDeviceSubgroupProperties)";
    case 9:     // Float16
    case 10:    // Float64
    case 22:    // Int16
    case 39:    // Int8
    case 4434:  // UniformAndStorageBuffer16BitAccess
    case 4449:  // UniformAndStorageBuffer8BitAccess
      *enabled = false;
      return "a feature the runtime does not enable (SPIR-V capability "
             "Float16/Float64/Int16/Int8/UniformAndStorageBuffer*BitAccess)";
    default:
      *enabled = true;
      return nullptr;
  }
}

VkDescriptorType DescriptorType(View view) {
  return view == View::kStorage ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
}

void GlobalBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                   VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

}  // namespace

uint32_t TexelBytes(View view, const Tensor& t) {
  switch (view) {
    case View::kTexelFloat:
      return t.dtype == DType::kFloat16 ? 2 : 4;
    case View::kTexelVec4:
      return t.dtype == DType::kFloat16 ? 8 : 16;
    case View::kTexelUvec4:
      return 16;
    case View::kTexelUint:
      return static_cast<uint32_t>(DTypeSize(t.dtype));
    default:
      return 0;
  }
}

uint32_t SpecFloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

Program::Program(Context& ctx) : ctx_(ctx) {}

Program::~Program() {
  VkDevice dev = ctx_.device();
  vkQueueWaitIdle(ctx_.queue());
  if (fence_) vkDestroyFence(dev, fence_, nullptr);
  if (queries_) vkDestroyQueryPool(dev, queries_, nullptr);
  if (cmd_) vkFreeCommandBuffers(dev, ctx_.command_pool(), 1, &cmd_);
  if (pool_) vkDestroyDescriptorPool(dev, pool_, nullptr);
  for (VkBufferView v : views_) vkDestroyBufferView(dev, v, nullptr);
}

Kernel& Program::AddKernel(const std::string& stem, std::vector<Binding> bindings, const void* push,
                           size_t push_bytes, const SpecConstants& spec, const std::string& name) {
  const ShaderCode& code = GetEmbeddedShader(stem);
  return AddKernelSpirv(code.stem, code.words, code.word_count, std::move(bindings), push,
                        push_bytes, spec, name);
}

Kernel& Program::AddKernelSpirv(const std::string& stem, const uint32_t* words, size_t word_count,
                                std::vector<Binding> bindings, const void* push, size_t push_bytes,
                                const SpecConstants& spec, const std::string& name) {
  const std::string label = "kernel '" + (name.empty() ? stem : name) + "' (shader '" + stem + "')";
  if (finalized_) throw Error(label + ": cannot add kernels after the program was recorded");
  const ShaderInfo info = ReflectShader(stem, words, word_count);
  const DeviceFeatures& features = ctx_.features();
  if (info.spirv_version > 0x00010000u && !features.vulkan_1_1) {
    throw Error(label + ": the shader is SPIR-V " + std::to_string(info.spirv_version >> 16) + "." +
                std::to_string((info.spirv_version >> 8) & 0xffu) +
                ", which needs a Vulkan 1.1 device; " + ctx_.info().name + " is not");
  }
  for (uint32_t cap : info.capabilities) {
    bool enabled = true;
    const char* feature = CapabilityFeature(cap, features, &enabled);
    if (!enabled) {
      throw Error(label + ": needs the Vulkan device feature " + feature + ", which device " +
                  ctx_.info().name +
                  " does not support (needed for int64 / float16 / bool tensors; float32 and "
                  "int32 kernels need no optional feature)");
    }
  }
  // The optimizer may drop unused bindings, so the shader's set must be a subset of 0..N-1.
  if (!info.bindings.empty() && info.bindings.back() >= bindings.size()) {
    std::string declared;
    for (uint32_t b : info.bindings) declared += (declared.empty() ? "" : ", ") + std::to_string(b);
    throw Error(label + ": the shader declares bindings {" + declared + "} but " +
                std::to_string(bindings.size()) + " tensors were bound");
  }
  const VkDeviceSize max_range = ctx_.limits().maxStorageBufferRange;
  const VkDeviceSize max_texels = ctx_.limits().maxTexelBufferElements;
  for (size_t i = 0; i < bindings.size(); ++i) {
    const Tensor& t = bindings[i].tensor;
    if (!t.buffer)
      throw Error(label + ": binding " + std::to_string(i) + " (" + t.Describe() +
                  ") has no buffer");
    if (bindings[i].view != View::kStorage) {
      if (bindings[i].access != Access::kRead) {
        throw Error(label + ": binding " + std::to_string(i) +
                    " is a texel view, which is read-only");
      }
      if (bindings[i].view == View::kTexelUvec4 && DTypeSize(t.dtype) != 4) {
        throw Error(label + ": binding " + std::to_string(i) + " (" + t.Describe() +
                    ") has a uvec4 texel view, which needs 4-byte elements");
      }
      const VkFormat format = TexelFormat(bindings[i].view, t);
      VkFormatProperties fp{};
      vkGetPhysicalDeviceFormatProperties(ctx_.physical_device(), format, &fp);
      if (!(fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT)) {
        throw Error(label + ": binding " + std::to_string(i) + " (" + t.Describe() + "): device " +
                    ctx_.info().name + " cannot read format " + TexelFormatName(format) +
                    " as a uniform texel buffer");
      }
      const VkDeviceSize texels = BoundRange(bindings[i]) / TexelBytes(bindings[i].view, t);
      if (texels > max_texels) {
        throw Error(label + ": binding " + std::to_string(i) + " (" + t.Describe() + ") has " +
                    std::to_string(texels) +
                    " texels, more than the device's maxTexelBufferElements (" +
                    std::to_string(max_texels) + ")");
      }
    } else if (t.bytes() > max_range) {
      throw Error(label + ": binding " + std::to_string(i) + " (" + t.Describe() + ", " +
                  std::to_string(t.bytes()) +
                  " bytes) exceeds the device's maxStorageBufferRange of " +
                  std::to_string(max_range) + " bytes");
    }
    const VkDeviceSize align = bindings[i].view == View::kStorage
                                   ? ctx_.limits().minStorageBufferOffsetAlignment
                                   : ctx_.limits().minTexelBufferOffsetAlignment;
    if (t.offset % align != 0 || t.offset + t.bytes() > t.buffer->size()) {
      throw Error(label + ": binding " + std::to_string(i) + " (" + t.Describe() +
                  ") is misaligned or outside its buffer");
    }
  }

  std::vector<VkDescriptorType> types;
  std::string key = stem + "|" + std::to_string(push_bytes) + "|";
  for (const Binding& b : bindings) {
    types.push_back(DescriptorType(b.view));
    key += b.view == View::kStorage ? "s" : "t";
  }
  for (uint32_t v : spec) key += "|" + std::to_string(v);
  auto it = pipelines_.find(key);
  if (it == pipelines_.end()) {
    const auto start = std::chrono::steady_clock::now();
    auto p = std::make_unique<Pipeline>(ctx_, stem, words, word_count, types,
                                        static_cast<uint32_t>(push_bytes), spec);
    PipelineEntry& e = pipeline_stats_[stem];
    e.pipelines += 1;
    e.total_ns +=
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    it = pipelines_.emplace(key, std::move(p)).first;
  }

  auto k = std::make_unique<Kernel>();
  k->name = name.empty() ? stem : name;
  k->stem = stem;
  k->pipeline = it->second.get();
  k->bindings = std::move(bindings);
  k->push.assign(static_cast<const uint8_t*>(push), static_cast<const uint8_t*>(push) + push_bytes);
  for (int d = 0; d < 3; ++d) k->local_size[d] = info.local_size[d];
  kernels_.push_back(std::move(k));
  return *kernels_.back();
}

void Program::Dispatch(const Kernel& k, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (finalized_)
    throw Error("kernel '" + k.name + "': cannot dispatch after the program was recorded");
  const uint32_t* max = ctx_.limits().maxComputeWorkGroupCount;
  if (gx > max[0] || gy > max[1] || gz > max[2]) {
    throw Error("kernel '" + k.name + "': dispatch of (" + std::to_string(gx) + ", " +
                std::to_string(gy) + ", " + std::to_string(gz) +
                ") workgroups exceeds the device's maxComputeWorkGroupCount (" +
                std::to_string(max[0]) + ", " + std::to_string(max[1]) + ", " +
                std::to_string(max[2]) + ")");
  }
  if (gx == 0 || gy == 0 || gz == 0) return;
  dispatches_.push_back({&k, {gx, gy, gz}});
}

Program::Staged* Program::FindStaged(const Tensor& t, bool is_input) {
  for (Staged& s : staged_) {
    if (s.is_input == is_input && s.tensor.buffer == t.buffer && s.tensor.offset == t.offset &&
        s.tensor.bytes() == t.bytes()) {
      return &s;
    }
  }
  return nullptr;
}

void Program::AddStaged(const Tensor& t, bool is_input) {
  if (!t.buffer) throw Error("tensor " + t.Describe() + " has no buffer");
  if (t.buffer->mapped() || FindStaged(t, is_input)) return;
  if (finalized_)
    throw Error("tensor " + t.Describe() + ": declare inputs/outputs before the first Run()");
  auto staging = std::make_unique<Buffer>(ctx_, t.bytes(), MemoryKind::kHost, t.name + ".staging");
  staged_.push_back({t, std::move(staging), is_input});
}

Tensor Program::AddBuffer(const std::string& name, DType dtype, const Shape& shape) {
  if (finalized_) throw Error("buffer '" + name + "': cannot add buffers after the first Run()");
  const VkDeviceSize bytes = static_cast<VkDeviceSize>(NumElements(shape)) * DTypeSize(dtype);
  owned_.push_back(
      std::make_unique<Buffer>(ctx_, (bytes + 15) / 16 * 16, MemoryKind::kDevice, name));
  return MakeTensor(*owned_.back(), name, dtype, shape, 0);
}

void Program::AddSetup(std::function<void()> fn) {
  if (finalized_) throw Error("Program::AddSetup() must come before the first Run()");
  setup_.push_back(std::move(fn));
}

void Program::MarkConstant(const Tensor& t) {
  if (t.buffer) constants_.push_back(t);
}

bool Program::IsConstant(const Tensor& t) const {
  for (const Tensor& c : constants_) {
    if (c.buffer == t.buffer && t.offset >= c.offset &&
        t.offset + t.bytes() <= c.offset + c.bytes()) {
      return true;
    }
  }
  return false;
}

void Program::AddInput(const Tensor& t) { AddStaged(t, true); }
void Program::AddOutput(const Tensor& t) { AddStaged(t, false); }

void Program::Write(const Tensor& t, const void* data, size_t bytes) {
  if (bytes != t.bytes()) {
    throw Error("writing tensor " + t.Describe() + ": got " + std::to_string(bytes) +
                " bytes, expected " + std::to_string(t.bytes()));
  }
  if (t.buffer->mapped()) {
    std::memcpy(t.buffer->mapped() + t.offset, data, bytes);
  } else if (Staged* s = FindStaged(t, true)) {
    std::memcpy(s->staging->mapped(), data, bytes);
  } else {
    throw Error("tensor " + t.Describe() +
                " is not host-visible on this device; declare it with "
                "Program::AddInput() before the first Run()");
  }
}

void Program::Read(const Tensor& t, void* data, size_t bytes) {
  if (bytes != t.bytes()) {
    throw Error("reading tensor " + t.Describe() + ": got " + std::to_string(bytes) +
                " bytes, expected " + std::to_string(t.bytes()));
  }
  if (t.buffer->mapped()) {
    std::memcpy(data, t.buffer->mapped() + t.offset, bytes);
  } else if (Staged* s = FindStaged(t, false)) {
    std::memcpy(data, s->staging->mapped(), bytes);
  } else {
    throw Error("tensor " + t.Describe() +
                " is not host-visible on this device; declare it with "
                "Program::AddOutput() before the first Run()");
  }
}

void Program::WriteDescriptorSets() {
  if (kernels_.empty()) return;
  uint32_t storage = 0, texel = 0;
  for (const auto& k : kernels_) {
    for (const Binding& b : k->bindings) ++(b.view == View::kStorage ? storage : texel);
  }
  VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, storage ? storage : 1},
                                   {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, texel ? texel : 1}};
  VkDescriptorPoolCreateInfo dpci{};
  dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpci.maxSets = static_cast<uint32_t>(kernels_.size());
  dpci.poolSizeCount = 2;
  dpci.pPoolSizes = sizes;
  VkCheck(vkCreateDescriptorPool(ctx_.device(), &dpci, nullptr, &pool_), "vkCreateDescriptorPool");

  for (auto& k : kernels_) {
    VkDescriptorSetLayout layout = k->pipeline->set_layout();
    VkDescriptorSetAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkCheck(vkAllocateDescriptorSets(ctx_.device(), &ai, &k->set), "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos(k->bindings.size());
    std::vector<VkBufferView> views(k->bindings.size());
    std::vector<VkWriteDescriptorSet> writes(k->bindings.size());
    for (size_t i = 0; i < k->bindings.size(); ++i) {
      const Binding& b = k->bindings[i];
      const Tensor& t = b.tensor;
      writes[i] = {};
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = k->set;
      writes[i].dstBinding = static_cast<uint32_t>(i);
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = DescriptorType(b.view);
      if (b.view == View::kStorage) {
        infos[i] = {t.buffer->handle(), t.offset, BoundRange(b)};
        writes[i].pBufferInfo = &infos[i];
      } else {
        VkBufferViewCreateInfo vci{};
        vci.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO;
        vci.buffer = t.buffer->handle();
        vci.format = TexelFormat(b.view, t);
        vci.offset = t.offset;
        vci.range = BoundRange(b);
        VkCheck(vkCreateBufferView(ctx_.device(), &vci, nullptr, &views[i]), "vkCreateBufferView");
        views_.push_back(views[i]);
        writes[i].pTexelBufferView = &views[i];
      }
    }
    vkUpdateDescriptorSets(ctx_.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0,
                           nullptr);
  }
}

void Program::Record() {
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = ctx_.command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCheck(vkAllocateCommandBuffers(ctx_.device(), &ai, &cmd_), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  VkCheck(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");

  const VkPipelineStageFlags kCT =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  // Orders this inference after everything submitted before (previous inference, weight upload).
  GlobalBarrier(cmd_, kCT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, kCT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  bool any_input_copy = false;
  for (const Staged& s : staged_) {
    if (!s.is_input) continue;
    VkBufferCopy region{0, s.tensor.offset, s.tensor.bytes()};
    vkCmdCopyBuffer(cmd_, s.staging->handle(), s.tensor.buffer->handle(), 1, &region);
    any_input_copy = true;
  }
  if (any_input_copy) {
    GlobalBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                  VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  }

  std::vector<Range> pending_reads, pending_writes;
  VkPipeline bound = VK_NULL_HANDLE;
  if (queries_) {
    vkCmdResetQueryPool(cmd_, queries_, 0, static_cast<uint32_t>(dispatches_.size() + 1));
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, 0);
  }
  uint32_t query = 0;
  for (const DispatchCmd& d : dispatches_) {
    const Kernel& k = *d.kernel;
    std::vector<Range> reads, writes;
    for (const Binding& b : k.bindings) {
      Range r{b.tensor.buffer->handle(), b.tensor.offset, b.tensor.offset + BoundRange(b)};
      if (b.access != Access::kWrite) reads.push_back(r);
      if (b.access != Access::kRead) writes.push_back(r);
    }
    bool hazard = false;
    for (const Range& r : reads) hazard = hazard || OverlapsAny(r, pending_writes);
    for (const Range& w : writes)
      hazard = hazard || OverlapsAny(w, pending_writes) || OverlapsAny(w, pending_reads);
    if (hazard) {
      std::vector<VkBufferMemoryBarrier> barriers;
      for (const Range& w : pending_writes) {
        VkBufferMemoryBarrier b{};
        b.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
        b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.buffer = w.buffer;
        b.offset = w.begin;
        b.size = w.end - w.begin;
        barriers.push_back(b);
      }
      vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr,
                           static_cast<uint32_t>(barriers.size()), barriers.data(), 0, nullptr);
      ++num_barriers_;
      pending_reads.clear();
      pending_writes.clear();
    }
    if (bound != k.pipeline->handle()) {
      vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline->handle());
      bound = k.pipeline->handle();
    }
    vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline->layout(), 0, 1,
                            &k.set, 0, nullptr);
    if (!k.push.empty()) {
      vkCmdPushConstants(cmd_, k.pipeline->layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                         static_cast<uint32_t>(k.push.size()), k.push.data());
    }
    vkCmdDispatch(cmd_, d.groups[0], d.groups[1], d.groups[2]);
    if (queries_)
      vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, ++query);
    pending_reads.insert(pending_reads.end(), reads.begin(), reads.end());
    pending_writes.insert(pending_writes.end(), writes.begin(), writes.end());
  }

  bool any_output_copy = false;
  for (const Staged& s : staged_) any_output_copy = any_output_copy || !s.is_input;
  if (any_output_copy) {
    GlobalBarrier(cmd_, kCT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    for (const Staged& s : staged_) {
      if (s.is_input) continue;
      VkBufferCopy region{s.tensor.offset, 0, s.tensor.bytes()};
      vkCmdCopyBuffer(cmd_, s.tensor.buffer->handle(), s.staging->handle(), 1, &region);
    }
  }
  // Makes results (mapped arena or staging buffers) visible to the host after the fence.
  GlobalBarrier(cmd_, kCT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  VkCheck(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
}

void Program::Finalize() {
  if (finalized_) return;
  for (auto& fn : setup_) fn();
  setup_.clear();
  if (profiling_) {  // one timestamp before the first dispatch and one after each
    VkQueryPoolCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = static_cast<uint32_t>(dispatches_.size() + 1);
    VkCheck(vkCreateQueryPool(ctx_.device(), &qci, nullptr, &queries_), "vkCreateQueryPool");
  }
  WriteDescriptorSets();
  Record();
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkCheck(vkCreateFence(ctx_.device(), &fci, nullptr, &fence_), "vkCreateFence");
  finalized_ = true;
}

void Program::EnableProfiling() {
  if (finalized_) throw Error("Program::EnableProfiling() must come before the first Run()");
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx_.physical_device(), &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx_.physical_device(), &n, families.data());
  if (ctx_.queue_family() >= n || families[ctx_.queue_family()].timestampValidBits == 0)
    throw Error("profiling: device " + ctx_.info().name +
                " has no timestamps on its compute queue (timestampValidBits 0)");
  profiling_ = true;
}

void Program::Run() {
  Finalize();
  ctx_.SubmitAndWait(cmd_, fence_);
  if (!queries_) return;
  std::vector<uint64_t> ts(dispatches_.size() + 1);
  VkCheck(vkGetQueryPoolResults(ctx_.device(), queries_, 0, static_cast<uint32_t>(ts.size()),
                                ts.size() * sizeof(uint64_t), ts.data(), sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
  const double period_ns = ctx_.limits().timestampPeriod;
  for (size_t i = 0; i < dispatches_.size(); ++i) {
    ProfileEntry& e = profile_[dispatches_[i].kernel->stem];
    if (profiled_runs_ == 0) ++e.dispatches;
    e.total_ns += static_cast<double>(ts[i + 1] - ts[i]) * period_ns;
  }
  ++profiled_runs_;
}

}  // namespace msc_vk
