// nn.selu: Y = scale (X > 0 ? X : alpha (exp(X) - 1)) (Klambauer et al. 2017).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
