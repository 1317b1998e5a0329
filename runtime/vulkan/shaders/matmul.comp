// matmul: C[..., M, N] = A[..., M, K] @ B[..., K, N], numpy batch broadcasting (TRANS_B: B[..., N, K]).
// Bindings (A, B, C, residual), push and specialization constants: see common/gemm.glsl.
// msc_vk:variants sg act f16
#version 450
#include "common/gemm.glsl"
