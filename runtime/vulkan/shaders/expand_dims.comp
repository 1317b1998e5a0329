// expand_dims: expand_dims (a reshape: contiguous copy).
// Bindings (X, Y), push and specialization constants: see common/copy.glsl.
#version 450
#include "common/copy.glsl"
