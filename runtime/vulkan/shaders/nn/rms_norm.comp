// nn.rms_norm: Y = X / sqrt(mean(X^2) + epsilon) * weight over the normalized axes.
// Bindings (X, weight, unused, Y), push and specialization constants: see common/normalize.glsl.
#version 450
#define NORM_RMS 1
#include "common/normalize.glsl"
