// strided_slice: strided_slice (begin, end, strides, axes; negative steps allowed): strided copy.
// Bindings (X, Y), push and specialization constants: see common/copy.glsl.
#version 450
#include "common/copy.glsl"
