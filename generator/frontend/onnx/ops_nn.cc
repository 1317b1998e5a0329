// ONNX neural-network ops -> MSC nn.* / msc.* optypes (opdefs/nn.yaml, msc.yaml).
#include "generator/frontend/onnx/convert.h"

namespace msc::frontend::onnx_import {

void RegisterNnOps(ConverterMap&) {}

}  // namespace msc::frontend::onnx_import
