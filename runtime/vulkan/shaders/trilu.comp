// trilu: triu (upper) or tril with diagonal offset k.
// Bindings, push and specialization constants: see common/trilu.glsl.
// msc_vk:variants ext
#version 450
#include "common/trilu.glsl"
