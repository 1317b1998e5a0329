// nn.log_softmax along one axis (x - max - log(sum(exp(x - max)))). Bindings (X, Y) and push
// constants: see common/softmax.glsl.
// msc_vk:variants f16
#version 450
#define LOG_SOFTMAX 1
#include "common/softmax.glsl"
