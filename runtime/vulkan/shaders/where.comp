// where: Y = cond ? x1 : x2 (three-way broadcasting).
// Bindings, push and specialization constants: see common/where.glsl.
// msc_vk:variants ext
#version 450
#include "common/where.glsl"
