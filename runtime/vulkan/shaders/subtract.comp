// subtract: C = A - B, numpy broadcasting.
// Bindings (A, B, C), push and specialization constants: see common/binary.glsl.
#version 450
#include "common/binary.glsl"
vec4 Op(vec4 a, vec4 b) { return a - b; }
