// gather_nd: ONNX GatherND.
// Bindings, push and specialization constants: see common/gather_nd.glsl.
// msc_vk:variants ext
#version 450
#include "common/gather_nd.glsl"
