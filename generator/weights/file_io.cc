#include "generator/weights/file_io.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/ir/graph.h"

namespace msc::weights::detail {

namespace fs = boost::filesystem;

namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

InputFile::InputFile(const std::string& path, std::string format)
    : path_(path), format_(std::move(format)) {
  boost::system::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    throw Error(path + ": cannot open " + format_ + ": " +
                (ec ? ec.message() : std::string("no such file")));
  }
  if (!fs::is_regular_file(st))
    throw Error(path + ": cannot open " + format_ + ": not a regular file");
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) throw Error(path + ": cannot open " + format_ + ": " + ErrnoText(errno));
  // The size of the opened file (not of a path that might have changed in between).
  if (std::fseek(file_, 0, SEEK_END) != 0) {
    int err = errno;
    std::fclose(file_);
    throw Error(path + ": cannot seek in " + format_ + ": " + ErrnoText(err));
  }
  long end = std::ftell(file_);
  if (end < 0 || std::fseek(file_, 0, SEEK_SET) != 0) {
    int err = errno;
    std::fclose(file_);
    throw Error(path + ": cannot seek in " + format_ + ": " + ErrnoText(err));
  }
  size_ = static_cast<uint64_t>(end);
}

InputFile::~InputFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void InputFile::Fail(const std::string& message) const {
  throw Error(path_ + ": " + format_ + ": " + message);
}

void InputFile::Seek(uint64_t offset) {
  if (offset > size_) {
    Fail("offset " + std::to_string(offset) + " is past the end of the file (" +
         std::to_string(size_) + " bytes)");
  }
  if (offset > static_cast<uint64_t>(std::numeric_limits<long>::max()) ||
      std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) {
    Fail("cannot seek to byte " + std::to_string(offset) + ": " + ErrnoText(errno));
  }
  pos_ = offset;
}

void InputFile::Read(void* dst, uint64_t n, const std::string& what) {
  if (n > left()) {
    Fail("truncated at byte " + std::to_string(pos_) + ": " + what + " needs " + std::to_string(n) +
         " bytes, only " + std::to_string(left()) + " left (file has " + std::to_string(size_) +
         " bytes)");
  }
  if (n == 0) return;
  size_t got = std::fread(dst, 1, static_cast<size_t>(n), file_);
  if (got != n) {
    Fail("read error at byte " + std::to_string(pos_ + got) + " while reading " + what + ": " +
         (std::ferror(file_) ? ErrnoText(errno) : std::string("unexpected end of file")));
  }
  pos_ += n;
}

uint64_t InputFile::ReadU64(const std::string& what) {
  unsigned char b[8];
  Read(b, 8, what);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

int64_t InputFile::ReadI64(const std::string& what) {
  uint64_t u = ReadU64(what);
  int64_t v;
  std::memcpy(&v, &u, sizeof v);  // two's complement reinterpretation, no UB
  return v;
}

int32_t InputFile::ReadI32(const std::string& what) {
  unsigned char b[4];
  Read(b, 4, what);
  uint32_t u = static_cast<uint32_t>(b[0]) | (static_cast<uint32_t>(b[1]) << 8) |
               (static_cast<uint32_t>(b[2]) << 16) | (static_cast<uint32_t>(b[3]) << 24);
  int32_t v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

uint16_t InputFile::ReadU16(const std::string& what) {
  unsigned char b[2];
  Read(b, 2, what);
  return static_cast<uint16_t>(b[0] | (b[1] << 8));
}

uint8_t InputFile::ReadU8(const std::string& what) {
  unsigned char b;
  Read(&b, 1, what);
  return b;
}

std::string InputFile::ReadString(uint64_t n, const std::string& what) {
  if (n > left()) Read(nullptr, n, what);  // throws the truncation error before allocating
  std::string s(static_cast<size_t>(n), '\0');
  Read(s.data(), n, what);
  return s;
}

std::vector<uint8_t> InputFile::ReadBytes(uint64_t n, const std::string& what) {
  if (n > left()) Read(nullptr, n, what);  // throws the truncation error before allocating
  std::vector<uint8_t> v(static_cast<size_t>(n));
  Read(v.data(), n, what);
  return v;
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  boost::system::error_code ec;
  fs::path p(path);
  fs::path tmp =
      p.parent_path() / fs::unique_path("." + p.filename().string() + ".tmp-%%%%-%%%%-%%%%", ec);
  if (ec) throw Error(path + ": cannot create a temporary file name: " + ec.message());
  tmp_path_ = tmp.string();
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) throw Error(path + ": cannot write: " + ErrnoText(errno));
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(tmp_path_.c_str());
}

void OutputFile::Fail(const std::string& message) {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  std::remove(tmp_path_.c_str());
  throw Error(path_ + ": " + message);
}

void OutputFile::Write(const void* data, size_t n) {
  if (n == 0) return;
  if (std::fwrite(data, 1, n, file_) != n) Fail("write failed: " + ErrnoText(errno));
}

void OutputFile::CopyFrom(int src_fd, uint64_t src_offset, const void* src_bytes, uint64_t n) {
  if (n == 0) return;
  if (std::fflush(file_) != 0) Fail("write failed: " + ErrnoText(errno));
  const int out_fd = ::fileno(file_);
  loff_t in_off = static_cast<loff_t>(src_offset);
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got =
        ::copy_file_range(src_fd, &in_off, out_fd, nullptr, static_cast<size_t>(n - done), 0);
    if (got > 0) {
      done += static_cast<uint64_t>(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno != EXDEV && errno != ENOSYS && errno != EOPNOTSUPP && errno != EINVAL &&
        errno != EBADF && errno != EPERM)
      Fail("copy_file_range failed: " + ErrnoText(errno));
    break;  // not supported here (or a short source): write the rest through the stdio buffer
  }
  // Resynchronize the stdio stream with the descriptor's offset, which the kernel moved.
  if (std::fseek(file_, 0, SEEK_END) != 0) Fail("seek failed: " + ErrnoText(errno));
  if (done < n) Write(static_cast<const uint8_t*>(src_bytes) + done, static_cast<size_t>(n - done));
}

void OutputFile::Commit() {
  if (std::fflush(file_) != 0) Fail("write failed: " + ErrnoText(errno));
  int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) Fail("write failed on close: " + ErrnoText(errno));
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    Fail("cannot rename the temporary file " + tmp_path_ + " into place: " + ErrnoText(errno));
  }
  committed_ = true;
}

void AppendU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

int64_t CheckedNumel(const std::vector<int64_t>& shape) {
  const int64_t n = ir::ShapeNumel(shape);
  return n == -2 ? -1 : n;  // overflow reads as -1 here
}

}  // namespace msc::weights::detail
