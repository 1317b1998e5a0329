// msc_vk::SafetensorsFile: a validating reader of the safetensors format.
//
// Format: u64 little-endian header length N, N bytes of JSON
//   {"<name>": {"dtype": "F32", "shape": [64, 3, 7, 7], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {...}}
// then the data section; offsets are bytes relative to the start of the data section.
// The constructor validates the whole header (length within the file, JSON object, known dtype,
// non-negative shape, offsets inside the data section, end - begin == numel * dtype size);
// Read() checks the caller's expected dtype and shape. Every error names the file (and tensor).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dtype.h"

namespace msc_vk {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range within the data section
};

class SafetensorsFile {
 public:
  // `role` names the file in messages: "weights file", "golden file". Throws msc_vk::Error when
  // the file is missing, unreadable, truncated or has an invalid header.
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

// Writes a safetensors file (used by tests and tools). Each tensor: name, dtype, shape, bytes.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<uint8_t> data;
};
void WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors);

}  // namespace msc_vk
