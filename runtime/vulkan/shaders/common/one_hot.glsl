// one_hot: indices I (int32/int64, any shape) -> Y with a new dim of size `depth` at `axis`,
// viewed as [outer, depth, inner]:
//
//   Y[o, k, r] = I[o * inner + r] == k ? on_value : off_value       (in Y's dtype YT)
// A negative or too-large index matches no k (all off_value), as TVM's one_hot.
// Bindings: 0 I (View::kTexelUint), 1 Y (storage). Push: total, depth, inner, f_on, f_off,
// i_on[2], i_off[2] (int64 words), div_m[2], div_s[2] (FastDiv magic for inner, depth).
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint YT = DT_F32;

layout(set = 0, binding = 0) uniform usamplerBuffer I;
OUTPUT(1, Y)

layout(push_constant) uniform Push {
  uint total, depth, inner;
  float f_on, f_off;
  uint i_on[2], i_off[2];
  uint div_m[2], div_s[2];
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  const uint q = FastDiv(i, p.div_m[0], p.div_s[0]);  // o * depth + k
  const uint r = i - q * p.inner;
  const uint o = FastDiv(q, p.div_m[1], p.div_s[1]);
  const uint k = q - o * p.depth;
  const bool on = LoadIndex(I, o * p.inner + r) == int(k);
  if (IsFloatType(YT)) {
    StoreF_Y(YT, i, on ? p.f_on : p.f_off);
  } else {
#ifdef MSC_VK_EXT
    StoreI_Y(YT, i, on ? int64_t(packUint2x32(uvec2(p.i_on[0], p.i_on[1])))
                       : int64_t(packUint2x32(uvec2(p.i_off[0], p.i_off[1]))));
#else
    StoreI_Y(YT, i, on ? int(p.i_on[0]) : int(p.i_off[0]));
#endif
  }
}
