// floor_mod: C = A - floor(A / B) * B (sign of B).
// Bindings, push and specialization constants: see common/binary.glsl.
// msc_vk:variants ext
#version 450
#include "common/binary.glsl"
