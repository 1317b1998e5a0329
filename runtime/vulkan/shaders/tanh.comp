// tanh: Y = tanh(X), computed as sign(x) * (1 - 2 / (exp(2|x|) + 1)) (no inf/inf for large |x|).
// Bindings (X, Y), push and specialization constants: see common/unary.glsl.
#version 450
#include "common/unary.glsl"
vec4 Op(vec4 x) { return sign(x) * (1.0 - 2.0 / (exp(2.0 * abs(x)) + 1.0)); }
