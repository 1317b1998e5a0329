// one_hot: one-hot encoding of integer indices.
// Bindings, push and specialization constants: see common/one_hot.glsl.
// msc_vk:variants ext
#version 450
#include "common/one_hot.glsl"
