// nn.batch_norm (inference): Y = (X - mean[c]) / sqrt(var[c] + epsilon) * gamma[c] + beta[c],
// c = the index along `axis`; X viewed as [outer, C, inner] (inner = product of dims after axis).
//
// VEC4 = 1 (inner % 4 == 0): one vec4 per invocation (vec4 view of X); else one float.
// Bindings: 0 X, 1 gamma, 2 beta, 3 mean, 4 var (texel, float views except X), 5 Y (storage).
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total / 4 (VEC4) or total.
// msc_vk:variants f16
#version 450
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint VEC4 = 0;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(set = 0, binding = 1) uniform samplerBuffer Gamma;
layout(set = 0, binding = 2) uniform samplerBuffer Beta;
layout(set = 0, binding = 3) uniform samplerBuffer Mean;
layout(set = 0, binding = 4) uniform samplerBuffer Var;
layout(std430, set = 0, binding = 5) writeonly buffer BufY { OUT_T Y[]; };
layout(std430, set = 0, binding = 5) writeonly buffer BufY4 { OUT_T4 Y4[]; };

layout(push_constant) uniform Push {
  uint total;  // elements
  uint C;      // channels (size of `axis`)
  uint inner;  // elements per channel row
  float epsilon;
} p;

void main() {
  const uint i = LinearId();
  const uint e = VEC4 != 0 ? i * 4 : i;
  if (e >= p.total) return;
  const uint c = (e / p.inner) % p.C;
  const float scale = Fetch(Gamma, c) / sqrt(Fetch(Var, c) + p.epsilon);
  const float shift = Fetch(Beta, c) - Fetch(Mean, c) * scale;
  if (VEC4 != 0) {
    Y4[i] = OUT_T4(texelFetch(X, int(i)) * scale + shift);
  } else {
    Y[i] = OUT_T(Fetch(X, i) * scale + shift);
  }
}
