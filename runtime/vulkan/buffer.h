// msc_vk::Buffer (a VkBuffer with its own VkDeviceMemory) and msc_vk::Tensor (a typed view of a
// byte range of a Buffer).
//
// Memory policy (no allocator library): one vkAllocateMemory per Buffer. The generated code
// creates few buffers: one arena for all intermediate tensors, one for all weights, and (on
// non-UMA devices only) one staging buffer per graph input/output.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

#include "dtype.h"

namespace msc_vk {

class Context;

enum class MemoryKind {
  kDevice,  // storage buffer used by kernels; mapped too when the device is UMA (Context::uma())
  kHost,    // host-visible, coherent, mapped staging buffer (transfer source/destination)
};

class Buffer {
 public:
  // `size` in bytes (0 is rounded up to 16). Usage: STORAGE | UNIFORM_TEXEL | TRANSFER_SRC |
  // TRANSFER_DST.
  Buffer(Context& ctx, VkDeviceSize size, MemoryKind kind, std::string name = "buffer");
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Context& context() const { return *ctx_; }
  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  const std::string& name() const { return name_; }
  // Host pointer to byte 0, or nullptr when the memory is not host-visible.
  uint8_t* mapped() const { return mapped_; }

  // Copies `bytes` bytes host -> buffer at byte `offset`: a memcpy when mapped, otherwise through
  // a temporary staging buffer and one blocking submit. Throws when the range is out of bounds.
  void Upload(VkDeviceSize offset, const void* data, VkDeviceSize bytes);
  // Copies buffer -> host, the reverse of Upload().
  void Download(VkDeviceSize offset, void* data, VkDeviceSize bytes) const;

 private:
  void CheckRange(VkDeviceSize offset, VkDeviceSize bytes, const char* what) const;
  void Release();

  Context* ctx_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  uint8_t* mapped_ = nullptr;
  std::string name_;
};

// A typed, shaped view of bytes [offset, offset + bytes()) of a Buffer. Cheap to copy.
struct Tensor {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  Buffer* buffer = nullptr;
  VkDeviceSize offset = 0;  // bytes from the start of `buffer`

  int64_t numel() const { return NumElements(shape); }
  VkDeviceSize bytes() const { return static_cast<VkDeviceSize>(numel()) * DTypeSize(dtype); }
  int64_t dim(int i) const { return shape.at(i < 0 ? shape.size() + i : i); }
  // "'conv1' float32 [1, 64, 112, 112]".
  std::string Describe() const;
};

// Makes a Tensor view, checking that `offset` is a multiple of the device's
// minStorageBufferOffsetAlignment (the generator aligns arena offsets to 256 bytes, the largest
// value the Vulkan spec allows) and that the view lies inside the buffer.
Tensor MakeTensor(Buffer& buffer, std::string name, DType dtype, Shape shape, VkDeviceSize offset);

}  // namespace msc_vk
