// concatenate: as concat (MSC's name from other frameworks).
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
