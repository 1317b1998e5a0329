// nn.leakyrelu: Y = X > 0 ? X : alpha X (p0 = alpha).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
