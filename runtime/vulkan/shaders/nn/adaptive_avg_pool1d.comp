// nn.adaptive_avg_pool1d (NCW): the 2-D adaptive pooling kernel on [N, C, 1, W] views. Bindings
// (X, Y) and push constants: see common/pool2d.glsl.
// msc_vk:variants f16
#version 450
#define POOL_ADAPTIVE 1
#include "common/pool2d.glsl"
