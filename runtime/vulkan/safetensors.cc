#include "safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <tuple>

#include "error.h"

namespace msc_vk {
namespace {

uint64_t ReadU64LE(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Offset of the first byte of `s` that is not part of well-formed UTF-8 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or std::string::npos.
size_t FirstInvalidUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + 1 >= n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k) {
      if (i + k >= n || (p[i + k] & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return std::string::npos;
}

// A header value in a message: compact JSON (invalid UTF-8 replaced), at most 60 characters.
std::string Snippet(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() <= 60 ? s : s.substr(0, 57) + "...";
}

// Byte size of a tensor: the running product dtype_size * d0 * d1 * ... (tensor.rs folds
// checked_mul the same way); false when a step exceeds INT64_MAX, even if a later dim is 0.
bool CheckedBytes(const std::vector<uint64_t>& dims, uint64_t item_size, uint64_t* bytes) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t n = item_size;
  for (uint64_t d : dims) {
    if (d > kMax || (d != 0 && n > kMax / d)) return false;
    n *= d;
  }
  *bytes = n;
  return true;
}

// Whether `text` nests arrays/objects deeper than kSafetensorsMaxDepth (strings skipped). Checked
// before parsing: nlohmann's parser keeps a stack entry per open level, so a 100 MB header of
// '[' would otherwise cost gigabytes.
bool NestsTooDeeply(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kSafetensorsMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// Parses the header JSON. A key that repeats within one object (at any depth; the format
// forbids duplicates, nlohmann would keep the last) sets *duplicate to a message, and the result
// is to be discarded. Throws nlohmann::json::exception on invalid JSON.
nlohmann::json ParseHeader(const std::string& text, std::string* duplicate) {
  std::vector<std::set<std::string>> keys;  // keys seen in each open object
  nlohmann::json::parser_callback_t cb = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                                             nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) {
      keys.emplace_back();
    } else if (event == E::object_end) {
      if (!keys.empty()) keys.pop_back();
    } else if (event == E::key && !keys.empty() && parsed.is_string()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!keys.back().insert(key).second && duplicate->empty())
        *duplicate = "header has a duplicate key '" + key + "'";
    }
    return true;
  };
  return nlohmann::json::parse(text, cb);
}

}  // namespace

std::string SafetensorsFile::Where() const { return role_ + " '" + path_ + "'"; }

SafetensorsFile::SafetensorsFile(const std::string& path, const std::string& role)
    : path_(path), role_(role) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(Where() + " not found or not readable");
  if (!std::filesystem::is_regular_file(status)) throw Error(Where() + " is not a regular file");
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw Error(Where() + " not found or not readable");
  const std::streamoff end = f.tellg();
  if (end < 0) throw Error(Where() + ": cannot determine the file size");
  file_size_ = static_cast<uint64_t>(end);
  if (file_size_ < 8) {
    throw Error(Where() + ": " + std::to_string(file_size_) +
                " bytes is too short for a safetensors header");
  }
  unsigned char len_bytes[8];
  f.seekg(0);
  f.read(reinterpret_cast<char*>(len_bytes), 8);
  if (!f) throw Error(Where() + ": cannot read the header length");
  const uint64_t header_len = ReadU64LE(len_bytes);
  if (header_len > kSafetensorsMaxHeaderBytes) {
    throw Error(Where() + ": header length " + std::to_string(header_len) +
                " exceeds the limit of " + std::to_string(kSafetensorsMaxHeaderBytes) + " bytes");
  }
  if (header_len > file_size_ - 8) {
    throw Error(Where() + ": header length " + std::to_string(header_len) +
                " exceeds the file size of " + std::to_string(file_size_) +
                " bytes (truncated or not a safetensors file)");
  }
  std::string header(header_len, '\0');
  f.read(&header[0], static_cast<std::streamsize>(header_len));
  if (!f) throw Error(Where() + ": cannot read the " + std::to_string(header_len) + "-byte header");
  data_start_ = 8 + header_len;
  const uint64_t data_size = file_size_ - data_start_;

  const size_t bad = FirstInvalidUtf8(header);
  if (bad != std::string::npos)
    throw Error(Where() + ": header is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  if (header.empty() || header[0] != '{')
    throw Error(Where() + ": header is not a JSON object (it does not start with '{')");
  if (NestsTooDeeply(header))
    throw Error(Where() + ": header is not valid JSON: nested too deeply");
  nlohmann::json j;
  std::string duplicate;
  try {
    j = ParseHeader(header, &duplicate);
  } catch (const nlohmann::json::exception& e) {
    if (!duplicate.empty()) throw Error(Where() + ": " + duplicate);
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    const size_t close = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    throw Error(Where() + ": header is not valid JSON: " + what);
  }
  if (!duplicate.empty()) throw Error(Where() + ": " + duplicate);
  if (!j.is_object()) throw Error(Where() + ": header is not a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    const nlohmann::json& v = it.value();
    if (it.key() == "__metadata__") {
      bool strings = v.is_object();
      for (auto m = v.begin(); strings && m != v.end(); ++m) strings = m->is_string();
      if (!strings) throw Error(Where() + ": '__metadata__' is not an object of strings");
      continue;
    }
    const std::string where = Where() + ": tensor '" + it.key() + "'";
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
        !v.contains("data_offsets")) {
      throw Error(where + ": expected an object with keys dtype, shape, data_offsets");
    }
    SafetensorsEntry e;
    e.name = it.key();
    const nlohmann::json& dtype = v.at("dtype");
    if (!dtype.is_string() || !ParseSafetensorsDType(dtype.get<std::string>(), &e.dtype)) {
      throw Error(where + ": unsupported dtype " + Snippet(dtype) +
                  " (supported: F64, F32, F16, I64, I32, I16, I8, U8, BOOL)");
    }
    const nlohmann::json& shape = v.at("shape");
    if (!shape.is_array()) throw Error(where + ": shape is not an array");
    std::vector<uint64_t> dims;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) {
        throw Error(where + ": shape " + Snippet(shape) +
                    " has a non-integer or negative dimension");
      }
      dims.push_back(d.get<uint64_t>());
    }
    uint64_t need = 0;
    if (!CheckedBytes(dims, DTypeSize(e.dtype), &need)) {
      throw Error(where + ": shape " + Snippet(shape) + " of dtype " +
                  SafetensorsDTypeName(e.dtype) + " overflows 64-bit sizes");
    }
    for (uint64_t d : dims) e.shape.push_back(static_cast<int64_t>(d));  // each <= INT64_MAX
    const nlohmann::json& off = v.at("data_offsets");
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned()) {
      throw Error(where + ": data_offsets " + Snippet(off) +
                  " is not a pair of non-negative integers");
    }
    e.begin = off[0].get<uint64_t>();
    e.end = off[1].get<uint64_t>();
    const std::string range = "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.begin > e.end) throw Error(where + ": data_offsets " + range + " end before they begin");
    if (e.end > data_size) {
      throw Error(where + ": data_offsets " + range + " lie outside the data section of " +
                  std::to_string(data_size) + " bytes (truncated file?)");
    }
    if (e.end - e.begin != need) {
      throw Error(where + ": " + DTypeName(e.dtype) + " " + ShapeToString(e.shape) + " needs " +
                  std::to_string(need) + " bytes but data_offsets cover " +
                  std::to_string(e.end - e.begin));
    }
    entries_.emplace(e.name, std::move(e));
  }

  // Sorted by offset (then name, for a deterministic message), the tensors must tile the data
  // section: tensor.rs rejects overlaps and holes ("the byte buffer needs to be entirely indexed").
  std::vector<const SafetensorsEntry*> order;
  for (const auto& kv : entries_) order.push_back(&kv.second);
  std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return std::tie(a->begin, a->end, a->name) < std::tie(b->begin, b->end, b->name);
  });
  uint64_t covered = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry* e : order) {
    const std::string where = Where() + ": tensor '" + e->name + "': data_offsets [" +
                              std::to_string(e->begin) + ", " + std::to_string(e->end) + "]";
    if (e->begin < covered) {
      throw Error(where + " overlap tensor '" + previous->name + "' [" +
                  std::to_string(previous->begin) + ", " + std::to_string(previous->end) + "]");
    }
    if (e->begin > covered) {
      throw Error(where + " leave a gap of " + std::to_string(e->begin - covered) +
                  " bytes before them (the tensors must cover the data section contiguously)");
    }
    covered = e->end;
    previous = e;
  }
  if (covered != data_size) {
    throw Error(Where() + ": " + std::to_string(data_size - covered) +
                " trailing bytes after the last tensor (the tensors must cover the data section "
                "exactly)");
  }
}

const SafetensorsEntry& SafetensorsFile::Entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it != entries_.end()) return it->second;
  std::string list;
  size_t n = 0;
  for (const auto& kv : entries_) {
    if (n++ == 20) {
      list += ", ...";
      break;
    }
    list += (list.empty() ? "" : ", ") + kv.first;
  }
  throw Error(Where() + " has no tensor '" + name + "' (it has " + std::to_string(entries_.size()) +
              " tensors: " + (list.empty() ? "none" : list) + ")");
}

std::vector<std::string> SafetensorsFile::Names() const {
  std::vector<std::string> names;
  for (const auto& kv : entries_) names.push_back(kv.first);
  return names;
}

void SafetensorsFile::ReadRange(const SafetensorsEntry& e, void* dst) const {
  std::ifstream f(path_, std::ios::binary);
  if (!f) throw Error(Where() + " cannot be reopened for reading tensor '" + e.name + "'");
  f.seekg(static_cast<std::streamoff>(data_start_ + e.begin));
  f.read(static_cast<char*>(dst), static_cast<std::streamsize>(e.end - e.begin));
  if (!f) throw Error(Where() + ": short read of tensor '" + e.name + "'");
}

void SafetensorsFile::Read(const std::string& name, DType dtype, const Shape& shape, void* dst,
                           size_t dst_bytes) const {
  const SafetensorsEntry& e = Entry(name);
  const std::string where = Where() + ": tensor '" + name + "'";
  if (e.dtype != dtype) {
    throw Error(where + " has dtype " + SafetensorsDTypeName(e.dtype) + " (" + DTypeName(e.dtype) +
                "), expected " + SafetensorsDTypeName(dtype) + " (" + DTypeName(dtype) + ")");
  }
  if (e.shape != shape) {
    throw Error(where + " has shape " + ShapeToString(e.shape) + ", expected " +
                ShapeToString(shape));
  }
  if (e.end - e.begin != dst_bytes) {
    throw Error(where + " has " + std::to_string(e.end - e.begin) + " bytes, the destination " +
                std::to_string(dst_bytes));
  }
  ReadRange(e, dst);
}

std::vector<uint8_t> SafetensorsFile::ReadBytes(const std::string& name) const {
  const SafetensorsEntry& e = Entry(name);
  std::vector<uint8_t> bytes(e.end - e.begin);
  if (!bytes.empty()) ReadRange(e, bytes.data());
  return bytes;
}

void WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name == "__metadata__" || header.contains(t.name))
      throw Error("cannot write '" + path + "': tensor name '" + t.name +
                  "' is reserved or repeated");
    header[t.name] = {{"dtype", SafetensorsDTypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text += ' ';
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("cannot write '" + path + "'");
  unsigned char len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<unsigned char>((uint64_t{text.size()} >> (8 * i)) & 0xff);
  f.write(reinterpret_cast<const char*>(len), 8);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& t : tensors)
    f.write(reinterpret_cast<const char*>(t.data.data()),
            static_cast<std::streamsize>(t.data.size()));
  if (!f) throw Error("short write to '" + path + "'");
}

}  // namespace msc_vk
