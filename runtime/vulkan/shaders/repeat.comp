// repeat: numpy.repeat: index space with an extra repeat dim of source stride 0.
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
