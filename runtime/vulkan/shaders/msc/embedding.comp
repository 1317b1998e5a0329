// msc.embedding: Y = weight[ids] (take along axis 0).
// Bindings, push and specialization constants: see common/take.glsl.
// msc_vk:variants ext
#version 450
#include "common/take.glsl"
