// nn.relu: Y = max(X, 0). Bindings (X, Y), push and specialization constants: see common/unary.glsl.
#version 450
#include "common/unary.glsl"
vec4 Op(vec4 x) { return max(x, vec4(0.0)); }
