// masked_fill: Y = mask ? value : X (host: where(mask, value, X)).
// Bindings, push and specialization constants: see common/where.glsl.
// msc_vk:variants ext
#version 450
#include "common/where.glsl"
