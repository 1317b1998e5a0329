// TVM param dict reader (the file tvm.runtime.save_param_dict writes) and format sniffing.
//
// Format source: apache/tvm v0.20 src/runtime/file_utils.cc (SaveParams / LoadParams),
// include/tvm/runtime/ndarray.h (SaveDLTensor / LoadDLTensor, kTVMNDArrayMagic), dmlc-core
// serializer.h (std::vector<std::string> = u64 count, then per string u64 length + bytes), and
// dlpack.h (DLDevice, DLDataType, DLDataTypeCode). All integers little-endian:
//   u64 kTVMNDArrayListMagic 0xF7E58D4F05049CB7, u64 reserved
//   u64 name count, names (u64 length + bytes each)
//   u64 array count (== name count), then per array:
//     u64 kTVMNDArrayMagic 0xDD5E40F096B4A13F, u64 reserved,
//     DLDevice {i32 device_type (kDLCPU = 1), i32 device_id}, i32 ndim,
//     DLDataType {u8 code, u8 bits, u16 lanes}, i64 shape[ndim],
//     i64 data_byte_size (= numel * ((bits + 7) / 8)), data bytes.
#include <set>
#include <string>
#include <vector>

#include "generator/common/error.h"
#include "generator/weights/file_io.h"
#include "generator/weights/weights.h"

namespace msc::weights {

namespace {

constexpr uint64_t kTVMNDArrayListMagic = 0xF7E58D4F05049CB7ULL;
constexpr uint64_t kTVMNDArrayMagic = 0xDD5E40F096B4A13FULL;
constexpr int32_t kDLCPU = 1;

std::string Hex(uint64_t v) {
  static const char* digits = "0123456789ABCDEF";
  std::string s;
  for (int i = 15; i >= 0; --i) s += digits[(v >> (4 * i)) & 0xF];
  return "0x" + s;
}

/// MSC dtype name of a DLDataType, or "" if unsupported.
std::string DtypeName(uint8_t code, uint8_t bits) {
  switch (code) {
    case 0:  // kDLInt
      if (bits == 8) return "int8";
      if (bits == 16) return "int16";
      if (bits == 32) return "int32";
      if (bits == 64) return "int64";
      break;
    case 1:  // kDLUInt; TVM's DataType::Bool() is uint1, stored one byte per element
      if (bits == 1) return "bool";
      if (bits == 8) return "uint8";
      break;
    case 2:  // kDLFloat
      if (bits == 16) return "float16";
      if (bits == 32) return "float32";
      if (bits == 64) return "float64";
      break;
    case 4:  // kDLBfloat
      if (bits == 16) return "bfloat16";
      break;
    case 6:  // kDLBool (DLPack >= 0.8)
      if (bits == 8) return "bool";
      break;
    default:
      break;
  }
  return "";
}

}  // namespace

TensorMap ReadParamDict(const std::string& path) {
  detail::InputFile f(path, "TVM param dict");
  const uint64_t magic = f.ReadU64("magic");
  if (magic != kTVMNDArrayListMagic) {
    f.Fail("bad magic " + Hex(magic) + " at byte 0 (expected " + Hex(kTVMNDArrayListMagic) +
           "; not a file written by tvm.runtime.save_param_dict)");
  }
  f.ReadU64("reserved");
  const uint64_t name_count = f.ReadU64("name count");
  // Each name takes at least its 8-byte length, so a count beyond that is corrupt: never reserve
  // memory for a count the file cannot hold.
  if (name_count > f.left() / 8) {
    f.Fail("name count " + std::to_string(name_count) + " at byte 16 cannot fit in the " +
           std::to_string(f.left()) + " bytes left");
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (uint64_t i = 0; i < name_count; ++i) {
    const std::string what = "name " + std::to_string(i);
    const uint64_t at = f.pos();
    const uint64_t len = f.ReadU64(what + " length");
    if (len > f.left()) {
      f.Fail("truncated at byte " + std::to_string(f.pos()) + ": " + what + " length " +
             std::to_string(len) + " (at byte " + std::to_string(at) + ") exceeds the " +
             std::to_string(f.left()) + " bytes left");
    }
    names.push_back(f.ReadString(len, what));
    if (!seen.insert(names.back()).second)
      f.Fail("duplicate name '" + names.back() + "' at byte " + std::to_string(at));
  }
  const uint64_t array_at = f.pos();
  const uint64_t array_count = f.ReadU64("array count");
  if (array_count != name_count) {
    f.Fail("array count " + std::to_string(array_count) + " at byte " + std::to_string(array_at) +
           " differs from the name count " + std::to_string(name_count));
  }

  TensorMap out;
  for (uint64_t i = 0; i < array_count; ++i) {
    const std::string& name = names[i];
    const std::string arr = "array " + std::to_string(i) + " ('" + name + "')";
    const uint64_t start = f.pos();
    const uint64_t amagic = f.ReadU64(arr + " magic");
    if (amagic != kTVMNDArrayMagic) {
      f.Fail(arr + ": bad magic " + Hex(amagic) + " at byte " + std::to_string(start) +
             " (expected " + Hex(kTVMNDArrayMagic) + ")");
    }
    f.ReadU64(arr + " reserved");
    const int32_t device_type = f.ReadI32(arr + " device type");
    f.ReadI32(arr + " device id");
    if (device_type != kDLCPU) {
      f.Fail(arr + ": device type " + std::to_string(device_type) + " at byte " +
             std::to_string(start + 16) + " (expected kDLCPU = 1)");
    }
    const uint64_t ndim_at = f.pos();
    const int32_t ndim = f.ReadI32(arr + " ndim");
    const uint8_t code = f.ReadU8(arr + " dtype code");
    const uint8_t bits = f.ReadU8(arr + " dtype bits");
    const uint16_t lanes = f.ReadU16(arr + " dtype lanes");
    if (ndim < 0 || static_cast<uint64_t>(ndim) > f.left() / 8) {
      f.Fail(arr + ": ndim " + std::to_string(ndim) + " at byte " + std::to_string(ndim_at) +
             (ndim < 0 ? " is negative"
                       : " cannot fit in the " + std::to_string(f.left()) + " bytes left"));
    }
    Tensor t;
    t.dtype = lanes == 1 ? DtypeName(code, bits) : "";
    if (t.dtype.empty()) {
      f.Fail(arr + ": unsupported DLDataType code " + std::to_string(code) + " bits " +
             std::to_string(bits) + " lanes " + std::to_string(lanes) + " at byte " +
             std::to_string(ndim_at + 4) +
             " (supported: int8/16/32/64, uint8, bool, float16/32/64, bfloat16; lanes 1)");
    }
    const uint64_t shape_at = f.pos();
    for (int32_t d = 0; d < ndim; ++d) t.shape.push_back(f.ReadI64(arr + " shape"));
    const int64_t numel = detail::CheckedNumel(t.shape);
    int64_t nbytes = 0;
    if (numel < 0 || !detail::CheckedMul(numel, DtypeItemSize(t.dtype), &nbytes)) {
      f.Fail(arr + ": invalid shape " + FormatShape(t.shape) + " at byte " +
             std::to_string(shape_at) + " (negative dim or size overflow)");
    }
    const uint64_t nbytes_at = f.pos();
    const int64_t stored = f.ReadI64(arr + " byte size");
    if (stored != nbytes) {
      f.Fail(arr + ": byte size " + std::to_string(stored) + " at byte " +
             std::to_string(nbytes_at) + " but dtype " + t.dtype + " shape " +
             FormatShape(t.shape) + " needs " + std::to_string(nbytes));
    }
    t.data = f.ReadBytes(static_cast<uint64_t>(nbytes), arr + " data");
    out.emplace(name, std::move(t));
  }
  if (f.left() != 0) {
    f.Fail(std::to_string(f.left()) + " trailing bytes after the last array, at byte " +
           std::to_string(f.pos()));
  }
  return out;
}

TensorMap ReadWeights(const std::string& path) {
  uint64_t size = 0;
  uint64_t magic = 0;
  int next = -1;  // byte 8, -1 if none
  {
    detail::InputFile f(path, "weights file");
    size = f.size();
    if (size < 8) {
      f.Fail("file has " + std::to_string(size) +
             " bytes, too short for safetensors or a TVM param dict");
    }
    magic = f.ReadU64("magic");
    if (size > 8) next = f.ReadU8("header");
  }
  if (magic == kTVMNDArrayListMagic) return ReadParamDict(path);
  // An 8-byte file is a safetensors file cut after its header size: let its reader say so.
  if (next == '{' || size == 8) return ReadSafetensors(path);
  throw Error(path +
              ": not a weights file: expected safetensors (u64 header size, then '{') or a "
              "TVM param dict (magic " +
              Hex(kTVMNDArrayListMagic) + ")");
}

}  // namespace msc::weights
