// unary: Y = Op(X) for every elementwise unary op and dtype conversion (the OP specialization
// constant, shaders/common/unary_ops.glsl), astype / cast / full included.
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
