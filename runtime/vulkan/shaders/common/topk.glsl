// topk: X viewed as [outer, L, inner] along `axis`; the K best elements of each (o, r) line in
// order: Values [outer, K, inner] (X's dtype), Indices [outer, K, inner] (int32/int64).
// Order (LARGEST): value descending, NaN above everything, ties by ascending index (a stable
// sort, as torch.topk's sorted output on CPU); !LARGEST: value ascending, NaN last, ties by
// ascending index. One invocation per input element: its rank = the number of elements of its
// line ordered before it (O(L) per element); rank < K writes output position `rank`.
// Bindings: 0 X (View::kTexelUint), 1 Values, 2 Indices (storage; when an output is not
// wanted, WRITE_V / WRITE_I = 0 and the host binds the other tensor twice). Push: total
// (outer * L * inner), L, inner, K, div_m[2], div_s[2] (inner, L). Workgroup (64, 1, 1), 2-D
// grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint LARGEST = 1;
layout(constant_id = 1) const uint XT = DT_F32;
layout(constant_id = 2) const uint IT = DT_I64;
layout(constant_id = 3) const uint WRITE_V = 1;
layout(constant_id = 4) const uint WRITE_I = 1;
layout(constant_id = 5) const uint ESIZE = 4;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
OUTPUT(1, V)
OUTPUT(2, IX)

layout(push_constant) uniform Push {
  uint total, L, inner, K;
  uint div_m[2], div_s[2];  // [0]: inner, [1]: L
} p;

// a strictly before b in the sort order (a at index la, b at lb)
bool BeforeF(float a, uint la, float b, uint lb) {
  const bool an = isnan(a), bn = isnan(b);
  if (an || bn) return an && bn ? la < lb : (LARGEST != 0 ? an : bn);
  if (a == b) return la < lb;
  return LARGEST != 0 ? a > b : a < b;
}

bool BeforeI(ITYPE a, uint la, ITYPE b, uint lb) {
  if (a == b) return la < lb;
  return LARGEST != 0 ? a > b : a < b;
}

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  const uint q = FastDiv(i, p.div_m[0], p.div_s[0]);  // o * L + l
  const uint r = i - q * p.inner;
  const uint o = FastDiv(q, p.div_m[1], p.div_s[1]);
  const uint l = q - o * p.L;
  const uint base = o * p.L * p.inner + r;
  uint rank = 0;
  if (IsFloatType(XT)) {
    const float v = LoadF(X, XT, i);
    for (uint m = 0, e = base; m < p.L && rank < p.K; ++m, e += p.inner)
      rank += BeforeF(LoadF(X, XT, e), m, v, l) ? 1u : 0u;
  } else {
    const ITYPE v = LoadI(X, XT, i);
    for (uint m = 0, e = base; m < p.L && rank < p.K; ++m, e += p.inner)
      rank += BeforeI(LoadI(X, XT, e), m, v, l) ? 1u : 0u;
  }
  if (rank >= p.K) return;
  const uint out_i = (o * p.K + rank) * p.inner + r;
  if (WRITE_V != 0) StoreRaw_V(ESIZE, out_i, LoadRaw(X, i));
  if (WRITE_I != 0) StoreI_IX(IT, out_i, ITYPE(l));
}
