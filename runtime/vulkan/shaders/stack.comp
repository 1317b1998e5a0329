// stack: stack along a new axis: one strided copy per input.
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
