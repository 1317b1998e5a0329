// cast: Y = X converted to Y's dtype (MSC's name for astype).
// Bindings, push and specialization constants: see common/unary.glsl.
// msc_vk:variants ext
#version 450
#include "common/unary.glsl"
