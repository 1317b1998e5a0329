// msc.linear_bias: Y[..., N] = X[..., K] @ W[N, K]^T + bias[N] (TRANS_B = 1).
// Bindings (X, W, bias, Y, residual), push and specialization constants: see common/gemm.glsl.
// msc_vk:variants sg act f16
#version 450
#define HAS_BIAS 1
#include "common/gemm.glsl"
