// transpose: transpose (torch dims swap, as permute_dims): strided gather copy.
// Bindings (X, Y), push and specialization constants: see common/copy.glsl.
#version 450
#include "common/copy.glsl"
