// ones_like: Y = 1, X's shape.
// Bindings, push and specialization constants: see common/fill.glsl.
// msc_vk:variants ext
#version 450
#include "common/fill.glsl"
