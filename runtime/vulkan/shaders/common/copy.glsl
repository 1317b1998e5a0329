// Strided copy, included by reshape.comp, squeeze.comp, expand_dims.comp, permute_dims.comp,
// transpose.comp, concat.comp (one dispatch per input), strided_slice.comp.
//
//   for each index c of `shape` (<= 4 dims, outermost first):
//     Y[dst_offset + sum_d c[d] * dst_stride[d]] = X[src_offset + sum_d c[d] * src_stride[d]]
// Source strides may be negative (slices with negative steps).
// VEC4 = 0: one element per invocation (float view of X).
// VEC4 = 1: a contiguous copy of `total` (% 4 == 0) elements with offsets % 4 == 0, one vec4 per
//           invocation (vec4 view of X).
// VEC4 = 2: general gather, shape[3] % 4 == 0 and Y contiguous in dim 3 with 4-aligned rows:
//           four fetches and one vec4 store per invocation (float view of X).
// Bindings: 0 X (texel), 1 Y (storage). Workgroup (64, 1, 1), 2-D grid folded by LinearId()
// over total (VEC4 = 0) or total / 4.
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
  uint div_m[4];  // FastDiv magic for shape[d]
  uint div_s[4];
} p;

// Source and destination element offsets of index-space element e.
void Offsets(uint e, out int src, out uint dst) {
  uint rest = e;
  src = p.src_offset;
  dst = p.dst_offset;
  [[unroll]] for (int d = 3; d >= 0; --d) {
    const uint q = FastDiv(rest, p.div_m[d], p.div_s[d]);
    const uint c = rest - q * p.shape[d];
    rest = q;
    src += int(c) * p.src_stride[d];
    dst += c * p.dst_stride[d];
  }
}

void main() {
  const uint i = LinearId();
  if (VEC4 == 1) {
    if (i * 4 < p.total) Y4[p.dst_offset / 4 + i] = texelFetch(X, p.src_offset / 4 + int(i));
    return;
  }
  int src;
  uint dst;
  if (VEC4 == 2) {
    if (i * 4 >= p.total) return;
    Offsets(i * 4, src, dst);
    const int s = p.src_stride[3];
    Y4[dst >> 2] = vec4(texelFetch(X, src).x, texelFetch(X, src + s).x, texelFetch(X, src + 2 * s).x,
                        texelFetch(X, src + 3 * s).x);
    return;
  }
  if (i >= p.total) return;
  Offsets(i, src, dst);
  Y[dst] = Fetch(X, uint(src));
}
