// scatter_elements and scatter_nd (SCATTER_ND = 0 / 1): two dispatches of this kernel.
//   PHASE 0: Y = X (raw copy of `total` elements).
//   PHASE 1: the updates U, in order, written into Y at the places the indices I name, combined
//            by RED: 0 update (last wins), 1 add, 2 mul, 3 mean ((y + u) / 2, as TVM's
//            scatter_elements), 4 max, 5 min; in float32 for float dtypes, else ITYPE.
// Each invocation owns a disjoint set of output elements and applies its updates sequentially
// in index order, so duplicate indices give TVM's (sequential loop) result deterministically,
// without atomics:
//  * scatter_elements: one invocation per line of I along `axis` (lines = I's shape with the
//    axis dim set to 1): for k in [0, count): Y[c, axis = fix(I[c, k])] op= U[c, k].
//  * scatter_nd: one invocation per inner element e of X's trailing dims: for each index row r:
//    Y[fix(I[r, 0..M-1]), e] op= U[r, e].
// fix: negative += dim, then clamped into the dim (never writes outside Y).
// DT: dtype of X, U, Y. Bindings: 0 X, 1 I, 2 U (View::kTexelUint), 3 Y (storage, read+write).
// Push (elements): shape[6] (I's shape, axis dim 1; scatter_nd: unused), div_m[6], div_s,
// i_stride[6] (I's strides; scatter_nd: dims of the indexed dims), y_stride[6] (Y's strides;
// scatter_nd: strides of the indexed dims), total (PHASE 0: elements; PHASE 1: invocations),
// count (scatter_elements: I.shape[axis]; scatter_nd: index rows), axis (padded; scatter_nd: M),
// axis_len (scatter_elements) / inner (scatter_nd) = 120 bytes.
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"
#include "nd.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint PHASE = 0;
layout(constant_id = 1) const uint RED = 0;
layout(constant_id = 2) const uint DT = DT_F32;
layout(constant_id = 3) const uint SCATTER_ND = 0;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
layout(set = 0, binding = 1) uniform usamplerBuffer I;
layout(set = 0, binding = 2) uniform usamplerBuffer U;
OUTPUT_RW(3, Y)

layout(push_constant) uniform Push {
  uint shape[6];
  uint div_m[6];
  uint div_s;
  uint i_stride[6];
  uint y_stride[6];
  uint total;
  uint count;
  int axis;
  uint axis_len;
} p;

uint ElementSize() {
  if (DT == DT_BOOL) return 1u;
  if (DT == DT_F16) return 2u;
  if (DT == DT_I64) return 8u;
  return 4u;
}

int Fix(int idx, int n) { return clamp(idx < 0 ? idx + n : idx, 0, n - 1); }

void Apply(uint yi, uint ui) {
  if (RED == 0u) {
    StoreRaw_Y(ElementSize(), yi, LoadRaw(U, ui));
  } else if (IsFloatType(DT)) {
    const float y = LoadF_Y(DT, yi), u = LoadF(U, DT, ui);
    float r = RED == 1u ? y + u : (RED == 2u ? y * u : (RED == 3u ? (y + u) * 0.5 : (RED == 4u ? max(y, u) : min(y, u))));
    StoreF_Y(DT, yi, r);
  } else {
    const ITYPE y = LoadI_Y(DT, yi), u = LoadI(U, DT, ui);
    ITYPE r = RED == 1u ? y + u : (RED == 2u ? y * u : (RED == 3u ? (y + u) / ITYPE(2) : (RED == 4u ? max(y, u) : min(y, u))));
    StoreI_Y(DT, yi, r);
  }
}

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  if (PHASE == 0u) {
    StoreRaw_Y(ElementSize(), i, LoadRaw(X, i));
    return;
  }
  if (SCATTER_ND != 0u) {
    const uint M = uint(p.axis), inner = p.axis_len;
    for (uint r = 0; r < p.count; ++r) {
      uint yi = i;
      for (uint m = 0; m < M; ++m)
        yi += uint(Fix(LoadIndex(I, r * M + m), int(p.i_stride[m]))) * p.y_stride[m];
      Apply(yi, r * inner + i);
    }
    return;
  }
  uint rest = i, ibase = 0, ybase = 0;
  [[unroll]] for (int d = 5; d >= 0; --d) {
    const uint c = NdStep(rest, p.shape[d], p.div_m[d], p.div_s, d);
    ibase += c * p.i_stride[d];
    ybase += c * p.y_stride[d];
  }
  const uint istep = p.i_stride[p.axis], ystep = p.y_stride[p.axis];
  for (uint k = 0; k < p.count; ++k) {
    const uint ii = ibase + k * istep;
    Apply(ybase + uint(Fix(LoadIndex(I, ii), int(p.axis_len))) * ystep, ii);
  }
}
