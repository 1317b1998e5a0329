// clip: Y = min(max(X, p0), p1) with p0 = a_min, p1 = a_max (either may be -inf / +inf).
// Bindings (X, Y), push and specialization constants: see common/unary.glsl.
#version 450
#include "common/unary.glsl"
vec4 Op(vec4 x) { return min(max(x, vec4(p.p0)), vec4(p.p1)); }
