// msc.gelu: MSC's fused tanh-approximation GELU pattern, computed as nn.gelu_tanh.
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
