// nn.softmax along one axis. Bindings (X, Y) and push constants: see common/softmax.glsl.
#version 450
#include "common/softmax.glsl"
