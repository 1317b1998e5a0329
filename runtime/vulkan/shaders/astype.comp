// astype: Y = X converted to Y's dtype (float -> int truncates toward zero; nonzero -> true).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
