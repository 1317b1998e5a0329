// nn.softmax along one axis. Bindings (X, Y) and push constants: see common/softmax.glsl.
// msc_vk:variants f16
#version 450
#include "common/softmax.glsl"
