// msc.conv1d_bias: conv1d + bias[O], the conv2d kernel on [N, C, 1, W] views. Bindings (X, W,
// bias, Y, residual), push and specialization constants: see common/conv2d.glsl. Only the direct
// kernel (ops_gemm.cc keeps it for 1-D convolutions).
// msc_vk:kernel direct act f16
#version 450
#define HAS_BIAS 1
#include "common/conv2d.glsl"
