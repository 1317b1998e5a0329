// ONNX TensorProto <-> msc::weights::Tensor, and ONNX element types <-> MSC dtype names.
//
// Field meanings follow onnx/onnx.proto3 (ONNX 1.12, `message TensorProto`): data is either in
// `raw_data` (little-endian, C order) or in the typed repeated field of the element type
// (float_data: FLOAT; int32_data: INT32/INT16/INT8/UINT16/UINT8/BOOL and the bits of
// FLOAT16/BFLOAT16; int64_data: INT64; double_data: DOUBLE; uint64_data: UINT32/UINT64), or, with
// data_location = EXTERNAL, in a file named by the `location` key of external_data (ONNX's
// "External Data" spec, docs/ExternalData.md: keys location, offset, length), relative to the
// model's folder.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "generator/weights/weights.h"

namespace msc::frontend::onnx_import {

/// MSC dtype name of an ONNX TensorProto.DataType ("float32", "int64", "bool", ...), or "" when
/// MSC has none (strings, complex, uint16/32/64, float8).
std::string DtypeFromOnnx(int elem_type);
/// ONNX TensorProto.DataType name for messages ("FLOAT", "STRING", ...).
std::string OnnxTypeName(int elem_type);
/// The ONNX element type of an MSC dtype name; 0 (UNDEFINED) when there is none.
int OnnxFromDtype(const std::string& dtype);

/// Converts a TensorProto to a dense tensor. `model_dir` resolves external data; `where` names the
/// tensor in errors ("model.onnx: initializer 'conv1.weight'"). Throws msc::Error for an element
/// type MSC has no dtype for, a data size that does not match the shape, a segment/external file
/// that cannot be read, or an external location that is absolute or leaves the model's folder.
weights::Tensor TensorFromProto(const onnx::TensorProto& proto, const std::string& model_dir,
                                const std::string& where);
/// The reverse: raw_data, dims, data_type (name left empty).
onnx::TensorProto TensorToProto(const weights::Tensor& tensor);

/// Reads one serialized TensorProto file (ONNX backend tests' input_N.pb / output_N.pb).
/// Throws msc::Error naming the file when it cannot be read or parsed.
onnx::TensorProto ReadTensorProtoFile(const std::string& path);

}  // namespace msc::frontend::onnx_import
