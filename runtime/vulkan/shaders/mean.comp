// mean: mean over axes; keepdims only changes the output shape.
// Bindings (X, Y), push and specialization constants: see common/reduce.glsl.
// msc_vk:variants ext
#version 450
#define REDUCE_OP OP_MEAN
#include "common/reduce.glsl"
