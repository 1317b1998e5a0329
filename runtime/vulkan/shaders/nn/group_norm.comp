// nn.group_norm: per (group of channels, other kept coords): Y = (X - mean) / sqrt(var + eps)
// * gamma[c] + beta[c]. Bindings (X, gamma, beta, Y), push and specialization constants: see
// common/normalize.glsl.
// msc_vk:variants f16
#version 450
#include "common/normalize.glsl"
