// nn.avg_pool2d (NCHW): pool_size, strides, padding, ceil_mode, count_include_pad (torch semantics).
// Bindings (X, Y) and push constants: see common/pool2d.glsl.
// msc_vk:variants f16
#version 450
#define POOL_AVG 1
#include "common/pool2d.glsl"
