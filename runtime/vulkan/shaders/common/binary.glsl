// Elementwise binary op with numpy broadcasting; included by add.comp, subtract.comp,
// multiply.comp, divide.comp, which define `vec4 Op(vec4 a, vec4 b)` after the include.
//
//   C[i] = Op(A[a_index(i)], B[b_index(i)])        float32, C contiguous, <= 4 (collapsed) dims
//
// MODE 0: general: i is decomposed over shape[4] (outermost first, padded with 1s) and each
//         input has its own element strides (0 on broadcast dims); one element per invocation,
//         float texel views.
// MODE 1: same shape, total % 4 == 0: one vec4 per invocation, vec4 texel views of A and B.
// MODE 2: B is one element: vec4 view of A, float view of B.
// MODE 3: A is one element: float view of A, vec4 view of B.
// MODE 4: general, shape[3] % 4 == 0: four consecutive outputs per invocation (one vec4 store);
//         vec4 views; an input with innermost stride 1 is one vec4 fetch, else a broadcast float.
// Bindings: 0 A (texel), 1 B (texel), 2 C (storage). Workgroup (64, 1, 1), 2-D grid folded by
// LinearId() over total (MODE 0) or total / 4 invocations.
#include "util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint MODE = 0;

layout(set = 0, binding = 0) uniform samplerBuffer A;
layout(set = 0, binding = 1) uniform samplerBuffer B;
layout(std430, set = 0, binding = 2) writeonly buffer BufC { float C[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC4 { vec4 C4[]; };

layout(push_constant) uniform Push {
  uint shape[4];     // output dims, outermost first
  uint a_stride[4];  // element strides of A per output dim (0: broadcast)
  uint b_stride[4];
  uint total;        // output elements
  uint div_m[4];     // FastDiv magic for shape[d]
  uint div_s[4];
} p;

vec4 Op(vec4 a, vec4 b);

// Element offsets of output element e in A and B.
void Offsets(uint e, out uint ai, out uint bi) {
  uint rest = e;
  ai = 0;
  bi = 0;
  [[unroll]] for (int d = 3; d >= 0; --d) {
    const uint q = FastDiv(rest, p.div_m[d], p.div_s[d]);
    const uint c = rest - q * p.shape[d];
    rest = q;
    ai += c * p.a_stride[d];
    bi += c * p.b_stride[d];
  }
}

// Four consecutive elements along the innermost dim starting at element offset o (vec4 view).
vec4 Fetch4(samplerBuffer t, uint o, uint inner_stride) {
  const vec4 v = texelFetch(t, int(o >> 2));
  return inner_stride == 1 ? v : vec4(v[o & 3u]);
}

void main() {
  const uint i = LinearId();
  if (MODE == 4) {
    if (i * 4 >= p.total) return;
    uint ai, bi;
    Offsets(i * 4, ai, bi);
    C4[i] = Op(Fetch4(A, ai, p.a_stride[3]), Fetch4(B, bi, p.b_stride[3]));
    return;
  }
  if (MODE == 0) {
    if (i >= p.total) return;
    uint ai, bi;
    Offsets(i, ai, bi);
    C[i] = Op(vec4(Fetch(A, ai)), vec4(Fetch(B, bi))).x;
    return;
  }
  if (i * 4 >= p.total) return;
  const vec4 a = MODE == 3 ? vec4(Fetch(A, 0u)) : texelFetch(A, int(i));
  const vec4 b = MODE == 2 ? vec4(Fetch(B, 0u)) : texelFetch(B, int(i));
  C4[i] = Op(a, b);
}
