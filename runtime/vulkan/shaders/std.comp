// std: population standard deviation over axes (divides by N); keepdims only changes the output shape.
// Bindings (X, Y), push and specialization constants: see common/reduce.glsl.
// msc_vk:variants ext
#version 450
#define REDUCE_OP OP_STD
#include "common/reduce.glsl"
