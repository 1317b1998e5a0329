// einsum (numpy.einsum semantics; the host in ops_einsum.cc parses the subscripts): up to 8
// labels; labels 0 .. NOUT-1 are the output dims (row-major), labels NOUT .. NIDX-1 are summed.
//   Y[o] = sum over the summed labels r of  A[offA] * B[offB] * C[offC]     (NOPS operands)
//   offX = sum over labels of coord * STRIDE_X(label)
// A label's stride in an operand is the sum of the strides of its occurrences (repeated labels
// walk a diagonal), 0 when the operand lacks it or broadcasts it (extent 1).
// Everything about the equation is a specialization constant (one pipeline per distinct
// einsum), so the compiler folds the index arithmetic:
//   0 NOPS (1..3), 1 NOUT, 2 NIDX, then per label i < 8: 3+4i SIZE, 4+4i SA, 5+4i SB, 6+4i SC.
// One output element per invocation; the summed labels advance as an odometer.
// Bindings: 0 A, 1 B, 2 C (texel float; A again for absent operands), 3 Y (storage).
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over the output elements.
#version 450
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint NOPS = 1;
layout(constant_id = 1) const uint NOUT = 0;
layout(constant_id = 2) const uint NIDX = 0;
#define LABEL(i, a, b, c, d)                       \
  layout(constant_id = a) const uint SIZE##i = 1;  \
  layout(constant_id = b) const uint SA##i = 0;    \
  layout(constant_id = c) const uint SB##i = 0;    \
  layout(constant_id = d) const uint SC##i = 0;
LABEL(0, 3, 4, 5, 6)
LABEL(1, 7, 8, 9, 10)
LABEL(2, 11, 12, 13, 14)
LABEL(3, 15, 16, 17, 18)
LABEL(4, 19, 20, 21, 22)
LABEL(5, 23, 24, 25, 26)
LABEL(6, 27, 28, 29, 30)
LABEL(7, 31, 32, 33, 34)

layout(set = 0, binding = 0) uniform samplerBuffer A;
layout(set = 0, binding = 1) uniform samplerBuffer B;
layout(set = 0, binding = 2) uniform samplerBuffer C;
layout(std430, set = 0, binding = 3) writeonly buffer BufY { float Y[]; };

layout(push_constant) uniform Push {
  uint total;   // output elements
  uint rcount;  // product of the summed labels' extents
} p;

void main() {
  const uint id = LinearId();
  if (id >= p.total) return;
  uint oa = 0, ob = 0, oc = 0, rest = id;
  // Output coordinates, innermost (highest output label) first.
#define DECOMPOSE(i)                       \
  if (i < NOUT) {                          \
    const uint c = rest % SIZE##i;         \
    rest /= SIZE##i;                       \
    oa += c * SA##i;                       \
    ob += c * SB##i;                       \
    oc += c * SC##i;                       \
  }
  DECOMPOSE(7) DECOMPOSE(6) DECOMPOSE(5) DECOMPOSE(4)
  DECOMPOSE(3) DECOMPOSE(2) DECOMPOSE(1) DECOMPOSE(0)

  uint r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0, r7 = 0;
  float acc = 0.0;
  for (uint it = 0; it < p.rcount; ++it) {
    float v = Fetch(A, oa);
    if (NOPS > 1) v *= Fetch(B, ob);
    if (NOPS > 2) v *= Fetch(C, oc);
    acc += v;
    // Advance the summed labels (innermost = NIDX - 1) with carries.
    bool carry = true;
#define ADVANCE(i)                                                        \
    if (carry && i >= NOUT && i < NIDX) {                                 \
      ++r##i;                                                             \
      oa += SA##i;                                                        \
      ob += SB##i;                                                        \
      oc += SC##i;                                                        \
      if (r##i == SIZE##i) {                                              \
        r##i = 0;                                                         \
        oa -= SA##i * SIZE##i;                                            \
        ob -= SB##i * SIZE##i;                                            \
        oc -= SC##i * SIZE##i;                                            \
      } else {                                                            \
        carry = false;                                                    \
      }                                                                   \
    }
    ADVANCE(7) ADVANCE(6) ADVANCE(5) ADVANCE(4)
    ADVANCE(3) ADVANCE(2) ADVANCE(1) ADVANCE(0)
  }
  Y[id] = acc;
}
