// Strided copy of raw elements (any dtype), included by reshape, squeeze, expand_dims,
// permute_dims, transpose, concat/concatenate/stack/split (one dispatch per piece; split: one for
// all when its outputs are equal and evenly spaced in one buffer), strided_slice, broadcast_to
// (stride 0), flip (negative stride), tile, repeat.
//
//   for each index c of `shape` (<= 6 dims, outermost first):
//     Y[dst_offset + sum_d c[d] * dst_stride[d]] = X[src_offset + sum_d c[d] * src_stride[d]]
// Source strides may be negative (negative steps, flip) or 0 (broadcast).
// ESIZE: element size in bytes (1, 2, 4, 8; 1 and 2 need the +ext variant). NDIMS: dims in use.
// VEC4 = 0: one element per invocation (View::kTexelUint of X).
// VEC4 = 1: ESIZE 4, a contiguous copy of `total` (% 4 == 0) elements with offsets % 4 == 0,
//           one uvec4 per invocation (View::kTexelUvec4 of X).
// VEC4 = 2: ESIZE 4, general gather, shape[5] % 4 == 0 and Y contiguous in dim 5 with 4-aligned
//           rows: four fetches and one uvec4 store per invocation (View::kTexelUint of X).
// Bindings: 0 X (texel), 1 Y (storage). Push: shape[6], src_stride[6], dst_stride[6],
// src_offset, dst_offset, total, div_m[6], div_s (packed, common/nd.glsl) = 112 bytes.
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total (VEC4 = 0) or total / 4.
#include "dtype.glsl"
#include "util.glsl"
#include "nd.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint VEC4 = 0;
layout(constant_id = 1) const uint ESIZE = 4;
layout(constant_id = 2) const uint NDIMS = 6;  // dims in use (the last NDIMS of shape)

layout(set = 0, binding = 0) uniform usamplerBuffer X;
OUTPUT(1, Y)

layout(push_constant) uniform Push {
  uint shape[6];
  int src_stride[6];
  uint dst_stride[6];
  int src_offset;
  uint dst_offset;
  uint total;     // product of shape
  uint div_m[6];  // FastDiv magic for shape[d]
  uint div_s;     // packed shifts
} p;

// Source and destination element offsets of index-space element e.
void Offsets(uint e, out int src, out uint dst) {
  uint rest = e;
  src = p.src_offset;
  dst = p.dst_offset;
  [[unroll]] for (int d = 5; d >= 0; --d) {
    if (d >= 6 - int(NDIMS)) {  // (a break here stops the driver from unrolling)
      const uint c = NdStep(rest, p.shape[d], p.div_m[d], p.div_s, d);
      src += int(c) * p.src_stride[d];
      dst += c * p.dst_stride[d];
    }
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
    const int s = p.src_stride[5];
    Y4[dst >> 2] = uvec4(texelFetch(X, src).x, texelFetch(X, src + s).x,
                         texelFetch(X, src + 2 * s).x, texelFetch(X, src + 3 * s).x);
    return;
  }
  if (i >= p.total) return;
  Offsets(i, src, dst);
  StoreRaw_Y(ESIZE, dst, LoadRaw(X, uint(src)));
}
