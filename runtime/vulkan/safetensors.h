// msc_vk::SafetensorsFile: a validating reader of the safetensors format.
//
// Format (https://github.com/huggingface/safetensors README "Format"; the checks follow the
// reference reader, safetensors/src/tensor.rs `Metadata::validate`):
//   u64 little-endian header length N (at most 100,000,000: the reference's MAX_HEADER_SIZE),
//   N bytes of UTF-8 JSON object, starting with '{', trailing spaces allowed, no duplicate keys:
//     {"<name>": {"dtype": "F32", "shape": [64, 3, 7, 7], "data_offsets": [begin, end]}, ...,
//      "__metadata__": {"<key>": "<string>", ...}}
//   then the data section; offsets are bytes relative to its start.
// The constructor validates the whole header and rejects, with an msc_vk::Error naming the file
// (and the tensor): a file shorter than 8 bytes, a header length over the limit or past the end
// of the file, a header that is not UTF-8, not a JSON object or not valid JSON (nesting deeper
// than 256 included), a duplicate key, a '__metadata__' that is not an object of strings, an
// entry without dtype/shape/data_offsets, an unknown dtype, a negative or non-integer dimension,
// a shape whose byte size overflows int64 (running product, as tensor.rs's checked_mul), offsets
// that are not two non-negative integers, end < begin, end past the data section,
// end - begin != numel * dtype size, and tensors that, sorted by offset, overlap, leave a gap or
// leave trailing bytes (they must cover the data section exactly). Read() checks the caller's
// expected dtype and shape. Messages share their wording with the Python loaders of the
// generated torch/relax/numpy projects (templates/*/helpers/load_safetensors.py.j2).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dtype.h"

namespace msc_vk {

// Largest header accepted (bytes): safetensors/src/tensor.rs MAX_HEADER_SIZE.
constexpr uint64_t kSafetensorsMaxHeaderBytes = 100000000;
// Deepest JSON nesting accepted in a header (a valid one nests 3 deep).
constexpr int kSafetensorsMaxDepth = 256;

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range within the data section
};

class SafetensorsFile {
 public:
  // `role` names the file in messages: "weights file", "golden file". Throws msc_vk::Error when
  // the file is missing, not a regular file, unreadable, truncated or has an invalid header (see
  // the list above).
  explicit SafetensorsFile(const std::string& path, const std::string& role = "safetensors file");

  const std::string& path() const { return path_; }
  bool Has(const std::string& name) const { return entries_.count(name) != 0; }
  // Throws when absent, listing (up to 20 of) the tensors that exist.
  const SafetensorsEntry& Entry(const std::string& name) const;
  std::vector<std::string> Names() const;  // sorted

  // Reads tensor `name` into dst[0, dst_bytes) after checking that its dtype and shape equal
  // `dtype` and `shape` and that dst_bytes equals its byte size.
  void Read(const std::string& name, DType dtype, const Shape& shape, void* dst,
            size_t dst_bytes) const;
  // Reads tensor `name` (any dtype/shape) as raw bytes.
  std::vector<uint8_t> ReadBytes(const std::string& name) const;

 private:
  std::string Where() const;  // "weights file 'model.safetensors'"
  void ReadRange(const SafetensorsEntry& e, void* dst) const;

  std::string path_, role_;
  uint64_t file_size_ = 0, data_start_ = 0;
  std::map<std::string, SafetensorsEntry> entries_;
};

// Writes a safetensors file (used by tests and tools). Each tensor: name, dtype, shape, bytes;
// laid out contiguously in the given order. Throws Error for a repeated or reserved
// ("__metadata__") name or a failed write.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<uint8_t> data;
};
void WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors);

}  // namespace msc_vk
