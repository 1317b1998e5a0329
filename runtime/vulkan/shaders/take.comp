// take: Y = X indexed by indices along axis.
// Bindings, push and specialization constants: see common/take.glsl.
// msc_vk:variants ext
#version 450
#include "common/take.glsl"
