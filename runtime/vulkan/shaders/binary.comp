// binary: C = A op B with numpy broadcasting for every elementwise binary op (the OP
// specialization constant, shaders/common/binary_ops.glsl).
// Bindings, push and specialization constants: see common/binary.glsl.
// msc_vk:variants ext
#version 450
#include "common/binary.glsl"
