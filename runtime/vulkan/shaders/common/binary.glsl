// Elementwise binary ops with numpy broadcasting; included by binary.comp (every op of
// common/binary_ops.glsl's table) and nn/bias_add.comp. The op is the specialization constant
// OP (the table's B_* code, which the host passes).
//
//   C[i] = Op(A[a_index(i)], B[b_index(i)])     dtypes AT, BT, CT; <= 6 (collapsed) dims
//
// Domain: float32 when FDOM = 1, else ITYPE (bool as 0/1; common/dtype.glsl); the host picks it
// from the promoted dtype (arithmetic: C's; comparisons: float if A or B is), so mixed input
// dtypes (int32 + float32, int32 + int64) compute as torch promotes. Both inputs are converted
// to the domain; arithmetic ops store the domain value converted to CT, comparisons and
// logical ops store bool.
// Float semantics (common/binary_ops.glsl, shared with the fused chains of ew_chain.comp) follow
// torch: maximum/minimum propagate NaN; floor_divide and floor_mod use fmod with a sign fix-up
// (aten div_floor_floating / remainder); power handles negative bases with integer exponents,
// 0^0 = 1 and 0^negative = inf. Integer divide truncates toward zero
// (TVM truncdiv), floor_divide/floor_mod round toward -inf; division by zero gives an undefined
// value (never a fault).
//
// MODE 0: general: i is decomposed over shape[6] (outermost first, padded with 1s) and each
//         input has its own element strides (0 on broadcast dims); one element per invocation,
//         uint texel views (View::kTexelUint).
// MODE 1..4 (AT = BT = CT = float32, float-valued op, host-chosen):
// MODE 1: same shape, total % 4 == 0: one uvec4 texel of A and B per invocation.
// MODE 2: B is one element: uvec4 view of A, uint view of B.
// MODE 3: A is one element: uint view of A, uvec4 view of B.
// MODE 4: general, shape[5] % 4 == 0: four consecutive outputs per invocation (one uvec4 store);
//         uvec4 views; an input with innermost stride 1 is one texel fetch, else a broadcast
//         element.
// Bindings: 0 A (texel), 1 B (texel), 2 C (storage). Push: shape[6], a_stride[6], b_stride[6],
// total, div_m[6], div_s (5-bit shifts packed, common/nd.glsl) = 108 bytes. Workgroup (64, 1, 1),
// 2-D grid folded by LinearId() over total (MODE 0) or total / 4 invocations.
#include "dtype.glsl"
#include "util.glsl"
#include "nd.glsl"
#include "binary_ops.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint AT = DT_F32;
layout(constant_id = 3) const uint BT = DT_F32;
layout(constant_id = 4) const uint CT = DT_F32;
layout(constant_id = 5) const uint FDOM = 1;
layout(constant_id = 6) const uint NDIMS = 6;  // dims in use (the last NDIMS of shape)

layout(set = 0, binding = 0) uniform usamplerBuffer A;
layout(set = 0, binding = 1) uniform usamplerBuffer B;
OUTPUT(2, C)

layout(push_constant) uniform Push {
  uint shape[6];     // output dims, outermost first
  uint a_stride[6];  // element strides of A per output dim (0: broadcast)
  uint b_stride[6];
  uint total;        // output elements
  uint div_m[6];     // FastDiv magic for shape[d]
  uint div_s;        // packed shifts
} p;

bool IsCompare() { return OP >= B_EQUAL && OP <= B_LESS_EQUAL; }
bool IsLogical() { return OP >= B_LOGICAL_AND && OP <= B_LOGICAL_XOR; }

float OpF(float a, float b) { return BinaryF(OP, a, b); }

// GLSL leaves % with negative operands undefined: remainders are computed as a - q * b with the
// truncating quotient q = a / b (OpSDiv).
ITYPE FloorDivI(ITYPE a, ITYPE b) {
  if (b == ITYPE(0)) return ITYPE(0);
  const ITYPE q = a / b, r = a - q * b;
  return (r != ITYPE(0) && ((r < ITYPE(0)) != (b < ITYPE(0)))) ? q - ITYPE(1) : q;
}

ITYPE PowI(ITYPE a, ITYPE b) {
  if (b < ITYPE(0)) return a == ITYPE(1) ? ITYPE(1) : (a == ITYPE(-1) ? ((b & ITYPE(1)) != ITYPE(0) ? ITYPE(-1) : ITYPE(1)) : ITYPE(0));
  ITYPE r = ITYPE(1), base = a;
  for (ITYPE e = b; e > ITYPE(0); e >>= 1) {
    if ((e & ITYPE(1)) != ITYPE(0)) r *= base;
    base *= base;
  }
  return r;
}

ITYPE OpI(ITYPE a, ITYPE b) {
  switch (OP) {
    case B_ADD: return a + b;
    case B_SUBTRACT: return a - b;
    case B_MULTIPLY: return a * b;
    case B_DIVIDE: return b == ITYPE(0) ? ITYPE(0) : a / b;  // truncation (TVM truncdiv)
    case B_POWER: return PowI(a, b);
    case B_MAXIMUM: return max(a, b);
    case B_MINIMUM: return min(a, b);
    case B_FLOOR_DIVIDE: return FloorDivI(a, b);
    case B_FLOOR_MOD: return b == ITYPE(0) ? ITYPE(0) : a - FloorDivI(a, b) * b;
    case B_BITWISE_AND: return a & b;
    case B_BITWISE_OR: return a | b;
    case B_BITWISE_XOR: return a ^ b;
    default: return a;
  }
}

bool CompareF(float a, float b) {
  switch (OP) {
    case B_EQUAL: return a == b;
    case B_NOT_EQUAL: return !(a == b);
    case B_GREATER: return a > b;
    case B_GREATER_EQUAL: return a >= b;
    case B_LESS: return a < b;
    default: return a <= b;
  }
}

bool CompareI(ITYPE a, ITYPE b) {
  switch (OP) {
    case B_EQUAL: return a == b;
    case B_NOT_EQUAL: return a != b;
    case B_GREATER: return a > b;
    case B_GREATER_EQUAL: return a >= b;
    case B_LESS: return a < b;
    default: return a <= b;
  }
}

bool Logical(bool a, bool b) {
  if (OP == B_LOGICAL_AND) return a && b;
  if (OP == B_LOGICAL_OR) return a || b;
  return a != b;
}

void Element(uint ai, uint bi, uint ci) {
  if (IsLogical()) {
    StoreB_C(CT, ci, Logical(LoadB(A, AT, ai), LoadB(B, BT, bi)));
  } else if (FDOM != 0) {
    const float a = LoadF(A, AT, ai), b = LoadF(B, BT, bi);
    if (IsCompare()) StoreB_C(CT, ci, CompareF(a, b)); else StoreF_C(CT, ci, OpF(a, b));
  } else {
    const ITYPE a = LoadI(A, AT, ai), b = LoadI(B, BT, bi);
    if (IsCompare()) StoreB_C(CT, ci, CompareI(a, b)); else StoreI_C(CT, ci, OpI(a, b));
  }
}

// Element offsets of output element e in A and B.
void Offsets(uint e, out uint ai, out uint bi) {
  uint rest = e;
  ai = 0;
  bi = 0;
  [[unroll]] for (int d = 5; d >= 0; --d) {
    if (d >= 6 - int(NDIMS)) {  // (a break here stops the driver from unrolling)
      const uint c = NdStep(rest, p.shape[d], p.div_m[d], p.div_s, d);
      ai += c * p.a_stride[d];
      bi += c * p.b_stride[d];
    }
  }
}

float Fetch1(usamplerBuffer t, uint i) { return uintBitsToFloat(texelFetch(t, int(i)).x); }

// Four consecutive elements along the innermost dim starting at element offset o (uvec4 view).
vec4 Fetch4(usamplerBuffer t, uint o, uint inner_stride) {
  const vec4 v = uintBitsToFloat(texelFetch(t, int(o >> 2)));
  return inner_stride == 1 ? v : vec4(v[o & 3u]);
}

vec4 OpF4(vec4 a, vec4 b) {
  vec4 r;
  for (int k = 0; k < 4; ++k) r[k] = OpF(a[k], b[k]);
  return r;
}

void main() {
  const uint i = LinearId();
  if (MODE == 4) {
    if (i * 4 >= p.total) return;
    uint ai, bi;
    Offsets(i * 4, ai, bi);
    C4[i] = floatBitsToUint(OpF4(Fetch4(A, ai, p.a_stride[5]), Fetch4(B, bi, p.b_stride[5])));
    return;
  }
  if (MODE == 0) {
    if (i >= p.total) return;
    uint ai, bi;
    Offsets(i, ai, bi);
    Element(ai, bi, i);
    return;
  }
  if (i * 4 >= p.total) return;
  const vec4 a = MODE == 3 ? vec4(Fetch1(A, 0u)) : uintBitsToFloat(texelFetch(A, int(i)));
  const vec4 b = MODE == 2 ? vec4(Fetch1(B, 0u)) : uintBitsToFloat(texelFetch(B, int(i)));
  C4[i] = floatBitsToUint(OpF4(a, b));
}
