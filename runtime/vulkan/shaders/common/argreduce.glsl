// argmax / argmin (IS_MIN = 0 / 1): X viewed as [outer, L, inner] (axis = null: [1, numel, 1]):
//
//   Y[o, r] = the first l in [0, L) with X[o, l, r] maximal (minimal)
// NaN counts as the extreme (the first NaN wins), as torch. X dtype XT (compared as float32
// for float dtypes, else ITYPE); Y dtype YT (int64 or int32).
// Bindings: 0 X (View::kTexelUint), 1 Y (storage). Push: total (outputs), L, inner, div_m,
// div_s (FastDiv magic for inner). Workgroup (64, 1, 1), 2-D grid folded by LinearId().
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint IS_MIN = 0;
layout(constant_id = 1) const uint XT = DT_F32;
layout(constant_id = 2) const uint YT = DT_I64;

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
  uint best = 0;
  if (IsFloatType(XT)) {
    float bv = LoadF(X, XT, base);
    for (uint l = 1, e = base + p.inner; l < p.L && !isnan(bv); ++l, e += p.inner) {
      const float v = LoadF(X, XT, e);
      if (isnan(v) || (IS_MIN != 0 ? v < bv : v > bv)) {
        bv = v;
        best = l;
      }
    }
  } else {
    ITYPE bv = LoadI(X, XT, base);
    for (uint l = 1, e = base + p.inner; l < p.L; ++l, e += p.inner) {
      const ITYPE v = LoadI(X, XT, e);
      if (IS_MIN != 0 ? v < bv : v > bv) {
        bv = v;
        best = l;
      }
    }
  }
  StoreI_Y(YT, i, ITYPE(best));
}
