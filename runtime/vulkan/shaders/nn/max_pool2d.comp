// nn.max_pool2d (NCHW): pool_size, strides, padding (top, left, bottom, right), dilation, ceil_mode.
// Bindings (X, Y) and push constants: see common/pool2d.glsl.
// msc_vk:variants f16
#version 450
#define POOL_MAX 1
#include "common/pool2d.glsl"
