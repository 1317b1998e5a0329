// scatter_elements: ONNX ScatterElements with reductions (SCATTER_ND = 0).
// Bindings, push and specialization constants: see common/scatter.glsl.
// msc_vk:variants ext
#version 450
#include "common/scatter.glsl"
