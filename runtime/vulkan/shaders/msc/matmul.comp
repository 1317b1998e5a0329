// msc.matmul: numpy matmul, as matmul.comp. Bindings (A, B, C, residual), push and
// specialization constants: see common/gemm.glsl.
// msc_vk:variants sg act f16
#version 450
#include "common/gemm.glsl"
