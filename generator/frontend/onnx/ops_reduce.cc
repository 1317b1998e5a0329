// ONNX reductions, arg-reductions, softmax-family and cumulative ops -> MSC reduce optypes
// (opdefs/reduce.yaml).
#include "generator/frontend/onnx/convert.h"

namespace msc::frontend::onnx_import {

void RegisterReduceOps(ConverterMap&) {}

}  // namespace msc::frontend::onnx_import
