// ONNX shape / layout / indexing ops -> MSC tensor and index optypes (opdefs/tensor.yaml,
// index.yaml, core.yaml).
#include "generator/frontend/onnx/convert.h"

namespace msc::frontend::onnx_import {

void RegisterTensorOps(ConverterMap&) {}

}  // namespace msc::frontend::onnx_import
