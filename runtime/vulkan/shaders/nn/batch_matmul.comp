// nn.batch_matmul: C[b, M, N] = A[b, M, K] @ B[b, K, N] (TRANS_B: B[b, N, K]).
// Bindings (A, B, C, residual), push and specialization constants: see common/gemm.glsl.
// msc_vk:variants sg act f16
#version 450
#include "common/gemm.glsl"
