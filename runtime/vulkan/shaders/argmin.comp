// argmin: index of the first minimum (IS_MIN = 1).
// Bindings, push and specialization constants: see common/argreduce.glsl.
// msc_vk:variants ext
#version 450
#include "common/argreduce.glsl"
