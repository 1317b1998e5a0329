// concat: concat along axis: one strided copy dispatch per input into its slab of the output.
// Bindings (X, Y), push and specialization constants: see common/copy.glsl.
#version 450
#include "common/copy.glsl"
