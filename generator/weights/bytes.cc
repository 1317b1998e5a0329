#include "generator/weights/bytes.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "generator/common/error.h"

namespace msc::weights {

MappedFile::MappedFile(const std::string& path, const std::string& what) : path_(path) {
  auto fail = [&](const std::string& why, const char* verb = "open") {
    const std::string msg = path + ": cannot " + verb + " " + what + ": " + why;
    if (fd_ >= 0) ::close(fd_);
    throw Error(msg);
  };
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail("not a regular file");
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) fail(std::strerror(errno), "map");
    data_ = static_cast<const uint8_t*>(p);
  }
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

Bytes Bytes::View(std::shared_ptr<const MappedFile> file, uint64_t offset, uint64_t size) {
  Bytes b;
  b.file_ = std::move(file);
  b.offset_ = offset;
  b.view_size_ = size;
  return b;
}

std::vector<uint8_t>& Bytes::vec() {
  if (file_) {
    const uint8_t* view = file_->data() + offset_;
    own_.assign(view, view + view_size_);
    file_.reset();
    offset_ = view_size_ = 0;
  }
  return own_;
}

std::vector<uint8_t> LargeZeroBytes(size_t n) {
  std::vector<uint8_t> v;
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (n >= 2 * kHuge) {
    v.reserve(n);  // allocated, not yet touched
    const uintptr_t begin = reinterpret_cast<uintptr_t>(v.data());
    const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = (begin + n) & ~(kHuge - 1);
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  v.resize(n);
  return v;
}

bool operator==(const Bytes& a, const Bytes& b) {
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace msc::weights
