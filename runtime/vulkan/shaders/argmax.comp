// argmax: index of the first maximum (IS_MIN = 0).
// Bindings, push and specialization constants: see common/argreduce.glsl.
// msc_vk:variants ext
#version 450
#include "common/argreduce.glsl"
