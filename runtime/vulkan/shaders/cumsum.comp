// cumsum: running sum along axis.
// Bindings, push and specialization constants: see common/cumsum.glsl.
// msc_vk:variants ext
#version 450
#include "common/cumsum.glsl"
