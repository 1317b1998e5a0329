// Softmax along one axis, included by nn/softmax.comp and nn/log_softmax.comp (LOG_SOFTMAX).
// X viewed as [outer, L, inner], L = size of the axis; m = max_l X[o, :, n]:
//   softmax:     Y[o, l, n] = exp(X[o, l, n] - m) / sum_l exp(X[o, l, n] - m)
//   log_softmax: Y[o, l, n] = X[o, l, n] - m - log(sum_l exp(X[o, l, n] - m))
// One (o, n) row per invocation (three passes over L).
// Bindings: 0 X (texel float), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over outer * inner.
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { OUT_T Y[]; };

layout(push_constant) uniform Push {
  uint outer, L, inner;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.outer * p.inner) return;
  const uint base = (i / p.inner) * p.L * p.inner + i % p.inner;
  float m = -1.0 / 0.0;
  for (uint l = 0, e = base; l < p.L; ++l, e += p.inner) m = max(m, Fetch(X, e));
  float s = 0.0;
  for (uint l = 0, e = base; l < p.L; ++l, e += p.inner) s += exp(Fetch(X, e) - m);
#ifdef LOG_SOFTMAX
  const float shift = m + log(s);
  for (uint l = 0, e = base; l < p.L; ++l, e += p.inner) Y[e] = OUT_T(Fetch(X, e) - shift);
#else
  const float r = 1.0 / s;
  for (uint l = 0, e = base; l < p.L; ++l, e += p.inner) Y[e] = OUT_T(exp(Fetch(X, e) - m) * r);
#endif
}
