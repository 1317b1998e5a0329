// Bytes: the data of a weights::Tensor, either owned or a read-only view into a memory-mapped file.
//
// Views let a multi-GB weights file be read without reading it: ReadSafetensors maps the file and
// every tensor points into the mapping, so only the pages of tensors that are actually used are
// ever touched, and WriteSafetensors copies viewed tensors file-to-file in the kernel
// (copy_file_range(2)) without bringing them into this process at all. A view becomes an owned
// copy the first time it is written through (copy on write), so code that builds or edits
// tensors uses Bytes like a std::vector<uint8_t>.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace msc::weights {

/// A whole file mapped read-only (mmap PROT_READ, MAP_PRIVATE), with its descriptor kept open for
/// copy_file_range. The file must not be truncated while mapped (that is SIGBUS on any mmap
/// reader); msc-codegen's inputs are not written while it runs.
class MappedFile {
 public:
  /// Maps `path` (a regular file). Throws msc::Error "<path>: cannot open|map <what>: <reason>".
  MappedFile(const std::string& path, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

class Bytes {
 public:
  Bytes() = default;
  Bytes(std::vector<uint8_t> v) : own_(std::move(v)) {}  // NOLINT: implicit, like a vector
  /// A view of [offset, offset + size) of `file` (the range must lie inside it).
  static Bytes View(std::shared_ptr<const MappedFile> file, uint64_t offset, uint64_t size);

  size_t size() const { return file_ ? view_size_ : own_.size(); }
  bool empty() const { return size() == 0; }
  const uint8_t* data() const { return file_ ? file_->data() + offset_ : own_.data(); }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size(); }
  /// The owned bytes, copying a view first (copy on write).
  std::vector<uint8_t>& vec();
  uint8_t* data() { return vec().data(); }
  uint8_t* begin() { return vec().data(); }
  uint8_t* end() { return vec().data() + vec().size(); }
  void resize(size_t n) { vec().resize(n); }
  void assign(size_t n, uint8_t v) { vec().assign(n, v); }
  template <class It>
  void assign(It first, It last) {
    vec().assign(first, last);
  }

  /// The mapped file this is a view of, or null for owned bytes; the view starts at file_offset().
  const MappedFile* mapped_file() const { return file_.get(); }
  uint64_t file_offset() const { return offset_; }

  friend bool operator==(const Bytes& a, const Bytes& b);
  friend bool operator!=(const Bytes& a, const Bytes& b) { return !(a == b); }

 private:
  std::vector<uint8_t> own_;
  std::shared_ptr<const MappedFile> file_;
  uint64_t offset_ = 0;
  uint64_t view_size_ = 0;
};

/// `n` zero bytes for a large tensor about to be filled: from 4 MiB up, the 2 MiB-aligned part of
/// the buffer is advised to use transparent huge pages (madvise(2) MADV_HUGEPAGE; the kernel's
/// default THP mode is "madvise") before it is first touched, so filling it takes one page fault
/// per 2 MiB instead of one per 4 KiB (resnet18's folded weights, 45 MB: ~11,000 faults fewer).
/// Elsewhere an ordinary vector.
std::vector<uint8_t> LargeZeroBytes(size_t n);

}  // namespace msc::weights
