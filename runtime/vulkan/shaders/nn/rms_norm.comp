// nn.rms_norm: Y = X / sqrt(mean(X^2) + epsilon) * weight over the normalized axes.
// Bindings (X, weight, unused, Y), push and specialization constants: see common/normalize.glsl.
// msc_vk:variants f16
#version 450
#define NORM_RMS 1
#include "common/normalize.glsl"
