// nn.adaptive_avg_pool2d (NCHW): output_size from the output tensor, torch window rule.
// Bindings (X, Y) and push constants: see common/pool2d.glsl.
// msc_vk:variants f16
#version 450
#define POOL_ADAPTIVE 1
#include "common/pool2d.glsl"
