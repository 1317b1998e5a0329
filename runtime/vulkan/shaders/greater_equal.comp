// greater_equal: C = A >= B (bool).
// Bindings, push and specialization constants: see common/binary.glsl.
// msc_vk:variants ext
#version 450
#include "common/binary.glsl"
