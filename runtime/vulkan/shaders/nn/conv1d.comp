// nn.conv1d: the conv2d kernel on [N, C, 1, W] views (H = KH = 1). Bindings (X, W, Y, residual),
// push and specialization constants: see common/conv2d.glsl. Only the direct kernel
// (ops_gemm.cc keeps it for 1-D convolutions).
// msc_vk:kernel direct act f16
#version 450
#include "common/conv2d.glsl"
