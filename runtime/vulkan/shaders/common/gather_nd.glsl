// gather_nd (ONNX GatherND, relax.op.gather_nd): X [b_0..b_{B-1}, d_0..d_{M-1}, rest...],
// indices I [b_0..b_{B-1}, y..., M] (int32/int64) -> Y [b..., y..., rest...]:
//
//   Y[row, r] = X[batch(row), fix(I[row, 0]), ..., fix(I[row, M-1]), r]
// with row over I's leading dims (rows_per_batch rows per batch entry), r over `inner` =
// prod(rest). fix: negative += dim, then clamped into the dim. Raw elements of ESIZE bytes.
// Bindings: 0 X, 1 I (View::kTexelUint), 2 Y (storage). Push: total, inner, M, rows_per_batch,
// batch_stride (elements of X per batch entry), div_m[2], div_s[2] (inner, rows_per_batch),
// dims[6], strides[6] (size and element stride of X's indexed dims d_0..d_{M-1}).
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint ESIZE = 4;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
layout(set = 0, binding = 1) uniform usamplerBuffer I;
OUTPUT(2, Y)

layout(push_constant) uniform Push {
  uint total, inner, M, rows_per_batch, batch_stride;
  uint div_m[2], div_s[2];
  int dims[6];
  uint strides[6];
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  const uint row = FastDiv(i, p.div_m[0], p.div_s[0]);
  const uint r = i - row * p.inner;
  uint src = FastDiv(row, p.div_m[1], p.div_s[1]) * p.batch_stride + r;
  for (uint m = 0; m < p.M; ++m) {
    int idx = LoadIndex(I, row * p.M + m);
    if (idx < 0) idx += p.dims[m];
    src += uint(clamp(idx, 0, p.dims[m] - 1)) * p.strides[m];
  }
  StoreRaw_Y(ESIZE, i, LoadRaw(X, src));
}
