// clip: Y = min(max(X, p0), p1) (float bounds may be -inf / +inf; integer X: i_lo, i_hi).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
