// Creation ops: ones, zeros, ones_like, zeros_like (STEP 0), arange.
//
//   Y[i] = start + i * step      in Y's dtype YT
// float dtypes compute in float32 from (f_start, f_step); integer and bool dtypes in ITYPE from
// the int64 words (i_start, i_step) (bool: value != 0). Bindings: 0 Y (storage). Push: total,
// f_start, f_step, i_start[2], i_step[2] (int64 as low, high words). Workgroup (64, 1, 1), 2-D
// grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint YT = DT_F32;

OUTPUT(0, Y)

layout(push_constant) uniform Push {
  uint total;
  float f_start, f_step;
  uint i_start[2], i_step[2];
} p;

ITYPE Word64(uint lo, uint hi) {
#ifdef MSC_VK_EXT
  return int64_t(packUint2x32(uvec2(lo, hi)));
#else
  return int(lo);
#endif
}

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  if (IsFloatType(YT)) {
    StoreF_Y(YT, i, p.f_start + float(i) * p.f_step);
  } else {
    StoreI_Y(YT, i, Word64(p.i_start[0], p.i_start[1]) +
                        ITYPE(i) * Word64(p.i_step[0], p.i_step[1]));
  }
}
