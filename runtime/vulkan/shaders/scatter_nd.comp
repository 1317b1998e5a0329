// scatter_nd: ONNX ScatterND with reductions (SCATTER_ND = 1).
// Bindings, push and specialization constants: see common/scatter.glsl.
// msc_vk:variants ext
#version 450
#include "common/scatter.glsl"
