// nn.gelu: Y = 0.5 X (1 + erf(X / sqrt(2))) (torch approximate='none').
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
