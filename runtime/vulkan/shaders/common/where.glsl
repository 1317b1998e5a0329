// Elementwise select with numpy broadcasting of all three operands; included by where.comp and
// masked_fill.comp (the host passes masked_fill(x, mask, value) as where(mask, value, x)).
//
//   Y[i] = Cond[c_index(i)] != 0 ? A[a_index(i)] : B[b_index(i)]    <= 6 (collapsed) dims
//
// Cond: dtype CT (bool, or any dtype: nonzero is true). A, B, Y of one dtype (AT = BT = YT):
// raw elements of ESIZE bytes; otherwise A and B are converted to YT (through float32 for a
// float YT, else ITYPE), as torch promotes a scalar of another dtype. Bindings: 0 Cond, 1 A, 2 B (View::kTexelUint), 3 Y (storage). Push: shape[6],
// c_stride[6], a_stride[6], b_stride[6], total, div_m[6], div_s (packed) = 128 bytes.
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"
#include "nd.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint CT = DT_BOOL;
layout(constant_id = 1) const uint ESIZE = 4;
layout(constant_id = 2) const uint AT = DT_F32;
layout(constant_id = 3) const uint BT = DT_F32;
layout(constant_id = 4) const uint YT = DT_F32;
layout(constant_id = 5) const uint NDIMS = 6;  // dims in use (the last NDIMS of shape)

layout(set = 0, binding = 0) uniform usamplerBuffer Cond;
layout(set = 0, binding = 1) uniform usamplerBuffer A;
layout(set = 0, binding = 2) uniform usamplerBuffer B;
OUTPUT(3, Y)

layout(push_constant) uniform Push {
  uint shape[6];
  uint c_stride[6];
  uint a_stride[6];
  uint b_stride[6];
  uint total;
  uint div_m[6];
  uint div_s;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  uint rest = i, ci = 0, ai = 0, bi = 0;
  [[unroll]] for (int d = 5; d >= 0; --d) {
    if (d >= 6 - int(NDIMS)) {  // (a break here stops the driver from unrolling)
      const uint c = NdStep(rest, p.shape[d], p.div_m[d], p.div_s, d);
      ci += c * p.c_stride[d];
      ai += c * p.a_stride[d];
      bi += c * p.b_stride[d];
    }
  }
  const bool cond = LoadB(Cond, CT, ci);
  if (AT == YT && BT == YT) {
    StoreRaw_Y(ESIZE, i, cond ? LoadRaw(A, ai) : LoadRaw(B, bi));
  } else if (IsFloatType(YT)) {
    StoreF_Y(YT, i, cond ? LoadF(A, AT, ai) : LoadF(B, BT, bi));
  } else {
    StoreI_Y(YT, i, cond ? LoadI(A, AT, ai) : LoadI(B, BT, bi));
  }
}
