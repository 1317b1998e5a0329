// Internal helpers of generator/weights: bounded binary reads that never trust a size field
// before comparing it with the bytes actually left in the file, checked size arithmetic, and
// an atomic-enough file writer. Not part of the public API (see weights.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace msc::weights::detail {

/// A file opened for bounded reading. Every read checks the requested length against the bytes
/// left BEFORE reading or allocating, so a corrupt length field can neither overrun the file nor
/// make us allocate more memory than the file holds. Errors are msc::Error
/// "<path>: <format>: <message>".
class InputFile {
 public:
  /// Opens `path` (must be a regular file). `format` names the format in messages
  /// ("safetensors", "TVM param dict", "weights file").
  InputFile(const std::string& path, std::string format);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  const std::string& path() const { return path_; }

  /// Moves to an absolute offset (<= size()).
  void Seek(uint64_t offset);
  /// Reads exactly n bytes into dst; `what` names the field for the truncation message.
  void Read(void* dst, uint64_t n, const std::string& what);
  uint64_t ReadU64(const std::string& what);
  int64_t ReadI64(const std::string& what);
  int32_t ReadI32(const std::string& what);
  uint16_t ReadU16(const std::string& what);
  uint8_t ReadU8(const std::string& what);
  /// Reads n bytes as a string (n checked against the bytes left first).
  std::string ReadString(uint64_t n, const std::string& what);
  /// Reads n bytes into a vector (n checked against the bytes left first).
  std::vector<uint8_t> ReadBytes(uint64_t n, const std::string& what);

  /// The error to throw: msc::Error("<path>: <format>: <message>").
  [[noreturn]] void Fail(const std::string& message) const;

 private:
  std::string path_;
  std::string format_;
  std::FILE* file_ = nullptr;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
};

/// Writes a file "atomically enough": the bytes go to a temporary file next to `path`, which is
/// flushed, closed (close errors such as a full disk are reported) and then renamed over `path`.
/// On any failure the temporary file is removed and msc::Error "<path>: <message>" is thrown.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();  ///< removes the temporary file unless Commit() succeeded.
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void Write(const void* data, size_t n);
  /// Appends n bytes of the file open as `src_fd`, starting at `src_offset`, copied in the kernel
  /// (copy_file_range(2): no read into this process; a reflink where the filesystem shares
  /// extents). Where the kernel cannot (e.g. EXDEV/ENOSYS/EOPNOTSUPP/EINVAL), writes the same
  /// bytes from `src_bytes` (the caller's mapping of that range) instead.
  void CopyFrom(int src_fd, uint64_t src_offset, const void* src_bytes, uint64_t n);
  /// Closes the temporary file and renames it to the final path.
  void Commit();

 private:
  [[noreturn]] void Fail(const std::string& message);

  std::string path_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// Little-endian encoding of unsigned integers into a byte string.
void AppendU64(std::string* out, uint64_t v);

/// a * b, or false on int64 overflow (both must be >= 0).
bool CheckedMul(int64_t a, int64_t b, int64_t* out);
/// ir::ShapeNumel with one error value: the product of dims (1 for 0-d), or -1 if any dim is
/// negative; else 0 if any dim is 0 (wherever it stands); else -1 if the product overflows int64.
int64_t CheckedNumel(const std::vector<int64_t>& shape);

}  // namespace msc::weights::detail
