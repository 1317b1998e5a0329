#include "generator/frontend/onnx/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <limits>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/weights/bytes.h"

namespace msc::frontend::onnx_import {

namespace fs = boost::filesystem;
using onnx::TensorProto;

std::string DtypeFromOnnx(int t) {
  switch (t) {
    case TensorProto::FLOAT:
      return "float32";
    case TensorProto::FLOAT16:
      return "float16";
    case TensorProto::BFLOAT16:
      return "bfloat16";
    case TensorProto::DOUBLE:
      return "float64";
    case TensorProto::INT8:
      return "int8";
    case TensorProto::INT16:
      return "int16";
    case TensorProto::INT32:
      return "int32";
    case TensorProto::INT64:
      return "int64";
    case TensorProto::UINT8:
      return "uint8";
    case TensorProto::BOOL:
      return "bool";
    default:
      return "";
  }
}

std::string OnnxTypeName(int t) {
  if (TensorProto::DataType_IsValid(t))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t));
  return "data type " + std::to_string(t);
}

int OnnxFromDtype(const std::string& dtype) {
  for (int t = 1; t <= 16; ++t)
    if (DtypeFromOnnx(t) == dtype) return t;
  return TensorProto::UNDEFINED;
}

namespace {

/// Copies `values` (one per element) into `out` as `item`-byte little-endian elements.
template <typename Src, typename Dst>
void Pack(const Src& values, std::vector<uint8_t>* out) {
  out->resize(static_cast<size_t>(values.size()) * sizeof(Dst));
  for (int i = 0; i < values.size(); ++i) {
    Dst v = static_cast<Dst>(values.Get(i));
    std::memcpy(out->data() + static_cast<size_t>(i) * sizeof(Dst), &v, sizeof(Dst));
  }
}

/// `raw` as owned bytes, filled by one memcpy into a buffer that takes huge pages when large.
std::vector<uint8_t> CopyBytes(const std::string& raw) {
  std::vector<uint8_t> v = weights::LargeZeroBytes(raw.size());
  if (!raw.empty()) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

std::string ReadExternal(const TensorProto& p, const std::string& model_dir,
                         const std::string& where) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      throw Error(where + ": external_data '" + kv.key() + "' is not an integer: '" + kv.value() +
                  "'");
    }
  }
  fs::path rel(location);
  if (location.empty() || rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
    throw Error(where + ": external data location '" + location +
                "' must be a relative path inside the model's folder");
  fs::path file = fs::path(model_dir) / rel;
  std::ifstream in(file.string(), std::ios::binary);
  if (!in) throw Error(where + ": cannot open external data file " + file.string());
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  if (offset < 0 || offset > size || (length >= 0 && length > size - offset))
    throw Error(where + ": external data offset " + std::to_string(offset) + " length " +
                std::to_string(length) + " past the end of " + file.string() + " (" +
                std::to_string(size) + " bytes)");
  if (length < 0) length = size - offset;
  std::string data(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(data.data(), length);
  return data;
}

}  // namespace

weights::Tensor TensorFromProto(const TensorProto& p, const std::string& model_dir,
                                const std::string& where) {
  weights::Tensor t;
  t.dtype = DtypeFromOnnx(p.data_type());
  if (t.dtype.empty())
    throw Error(where + ": element type " + OnnxTypeName(p.data_type()) +
                " has no MSC dtype (supported: float32, float16, bfloat16, float64, int8, int16, "
                "int32, int64, uint8, bool)");
  int64_t numel = 1;
  for (int64_t d : p.dims()) {
    if (d < 0 || (d > 0 && numel > std::numeric_limits<int64_t>::max() / d))
      throw Error(where + ": invalid dims");
    t.shape.push_back(d);
    numel *= d;
  }
  const int64_t item = weights::DtypeItemSize(t.dtype);
  int64_t nbytes = 0;  // numel * item wrapped for dims like [2^62] (then empty data "matched")
  if (__builtin_mul_overflow(numel, item, &nbytes))
    throw Error(where + ": invalid dims (" + weights::FormatShape(t.shape) + " " + t.dtype +
                " is more bytes than int64 can count)");
  if (p.data_location() == TensorProto::EXTERNAL) {
    t.data = CopyBytes(ReadExternal(p, model_dir, where));
  } else if (p.has_raw_data()) {
    t.data = CopyBytes(p.raw_data());
  } else {
    switch (p.data_type()) {
      case TensorProto::FLOAT:
        Pack<decltype(p.float_data()), float>(p.float_data(), &t.data.vec());
        break;
      case TensorProto::DOUBLE:
        Pack<decltype(p.double_data()), double>(p.double_data(), &t.data.vec());
        break;
      case TensorProto::INT64:
        Pack<decltype(p.int64_data()), int64_t>(p.int64_data(), &t.data.vec());
        break;
      case TensorProto::INT32:
        Pack<decltype(p.int32_data()), int32_t>(p.int32_data(), &t.data.vec());
        break;
      case TensorProto::INT16:
        Pack<decltype(p.int32_data()), int16_t>(p.int32_data(), &t.data.vec());
        break;
      case TensorProto::INT8:
        Pack<decltype(p.int32_data()), int8_t>(p.int32_data(), &t.data.vec());
        break;
      case TensorProto::UINT8:
      case TensorProto::BOOL:
        Pack<decltype(p.int32_data()), uint8_t>(p.int32_data(), &t.data.vec());
        break;
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16:
        Pack<decltype(p.int32_data()), uint16_t>(p.int32_data(), &t.data.vec());
        break;
      default:
        break;
    }
  }
  if (static_cast<int64_t>(t.data.size()) != nbytes)
    throw Error(where + ": holds " + std::to_string(t.data.size()) + " bytes, expected " +
                std::to_string(nbytes) + " for " + t.dtype + " " + weights::FormatShape(t.shape));
  return t;
}

TensorProto TensorToProto(const weights::Tensor& t) {
  TensorProto p;
  p.set_data_type(OnnxFromDtype(t.dtype));
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_raw_data(t.data.data(), t.data.size());
  return p;
}

TensorProto ReadTensorProtoFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open tensor file");
  TensorProto p;
  if (!p.ParseFromIstream(&in)) throw Error(path + ": not a serialized ONNX TensorProto");
  return p;
}

}  // namespace msc::frontend::onnx_import
