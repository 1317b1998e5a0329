// flip: Y = X reversed along axis (negative source stride).
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
