// reshape: contiguous copy (none at all when input and output are the same arena bytes).
// Bindings (X, Y), push and specialization constants: see common/copy.glsl.
#version 450
#include "common/copy.glsl"
