// take / msc.embedding: X viewed as [outer, axis_len, inner] (axis = null: [1, numel, 1]),
// indices I of any shape and n_idx elements, dtype IT (int32/int64; msc.embedding also takes
// float ids, truncated toward zero as its pattern's astype(int32)):
//
//   Y[o, j, r] = X[o, fix(I[j]), r]        (Y viewed as [outer, n_idx, inner])
// fix by MODE: 0 "fast" (negative += axis_len, like torch), 1 "clip" (clamp to [0, len-1],
// TVM), 2 "wrap" (python modulo). Out-of-range indices are clamped after that, so a bad index
// never reads outside X. Raw elements of ESIZE bytes (any dtype).
// Bindings: 0 X, 1 I (View::kTexelUint), 2 Y (storage). Push: total, inner, n_idx, axis_len,
// div_m[2], div_s[2] (FastDiv magic for inner, n_idx). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint ESIZE = 4;
layout(constant_id = 2) const uint IT = DT_I32;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
layout(set = 0, binding = 1) uniform usamplerBuffer I;
OUTPUT(2, Y)

layout(push_constant) uniform Push {
  uint total, inner, n_idx, axis_len;
  uint div_m[2], div_s[2];  // [0]: inner, [1]: n_idx
} p;

int FixIndex(int idx, int n) {
  if (MODE == 2) {
    idx = idx - (idx / n) * n;  // truncating remainder, then shift into [0, n)
    if (idx < 0) idx += n;
  } else if (MODE == 0 && idx < 0) {
    idx += n;
  }
  return clamp(idx, 0, n - 1);
}

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  const uint q = FastDiv(i, p.div_m[0], p.div_s[0]);
  const uint r = i - q * p.inner;
  const uint o = FastDiv(q, p.div_m[1], p.div_s[1]);
  const uint j = q - o * p.n_idx;
  const uint idx = uint(FixIndex(int(LoadI(I, IT, j)), int(p.axis_len)));
  StoreRaw_Y(ESIZE, i, LoadRaw(X, (o * p.axis_len + idx) * p.inner + r));
}
