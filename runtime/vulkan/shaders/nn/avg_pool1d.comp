// nn.avg_pool1d (NCW): the 2-D pooling kernel on [N, C, 1, W] views (count_include_pad,
// ceil_mode as torch). Bindings (X, Y) and push constants: see common/pool2d.glsl.
// msc_vk:variants f16
#version 450
#define POOL_AVG 1
#include "common/pool2d.glsl"
