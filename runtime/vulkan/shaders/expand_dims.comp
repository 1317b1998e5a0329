// expand_dims: contiguous copy (none at all when input and output are the same arena bytes).
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
