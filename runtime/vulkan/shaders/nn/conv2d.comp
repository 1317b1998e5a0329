// nn.conv2d: Y = conv2d(X, W), NCHW / OIHW, strides, padding, dilation, groups (incl. depthwise).
// Bindings (X, W, Y, residual), push and specialization constants: see common/conv2d.glsl.
// msc_vk:variants sg act f16
#version 450
#include "common/conv2d.glsl"
