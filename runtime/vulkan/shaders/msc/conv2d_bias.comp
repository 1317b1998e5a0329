// msc.conv2d_bias: Y = conv2d(X, W) + bias[O] (nn.conv2d followed by a channel bias add).
// Bindings (X, W, bias, Y, residual), push and specialization constants: see common/conv2d.glsl.
// msc_vk:variants sg act f16
#version 450
#define HAS_BIAS 1
#include "common/conv2d.glsl"
