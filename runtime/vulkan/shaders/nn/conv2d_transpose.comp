// nn.conv2d_transpose (NCHW, IOHW): strides, padding, output_padding, dilation, groups.
// Bindings (X, W, Y) and push constants: see common/conv_transpose.glsl.
#version 450
#include "common/conv_transpose.glsl"
