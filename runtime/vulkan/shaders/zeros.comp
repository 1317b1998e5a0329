// zeros: Y = 0.
// Bindings, push and specialization constants: see common/fill.glsl.
// msc_vk:variants ext
#version 450
#include "common/fill.glsl"
