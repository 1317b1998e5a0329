// msc.conv2d_bias: Y = conv2d(X, W) + bias[O] (nn.conv2d followed by a channel bias add).
// Bindings (X, W, bias, Y, residual), push and specialization constants: see common/conv2d.glsl.
// msc_vk:kernel direct act f16
// msc_vk:kernel wino_input
// msc_vk:kernel wino_gemm sg
// msc_vk:kernel wino_output act f16
// msc_vk:kernel gemm1x1 sg act f16
// msc_vk:kernel depthwise act f16
// msc_vk:kernel im2col
// msc_vk:kernel im2col_gemm sg act f16
#version 450
#define HAS_BIAS 1
#include "common/conv2d.glsl"
