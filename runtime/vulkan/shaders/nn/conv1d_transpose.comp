// nn.conv1d_transpose (NCW, IOW): the 2-D kernel on [N, C, 1, W] views.
// Bindings (X, W, Y) and push constants: see common/conv_transpose.glsl.
#version 450
#include "common/conv_transpose.glsl"
