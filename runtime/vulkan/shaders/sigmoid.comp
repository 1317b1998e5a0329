// sigmoid: Y = 1 / (1 + exp(-X)). Bindings (X, Y), push and specialization constants: see common/unary.glsl.
#version 450
#include "common/unary.glsl"
vec4 Op(vec4 x) { return 1.0 / (1.0 + exp(-x)); }
