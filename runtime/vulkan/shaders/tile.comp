// tile: numpy.tile: index space (repeat, dim) pairs with source stride 0 on the repeat dims.
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
