// split: a strided copy per output piece, or one for all equal pieces laid out evenly (ops_copy.cc).
// Bindings, push and specialization constants: see common/copy.glsl.
// msc_vk:variants ext
#version 450
#include "common/copy.glsl"
