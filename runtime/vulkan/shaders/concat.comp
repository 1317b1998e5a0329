// concat: concat along axis: one strided copy dispatch per input into its slab of the output.
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
