// msc.linear: Y[..., N] = X[..., K] @ W[N, K]^T (TRANS_B = 1).
// Bindings (X, W, Y, residual), push and specialization constants: see common/gemm.glsl.
// msc_vk:variants sg act f16
#version 450
#include "common/gemm.glsl"
