// safetensors reader and writer.
//
// Format source: https://github.com/huggingface/safetensors (README "Format"; the reference
// implementation safetensors/src/tensor.rs: `SafeTensors::read_metadata`, `Metadata::validate`,
// `prepare`, `serialize_to_file`, enum `Dtype`):
//   8 bytes   u64 little-endian N = header size
//   N bytes   UTF-8 JSON object, starting with '{', padded with trailing spaces (the reference
//             writer pads to a multiple of 8): {"__metadata__": {str: str} (optional),
//             "<name>": {"dtype": "F32", "shape": [d0, ...], "data_offsets": [begin, end]}, ...}
//   rest      byte buffer; offsets are relative to its start; tensors are C-contiguous,
//             little-endian, and together cover the buffer exactly.
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generator/common/error.h"
#include "generator/weights/file_io.h"
#include "generator/weights/weights.h"

namespace msc::weights {

namespace {

using detail::CheckedMul;
using detail::CheckedNumel;

/// safetensors/src/tensor.rs MAX_HEADER_SIZE: the reference reader rejects larger headers.
constexpr uint64_t kMaxHeaderSize = 100000000;

struct DtypeCode {
  const char* code;  ///< safetensors dtype string
  const char* name;  ///< MSC dtype name
  int order;  ///< position in tensor.rs `enum Dtype` ("MUST be in increasing alignment order")
};

// The supported subset of tensor.rs `enum Dtype`, with the enum positions of v0.4
// (BOOL U8 I8 F8_E5M2 F8_E4M3 I16 U16 F16 BF16 I32 U32 F32 F64 I64 U64); later versions insert
// new types without changing the relative order of these ten.
constexpr DtypeCode kDtypes[] = {
    {"BOOL", "bool", 0},    {"U8", "uint8", 1},      {"I8", "int8", 2},   {"I16", "int16", 5},
    {"F16", "float16", 7},  {"BF16", "bfloat16", 8}, {"I32", "int32", 9}, {"F32", "float32", 11},
    {"F64", "float64", 12}, {"I64", "int64", 13},
};

const DtypeCode* FindByCode(const std::string& code) {
  for (const auto& d : kDtypes) {
    if (code == d.code) return &d;
  }
  return nullptr;
}

const DtypeCode* FindByName(const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string SupportedCodes() {
  std::string s;
  for (const auto& d : kDtypes) s += std::string(s.empty() ? "" : " ") + d.code;
  return s;
}

/// JSON value as a non-negative int64, or false.
bool AsNonNegativeInt(const nlohmann::json& v, int64_t* out) {
  if (!v.is_number_unsigned()) return false;
  uint64_t u = v.get<uint64_t>();
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = static_cast<int64_t>(u);
  return true;
}

/// A header value shown in an error message, kept short.
std::string Snippet(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

/// Where errors point: "<path>: safetensors: <message>".
struct Source {
  std::string path;
  [[noreturn]] void Fail(const std::string& message) const {
    throw Error(path + ": safetensors: " + message);
  }
};

struct Entry {
  std::string name;
  const DtypeCode* dtype = nullptr;
  std::vector<int64_t> shape;
  int64_t nbytes = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

Entry ParseEntry(const Source& f, const std::string& name, const nlohmann::json& info) {
  const std::string where = "tensor '" + name + "': ";
  if (!info.is_object()) f.Fail(where + "header entry is not an object: " + Snippet(info));
  Entry e;
  e.name = name;
  auto dt = info.find("dtype");
  if (dt == info.end() || !dt->is_string()) f.Fail(where + "missing string field 'dtype'");
  e.dtype = FindByCode(dt->get<std::string>());
  if (e.dtype == nullptr) {
    f.Fail(where + "unsupported dtype " + Snippet(*dt) + " (supported: " + SupportedCodes() + ")");
  }
  auto sh = info.find("shape");
  if (sh == info.end() || !sh->is_array()) f.Fail(where + "missing array field 'shape'");
  for (const auto& d : *sh) {
    int64_t v;
    if (!AsNonNegativeInt(d, &v)) {
      f.Fail(where + "shape " + Snippet(*sh) +
             " has an entry that is not a non-negative 64-bit integer");
    }
    e.shape.push_back(v);
  }
  int64_t numel = CheckedNumel(e.shape);
  if (numel < 0 || !CheckedMul(numel, DtypeItemSize(e.dtype->name), &e.nbytes)) {
    f.Fail(where + "shape " + FormatShape(e.shape) + " of dtype " + e.dtype->code +
           " overflows 64-bit sizes");
  }
  auto off = info.find("data_offsets");
  int64_t b = 0, en = 0;
  if (off == info.end() || !off->is_array() || off->size() != 2 ||
      !AsNonNegativeInt((*off)[0], &b) || !AsNonNegativeInt((*off)[1], &en)) {
    f.Fail(where + "'data_offsets' must be [begin, end] with non-negative integers, got " +
           (off == info.end() ? std::string("nothing") : Snippet(*off)));
  }
  e.begin = static_cast<uint64_t>(b);
  e.end = static_cast<uint64_t>(en);
  if (e.end < e.begin) {
    f.Fail(where + "data_offsets [" + std::to_string(b) + "," + std::to_string(en) +
           "] end before begin");
  }
  if (e.end - e.begin != static_cast<uint64_t>(e.nbytes)) {
    f.Fail(where + "data_offsets [" + std::to_string(b) + "," + std::to_string(en) + "] span " +
           std::to_string(e.end - e.begin) + " bytes but dtype " + e.dtype->code + " shape " +
           FormatShape(e.shape) + " needs " + std::to_string(e.nbytes));
  }
  return e;
}

}  // namespace

TensorMap ReadSafetensors(const std::string& path) { return ReadSafetensors(path, nullptr); }

TensorMap ReadSafetensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  if (metadata != nullptr) metadata->clear();
  const Source f{path};
  // The file is mapped, not read: tensors are views into the mapping (bytes.h), so a multi-GB
  // file costs only the pages of the tensors that are used, and copying it out is done in-kernel.
  auto file = std::make_shared<const MappedFile>(path, "safetensors");
  const uint8_t* base = file->data();
  const uint64_t size = file->size();
  if (size < 8) {
    f.Fail("file has " + std::to_string(size) + " bytes, too short for the 8-byte header size");
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | base[i];
  if (n > size - 8) {
    f.Fail("header size " + std::to_string(n) + " exceeds the " + std::to_string(size - 8) +
           " bytes after it (truncated file, or not a safetensors file)");
  }
  if (n > kMaxHeaderSize) {
    f.Fail("header size " + std::to_string(n) + " exceeds the format's limit of " +
           std::to_string(kMaxHeaderSize) + " bytes");
  }
  const std::string header(reinterpret_cast<const char*>(base + 8), static_cast<size_t>(n));
  if (header.empty() || header[0] != '{') f.Fail("header does not start with '{'");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    auto close = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    f.Fail("header is not valid JSON: " + what);
  }
  if (!j.is_object()) f.Fail("header is not a JSON object");

  std::vector<Entry> entries;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) f.Fail("'__metadata__' is not an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) f.Fail("'__metadata__' entry '" + m.key() + "' is not a string");
        if (metadata != nullptr) (*metadata)[m.key()] = m->get<std::string>();
      }
      continue;
    }
    entries.push_back(ParseEntry(f, it.key(), it.value()));
  }

  // As tensor.rs: sort by offsets, then the tensors must tile the buffer exactly.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const uint64_t buffer_start = 8 + n;
  const uint64_t buffer_len = size - buffer_start;
  uint64_t expected = 0;
  for (const Entry& e : entries) {
    const std::string offsets = "[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]";
    if (e.begin != expected) {
      f.Fail("tensor '" + e.name + "': data_offsets " + offsets +
             (e.begin < expected ? " overlap" : " leave a gap after") +
             " the previous tensor, which ends at " + std::to_string(expected) +
             " (tensors must cover the data buffer contiguously)");
    }
    if (e.end > buffer_len) {
      f.Fail("tensor '" + e.name + "': data_offsets " + offsets + " run past the end of the " +
             std::to_string(buffer_len) + "-byte data buffer (truncated file?)");
    }
    expected = e.end;
  }
  if (expected != buffer_len) {
    f.Fail("the tensors cover " + std::to_string(expected) + " bytes but the data buffer has " +
           std::to_string(buffer_len) + " (trailing bytes after the last tensor)");
  }

  // Every range now lies within the file: the tensors view it.
  TensorMap out;
  for (const Entry& e : entries) {
    Tensor t;
    t.dtype = e.dtype->name;
    t.shape = e.shape;
    t.data = Bytes::View(file, buffer_start + e.begin, e.end - e.begin);
    out.emplace(e.name, std::move(t));
  }
  return out;
}

void WriteSafetensors(const std::string& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  struct Item {
    const std::string* name;
    const Tensor* tensor;
    const DtypeCode* dtype;
  };
  std::vector<Item> items;
  for (const auto& [name, t] : tensors) {
    const std::string where = path + ": cannot write tensor '" + name + "': ";
    if (name == "__metadata__") throw Error(where + "the name is reserved for the metadata");
    const DtypeCode* dt = FindByName(t.dtype);
    if (dt == nullptr) {
      throw Error(
          where + "unsupported dtype '" + t.dtype +
          "' (supported: float32 float16 bfloat16 float64 int8 int16 int32 int64 uint8 bool)");
    }
    int64_t numel = CheckedNumel(t.shape);
    int64_t nbytes = 0;
    if (numel < 0 || !CheckedMul(numel, DtypeItemSize(t.dtype), &nbytes)) {
      throw Error(where + "invalid shape " + FormatShape(t.shape));
    }
    if (static_cast<uint64_t>(nbytes) != t.data.size()) {
      throw Error(where + "has " + std::to_string(t.data.size()) + " data bytes, dtype " + t.dtype +
                  " shape " + FormatShape(t.shape) + " needs " + std::to_string(nbytes));
    }
    items.push_back({&name, &t, dt});
  }
  // tensor.rs `prepare`: descending dtype alignment, then name.
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.dtype->order != b.dtype->order) return a.dtype->order > b.dtype->order;
    return *a.name < *b.name;
  });

  std::string header = "{";
  try {
    const auto strict = nlohmann::json::error_handler_t::strict;
    if (!metadata.empty())
      header += "\"__metadata__\":" + nlohmann::json(metadata).dump(-1, ' ', false, strict);
    uint64_t offset = 0;
    for (const Item& it : items) {
      if (header.size() > 1) header += ",";
      header += nlohmann::json(*it.name).dump(-1, ' ', false, strict);
      header += ":{\"dtype\":\"";
      header += it.dtype->code;
      header += "\",\"shape\":[";
      for (size_t i = 0; i < it.tensor->shape.size(); ++i) {
        if (i) header += ",";
        header += std::to_string(it.tensor->shape[i]);
      }
      const uint64_t end = offset + it.tensor->data.size();
      header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
      offset = end;
    }
  } catch (const nlohmann::json::exception&) {
    throw Error(path +
                ": cannot write safetensors: a tensor name or metadata string is not valid UTF-8");
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  if (header.size() > kMaxHeaderSize) {
    throw Error(path + ": cannot write safetensors: the header would be " +
                std::to_string(header.size()) + " bytes, over the format's limit of " +
                std::to_string(kMaxHeaderSize));
  }

  std::string prefix;
  detail::AppendU64(&prefix, header.size());
  detail::OutputFile out(path);
  out.Write(prefix.data(), prefix.size());
  out.Write(header.data(), header.size());
  // Views of one mapped file that follow each other there as they do here (the usual case when
  // the input already is safetensors in this order: every tensor) are copied as one range, in the
  // kernel and without bringing the pages into this process: one copy_file_range per run, not per
  // tensor (a 100,000-node graph has ~70,000 small weights).
  for (size_t i = 0; i < items.size();) {
    const Bytes& b = items[i].tensor->data;
    const MappedFile* src = b.mapped_file();
    if (!src) {
      out.Write(b.data(), b.size());
      ++i;
      continue;
    }
    uint64_t run = b.size();
    size_t j = i + 1;
    for (; j < items.size(); ++j) {
      const Bytes& next = items[j].tensor->data;
      if (next.mapped_file() != src || next.file_offset() != b.file_offset() + run) break;
      run += next.size();
    }
    out.CopyFrom(src->fd(), b.file_offset(), b.data(), run);
    i = j;
  }
  out.Commit();
}

}  // namespace msc::weights
