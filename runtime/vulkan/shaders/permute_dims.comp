// permute_dims: permute_dims (axes; empty axes reverse the dims): strided gather copy.
// Bindings (X, Y), push and specialization constants: see common/copy.glsl.
#version 450
#include "common/copy.glsl"
