// full: Y[i] = fill_value[0] converted to Y's dtype (X_SCALAR = 1).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
