// gather_elements (torch.gather, ONNX GatherElements): Y and the indices I have the same shape
// (<= 6 dims, padded with leading 1s); for each output coordinate c:
//
//   Y[c] = X[c with c[axis] replaced by fix(I[c])]
// fix: negative += axis_len, then clamped to [0, axis_len - 1] (a bad index never reads outside
// X). Raw elements of ESIZE bytes (any dtype); I int32 or int64.
// Bindings: 0 X, 1 I (View::kTexelUint), 2 Y (storage). Push: shape[6] (of Y), div_m[6],
// div_s (packed), x_stride[6] (element strides of X), total, axis, axis_len.
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total.
#include "dtype.glsl"
#include "util.glsl"
#include "nd.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint ESIZE = 4;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
layout(set = 0, binding = 1) uniform usamplerBuffer I;
OUTPUT(2, Y)

layout(push_constant) uniform Push {
  uint shape[6];
  uint div_m[6];
  uint div_s;
  uint x_stride[6];
  uint total;
  int axis;
  int axis_len;
} p;

void main() {
  const uint i = LinearId();
  if (i >= p.total) return;
  int idx = LoadIndex(I, i);
  if (idx < 0) idx += p.axis_len;
  idx = clamp(idx, 0, p.axis_len - 1);
  uint rest = i, src = 0;
  [[unroll]] for (int d = 5; d >= 0; --d) {
    const uint c = NdStep(rest, p.shape[d], p.div_m[d], p.div_s, d);
    src += (d == p.axis ? uint(idx) : c) * p.x_stride[d];
  }
  StoreRaw_Y(ESIZE, i, LoadRaw(X, src));
}
