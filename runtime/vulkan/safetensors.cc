#include "safetensors.h"

#include <nlohmann/json.hpp>

#include <fstream>

#include "error.h"

namespace msc_vk {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;

uint64_t ReadU64LE(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::string SafetensorsFile::Where() const { return role_ + " '" + path_ + "'"; }

SafetensorsFile::SafetensorsFile(const std::string& path, const std::string& role)
    : path_(path), role_(role) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw Error(Where() + " not found or not readable");
  file_size_ = static_cast<uint64_t>(f.tellg());
  if (file_size_ < 8) {
    throw Error(Where() + ": " + std::to_string(file_size_) +
                " bytes is too short for a safetensors header");
  }
  unsigned char len_bytes[8];
  f.seekg(0);
  f.read(reinterpret_cast<char*>(len_bytes), 8);
  const uint64_t header_len = ReadU64LE(len_bytes);
  if (header_len > file_size_ - 8 || header_len > kMaxHeaderBytes) {
    throw Error(Where() + ": header length " + std::to_string(header_len) +
                " exceeds the file size of " + std::to_string(file_size_) +
                " bytes (truncated or not a safetensors file)");
  }
  std::string header(header_len, '\0');
  f.read(&header[0], static_cast<std::streamsize>(header_len));
  if (!f) throw Error(Where() + ": cannot read the " + std::to_string(header_len) + "-byte header");
  data_start_ = 8 + header_len;
  const uint64_t data_size = file_size_ - data_start_;

  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    throw Error(Where() + ": header is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(Where() + ": header is not a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string where = Where() + ": tensor '" + it.key() + "'";
    const nlohmann::json& v = it.value();
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
        !v.contains("data_offsets")) {
      throw Error(where + ": expected an object with keys dtype, shape, data_offsets");
    }
    SafetensorsEntry e;
    e.name = it.key();
    if (!v["dtype"].is_string() ||
        !ParseSafetensorsDType(v["dtype"].get<std::string>(), &e.dtype)) {
      throw Error(where + ": unsupported dtype " + v["dtype"].dump() +
                  " (supported: F32, F16, F64, I8, I16, I32, I64, U8, BOOL)");
    }
    if (!v["shape"].is_array()) throw Error(where + ": shape is not an array");
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned())
        throw Error(where + ": shape " + v["shape"].dump() +
                    " has a non-integer or negative dimension");
      e.shape.push_back(d.get<int64_t>());
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned()) {
      throw Error(where + ": data_offsets " + off.dump() +
                  " is not a pair of non-negative integers");
    }
    e.begin = off[0].get<uint64_t>();
    e.end = off[1].get<uint64_t>();
    if (e.begin > e.end || e.end > data_size) {
      throw Error(where + ": data_offsets [" + std::to_string(e.begin) + ", " +
                  std::to_string(e.end) + "] lie outside the data section of " +
                  std::to_string(data_size) + " bytes (truncated file?)");
    }
    const uint64_t need = static_cast<uint64_t>(NumElements(e.shape)) * DTypeSize(e.dtype);
    if (e.end - e.begin != need) {
      throw Error(where + ": " + DTypeName(e.dtype) + " " + ShapeToString(e.shape) + " needs " +
                  std::to_string(need) + " bytes but data_offsets cover " +
                  std::to_string(e.end - e.begin));
    }
    entries_.emplace(e.name, std::move(e));
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
