#include "buffer.h"

#include <cstring>
#include <utility>

#include "context.h"
#include "error.h"
#include "fault.h"
#include "vk_check.h"

namespace msc_vk {

Buffer::Buffer(Context& ctx, VkDeviceSize size, MemoryKind kind, std::string name)
    : ctx_(&ctx), size_(size ? size : 16), name_(std::move(name)) {
  VkDevice dev = ctx.device();
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = size_;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
              VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkCheck(vkCreateBuffer(dev, &bci, nullptr, &buffer_),
          "vkCreateBuffer('" + name_ + "', " + std::to_string(size_) + " bytes)");
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, buffer_, &req);
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags required, preferred;
    bool map = true;
    if (kind == MemoryKind::kHost) {
      required = host;
      preferred = host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    } else if (ctx.uma()) {
      required = host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      preferred = required;
    } else {
      required = 0;
      preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      map = false;
    }
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = ctx.FindMemoryType(req.memoryTypeBits, required, preferred);
    VkResult injected = InjectedFault("vkAllocateMemory");
    VkCheck(injected != VK_SUCCESS ? injected : vkAllocateMemory(dev, &mai, nullptr, &memory_),
            "vkAllocateMemory('" + name_ + "', " + std::to_string(req.size) + " bytes)");
    VkCheck(vkBindBufferMemory(dev, buffer_, memory_, 0), "vkBindBufferMemory");
    if (map) {
      void* p = nullptr;
      VkCheck(vkMapMemory(dev, memory_, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory('" + name_ + "')");
      mapped_ = static_cast<uint8_t*>(p);
    }
  } catch (...) {
    Release();
    throw;
  }
}

Buffer::~Buffer() { Release(); }

void Buffer::Release() {
  if (!ctx_) return;
  if (memory_) vkFreeMemory(ctx_->device(), memory_, nullptr);  // unmaps implicitly
  if (buffer_) vkDestroyBuffer(ctx_->device(), buffer_, nullptr);
  memory_ = VK_NULL_HANDLE;
  buffer_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
}

Buffer::Buffer(Buffer&& o) noexcept
    : ctx_(o.ctx_),
      buffer_(o.buffer_),
      memory_(o.memory_),
      size_(o.size_),
      mapped_(o.mapped_),
      name_(std::move(o.name_)) {
  o.buffer_ = VK_NULL_HANDLE;
  o.memory_ = VK_NULL_HANDLE;
  o.mapped_ = nullptr;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    Release();
    ctx_ = o.ctx_;
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    mapped_ = std::exchange(o.mapped_, nullptr);
    size_ = o.size_;
    name_ = std::move(o.name_);
  }
  return *this;
}

void Buffer::CheckRange(VkDeviceSize offset, VkDeviceSize bytes, const char* what) const {
  if (offset > size_ || bytes > size_ - offset) {
    throw Error(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                std::to_string(offset) + " is outside buffer '" + name_ + "' of " +
                std::to_string(size_) + " bytes");
  }
}

void Buffer::Upload(VkDeviceSize offset, const void* data, VkDeviceSize bytes) {
  CheckRange(offset, bytes, "upload");
  if (bytes == 0) return;
  if (mapped_) {
    std::memcpy(mapped_ + offset, data, bytes);
    return;
  }
  Buffer staging(*ctx_, bytes, MemoryKind::kHost, name_ + ".staging");
  std::memcpy(staging.mapped(), data, bytes);
  ctx_->SubmitAndWait([&](VkCommandBuffer cmd) {
    VkBufferCopy region{0, offset, bytes};
    vkCmdCopyBuffer(cmd, staging.handle(), buffer_, 1, &region);
  });
}

void Buffer::Download(VkDeviceSize offset, void* data, VkDeviceSize bytes) const {
  CheckRange(offset, bytes, "download");
  if (bytes == 0) return;
  if (mapped_) {
    std::memcpy(data, mapped_ + offset, bytes);
    return;
  }
  Buffer staging(*ctx_, bytes, MemoryKind::kHost, name_ + ".staging");
  ctx_->SubmitAndWait([&](VkCommandBuffer cmd) {
    VkMemoryBarrier before{};
    before.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    before.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    before.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0, nullptr);
    VkBufferCopy region{offset, 0, bytes};
    vkCmdCopyBuffer(cmd, buffer_, staging.handle(), 1, &region);
    VkMemoryBarrier after{};
    after.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    after.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    after.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                         &after, 0, nullptr, 0, nullptr);
  });
  std::memcpy(data, staging.mapped(), bytes);
}

std::string Tensor::Describe() const {
  return "'" + name + "' " + DTypeName(dtype) + " " + ShapeToString(shape);
}

Tensor MakeTensor(Buffer& buffer, std::string name, DType dtype, Shape shape, VkDeviceSize offset) {
  Tensor t{std::move(name), dtype, std::move(shape), &buffer, offset};
  for (int64_t d : t.shape) {
    if (d < 0) throw Error("tensor " + t.Describe() + " has a negative dimension");
  }
  const VkDeviceSize align = buffer.context().limits().minStorageBufferOffsetAlignment;
  if (offset % align != 0) {
    throw Error("tensor " + t.Describe() + " at byte offset " + std::to_string(offset) +
                " of buffer '" + buffer.name() +
                "' is not a multiple of the device's minStorageBufferOffsetAlignment (" +
                std::to_string(align) + " bytes)");
  }
  if (offset > buffer.size() || t.bytes() > buffer.size() - offset) {
    throw Error("tensor " + t.Describe() + " (" + std::to_string(t.bytes()) + " bytes at offset " +
                std::to_string(offset) + ") does not fit in buffer '" + buffer.name() + "' of " +
                std::to_string(buffer.size()) + " bytes");
  }
  return t;
}

}  // namespace msc_vk
