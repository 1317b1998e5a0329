// tanh: Y = tanh(X), as sign(x) (1 - 2 / (exp(2|x|) + 1)) (no inf/inf for large |x|).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
