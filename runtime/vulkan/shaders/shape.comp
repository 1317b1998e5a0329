// shape (MSC's ShapeExpr node): Y[i] = values[i], a 1-D int64 (or int32) tensor of n <= 12
// dims known at build time. Y dtype YT (common/dtype.glsl codes).
// Bindings: 0 Y (storage). Push: n, values[12][2] (int64 as low, high words).
// Workgroup (64, 1, 1), one dispatch of one workgroup.
// msc_vk:variants ext
#version 450
#include "common/dtype.glsl"
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint YT = DT_I64;

OUTPUT(0, Y)

layout(push_constant) uniform Push {
  uint n;
  uint values[24];
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.n) return;
  if (YT == DT_I64) {
    Y64[i] = uvec2(p.values[2 * i], p.values[2 * i + 1]);  // raw words: no 64-bit arithmetic
  } else {
    StoreI_Y(YT, i, ITYPE(int(p.values[2 * i])));
  }
}
