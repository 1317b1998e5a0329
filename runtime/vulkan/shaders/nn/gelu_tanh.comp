// nn.gelu_tanh: Y = 0.5 X (1 + tanh(sqrt(2/pi) (X + 0.044715 X^3))) (torch approximate='tanh').
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
