// nn.softplus: Y = log(1 + exp(beta X)) / beta, X where beta X > threshold (p0 = beta, p1 = threshold).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
