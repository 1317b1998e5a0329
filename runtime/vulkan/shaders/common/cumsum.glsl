// cumsum: X viewed as [outer, L, inner] (axis = null: [1, numel, 1]):
//
//   Y[o, l, r] = sum_{m <= l} X[o, m, r]       (EXCLUSIVE: m < l, so Y[o, 0, r] = 0)
// One invocation per (o, r) line, sequential over l. Sums in Y's domain: float32 for float YT,
// else ITYPE (X converted first; bool counts as 0/1).
// Bindings: 0 X (View::kTexelUint), 1 Y (storage). Push: total (lines), L, inner, div_m,
// div_s (FastDiv magic for inner). Workgroup (64, 1, 1), 2-D grid folded by LinearId().
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint EXCLUSIVE = 0;
layout(constant_id = 1) const uint XT = DT_F32;
layout(constant_id = 2) const uint YT = DT_F32;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
OUTPUT(1, Y)

layout(push_constant) uniform Push {
  uint total, L, inner, div_m, div_s;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  const uint o = FastDiv(i, p.div_m, p.div_s);
  const uint base = o * p.L * p.inner + (i - o * p.inner);
  if (IsFloatType(YT)) {
    float s = 0.0;
    for (uint l = 0, e = base; l < p.L; ++l, e += p.inner) {
      const float v = LoadF(X, XT, e);
      if (EXCLUSIVE == 0) s += v;
      StoreF_Y(YT, e, s);
      if (EXCLUSIVE != 0) s += v;
    }
  } else {
    ITYPE s = ITYPE(0);
    for (uint l = 0, e = base; l < p.L; ++l, e += p.inner) {
      const ITYPE v = LoadI(X, XT, e);
      if (EXCLUSIVE == 0) s += v;
      StoreI_Y(YT, e, s);
      if (EXCLUSIVE != 0) s += v;
    }
  }
}
