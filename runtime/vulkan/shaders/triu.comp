// triu: keep col - row >= k of the last two dims.
// Bindings, push and specialization constants: see common/trilu.glsl.
// msc_vk:variants ext
#version 450
#include "common/trilu.glsl"
