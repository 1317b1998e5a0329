// gather_elements: torch.gather / ONNX GatherElements.
// Bindings, push and specialization constants: see common/gather_elements.glsl.
// msc_vk:variants ext
#version 450
#include "common/gather_elements.glsl"
