// nn.layer_norm: Y = (X - mean) / sqrt(var + epsilon) * gamma + beta over the normalized axes.
// Bindings (X, gamma, beta, Y), push and specialization constants: see common/normalize.glsl.
// msc_vk:variants f16
#version 450
#include "common/normalize.glsl"
