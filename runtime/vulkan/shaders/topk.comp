// topk: the k best elements and their indices.
// Bindings, push and specialization constants: see common/topk.glsl.
// msc_vk:variants ext
#version 450
#include "common/topk.glsl"
