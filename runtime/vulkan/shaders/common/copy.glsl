// Strided copy, included by reshape.comp, squeeze.comp, expand_dims.comp, permute_dims.comp,
// transpose.comp, concat.comp (one dispatch per input), strided_slice.comp.
//
//   for each index c of `shape` (<= 4 dims, outermost first):
//     Y[dst_offset + sum_d c[d] * dst_stride[d]] = X[src_offset + sum_d c[d] * src_stride[d]]
// Source strides may be negative (slices with negative steps). VEC4 = 1: a contiguous copy of
// `total` (% 4 == 0) elements with offsets % 4 == 0, one vec4 per invocation (vec4 view of X).
// Bindings: 0 X (texel), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by LinearId()
// over total (or total / 4).
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint VEC4 = 0;

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(std430, set = 0, binding = 1) writeonly buffer BufY { float Y[]; };
layout(std430, set = 0, binding = 1) writeonly buffer BufY4 { vec4 Y4[]; };

layout(push_constant) uniform Push {
  uint shape[4];
  int src_stride[4];
  uint dst_stride[4];
  int src_offset;
  uint dst_offset;
  uint total;  // product of shape
} p;

void main() {
  const uint i = LinearId();
  if (VEC4 != 0) {
    if (i * 4 < p.total) Y4[p.dst_offset / 4 + i] = texelFetch(X, p.src_offset / 4 + int(i));
    return;
  }
  if (i >= p.total) return;
  uint rest = i, dst = p.dst_offset;
  int src = p.src_offset;
  [[unroll]] for (int d = 3; d >= 0; --d) {
    const uint c = rest % p.shape[d];
    rest /= p.shape[d];
    src += int(c) * p.src_stride[d];
    dst += c * p.dst_stride[d];
  }
  Y[dst] = Fetch(X, uint(src));
}
