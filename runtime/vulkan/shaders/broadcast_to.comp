// broadcast_to: numpy broadcast (source stride 0 on broadcast dims).
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
