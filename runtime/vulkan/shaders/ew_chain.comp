// ew_chain: a fused elementwise chain (issue 9; ops::ElementwiseChain in ops_elementwise.cc): up
// to 8 steps over up to 4 inputs, evaluated per output element in registers, one dispatch.
//
//   R[k] = X_k broadcast to Y's shape (numpy) at element i        k < 4 (the inputs)
//   R[4 + s] = step s (unary op of R[A], binary op of R[A], R[B], or R[A] != 0 ? R[B] : R[C])
//   Y[i] = R[4 + NSTEPS - 1]
//
// The program is in specialization constants, so the driver compiles one straight-line kernel
// per distinct chain (the op switches of common/unary_ops.glsl / binary_ops.glsl fold, the
// register array becomes SSA values). The op semantics are those functions, shared with
// unary.glsl / binary.glsl: a chain computes what the unfused ops compute, in float32, without
// storing the intermediates (the driver may contract a * b + c into an fma, as it may inside one
// op: differences of ~1 ulp).
//
// Inputs: float32 or float16 (widened exactly), and of any dtype when used only as a where
// condition (int32, int64, bool: read as their truth value with LoadB of common/dtype.glsl, nonzero
// and NaN are true; the plain build suffices, texel views need no device feature).
// Y: float32, or float16 in the "+f16" variant (MSC_VK_F16: 16-bit storage; the chain computes in
// float32 and rounds once on store; generate --precision fp16). Per input k (specialization constants):
//   IN_KIND: 0 Y's element count (same layout: element i), 1 one element (element 0), 2 / 4
//            broadcast with innermost stride 1 / 0 (element offset from the output coordinates
//            and the stride slot IN_SLOT), 3 no input (unused slot: reads nothing)
//   IN_DT:   dtype code (common/dtype.glsl)
// MODE 0: one element per invocation; every input through a uint texel view (View::kTexelUint).
// MODE 1: four consecutive outputs per invocation (one uvec4 store; the host picks it when the
//         innermost collapsed dim is a multiple of 4): float32 inputs of kind 0 and 2 through a
//         uvec4 view (one texel: their four elements are consecutive and 16-byte aligned), the
//         others through a uint view (kind 1 and 4: one element for all four; other dtypes of
//         kind 0 / 2: four element loads).
// Push (128 bytes, words): w[0] total, w[1] div_s (FastDiv shifts, common/nd.glsl), w[2 + d]
// shape, w[8 + d] FastDiv magic of the collapsed index space padded to 6 dims (d = 0..5,
// outermost first, common/nd.glsl), w[14 + 6j + d] the element strides of broadcast slot j < 3.
// (Offsets read them at constant indices, as binary.glsl: with the indices computed from NDIMS
// instead, lavapipe ran the broadcast kernels at half speed.)
// Bindings: 0..3 X0..X3 (texel; unused slots repeat input 0), 4 Y (storage).
// Specialization constants: 0 MODE, 1 NDIMS, 2 NSTEPS, 3 NBCAST (<= 3); per input k: 4 + 3k IN_KIND,
// 5 + 3k IN_DT, 6 + 3k IN_SLOT; per step s: 16 + 7s KIND (1 unary, 2 binary, 3 where), 17 + 7s
// OP (U_* / B_* code), 18 + 7s A, 19 + 7s B, 20 + 7s C (register indices: input k = k, step j =
// 4 + j), 21 + 7s P0, 22 + 7s P1 (float: the unary op's parameters).
// Workgroup (64, 1, 1), 2-D grid folded by LinearId() over total (MODE 0) or total / 4.
// msc_vk:variants f16
#version 450
#include "common/dtype.glsl"
#include "common/util.glsl"
#include "common/nd.glsl"
#include "common/unary_ops.glsl"
#include "common/binary_ops.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint NDIMS = 1;
layout(constant_id = 2) const uint NSTEPS = 1;
layout(constant_id = 3) const uint NBCAST = 0;

#define CHAIN_INPUT(k, kind_id, dt_id, slot_id)             \
  layout(constant_id = kind_id) const uint IN_KIND##k = 0; \
  layout(constant_id = dt_id) const uint IN_DT##k = 0;     \
  layout(constant_id = slot_id) const uint IN_SLOT##k = 0;
CHAIN_INPUT(0, 4, 5, 6)
CHAIN_INPUT(1, 7, 8, 9)
CHAIN_INPUT(2, 10, 11, 12)
CHAIN_INPUT(3, 13, 14, 15)

#define CHAIN_STEP(s, kind_id, op_id, a_id, b_id, c_id, p0_id, p1_id) \
  layout(constant_id = kind_id) const uint KIND##s = 0;              \
  layout(constant_id = op_id) const uint OP##s = 0;                  \
  layout(constant_id = a_id) const uint A##s = 0;                    \
  layout(constant_id = b_id) const uint B##s = 0;                    \
  layout(constant_id = c_id) const uint C##s = 0;                    \
  layout(constant_id = p0_id) const float P0_##s = 0.0;              \
  layout(constant_id = p1_id) const float P1_##s = 0.0;
CHAIN_STEP(0, 16, 17, 18, 19, 20, 21, 22)
CHAIN_STEP(1, 23, 24, 25, 26, 27, 28, 29)
CHAIN_STEP(2, 30, 31, 32, 33, 34, 35, 36)
CHAIN_STEP(3, 37, 38, 39, 40, 41, 42, 43)
CHAIN_STEP(4, 44, 45, 46, 47, 48, 49, 50)
CHAIN_STEP(5, 51, 52, 53, 54, 55, 56, 57)
CHAIN_STEP(6, 58, 59, 60, 61, 62, 63, 64)
CHAIN_STEP(7, 65, 66, 67, 68, 69, 70, 71)

const uint K_FULL = 0u, K_ONE = 1u, K_BCAST_INNER = 2u, K_NONE = 3u, K_BCAST_OUTER = 4u;
const uint S_UNARY = 1u, S_BINARY = 2u, S_WHERE = 3u;

layout(set = 0, binding = 0) uniform usamplerBuffer X0;
layout(set = 0, binding = 1) uniform usamplerBuffer X1;
layout(set = 0, binding = 2) uniform usamplerBuffer X2;
layout(set = 0, binding = 3) uniform usamplerBuffer X3;
OUTPUT(4, Y)
#ifdef MSC_VK_F16
layout(std430, set = 0, binding = 4) writeonly buffer BufYh { OUT_T Yh[]; };
layout(std430, set = 0, binding = 4) writeonly buffer BufYh4 { OUT_T4 Yh4[]; };
#endif

layout(push_constant) uniform Push {
  uint w[32];
} p;

// Element offsets of output element e in the broadcast slots (x, y, z).
void Offsets(uint e, out uvec3 off) {
  off = uvec3(0u);
  uint rest = e;
  [[unroll]] for (int d = 5; d >= 0; --d) {
    if (d >= 6 - int(NDIMS)) {  // (a break here stops the driver from unrolling)
      const uint c = NdStep(rest, p.w[2 + d], p.w[8 + d], p.w[1], d);
      if (NBCAST > 0u) off.x += c * p.w[14 + d];
      if (NBCAST > 1u) off.y += c * p.w[20 + d];
      if (NBCAST > 2u) off.z += c * p.w[26 + d];
    }
  }
}

float Fetch1(usamplerBuffer t, uint dt, uint i) {
  return IsFloatType(dt) ? LoadF(t, dt, i) : (LoadB(t, dt, i) ? 1.0 : 0.0);
}

// Input k's element for output element i (MODE 0).
float Load1(usamplerBuffer t, uint kind, uint dt, uint slot, uint i, uvec3 off) {
  if (kind == K_NONE) return 0.0;
  return Fetch1(t, dt, kind == K_FULL ? i : (kind == K_ONE ? 0u : off[slot]));
}

// Input k's elements for outputs 4i .. 4i + 3 (MODE 1; off[] at output 4i).
vec4 Load4(usamplerBuffer t, uint kind, uint dt, uint slot, uint i, uvec3 off) {
  if (kind == K_NONE) return vec4(0.0);
  if (kind == K_ONE) return vec4(Fetch1(t, dt, 0u));
  if (kind == K_BCAST_OUTER) return vec4(Fetch1(t, dt, off[slot]));
  const uint o = kind == K_FULL ? 4u * i : off[slot];  // four consecutive elements
  if (dt == DT_F32) return uintBitsToFloat(texelFetch(t, int(o >> 2)));
  return vec4(Fetch1(t, dt, o), Fetch1(t, dt, o + 1u), Fetch1(t, dt, o + 2u), Fetch1(t, dt, o + 3u));
}

#define STEP(s)                                                              \
  if (s < NSTEPS) {                                                          \
    const float a = R[A##s];                                                 \
    if (KIND##s == S_UNARY) {                                                \
      R[4 + s] = UnaryF(OP##s, a, P0_##s, P1_##s);                           \
    } else if (KIND##s == S_BINARY) {                                        \
      R[4 + s] = BinaryF(OP##s, a, R[B##s]);                                 \
    } else {                                                                 \
      R[4 + s] = !(a == 0.0) ? R[B##s] : R[C##s];                            \
    }                                                                        \
  }

// Runs the program on registers R[0..3] = the inputs' values; returns the last step's value.
float Run(float R[12]) {
  STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
  return R[4u + NSTEPS - 1u];
}

void main() {
  const uint i = LinearId();
  const uint total = p.w[0];
  uvec3 off;
  if (MODE == 0u) {
    if (i >= total) return;
    Offsets(i, off);
    float R[12];
    R[0] = Load1(X0, IN_KIND0, IN_DT0, IN_SLOT0, i, off);
    R[1] = Load1(X1, IN_KIND1, IN_DT1, IN_SLOT1, i, off);
    R[2] = Load1(X2, IN_KIND2, IN_DT2, IN_SLOT2, i, off);
    R[3] = Load1(X3, IN_KIND3, IN_DT3, IN_SLOT3, i, off);
#ifdef MSC_VK_F16
    Yh[i] = OUT_T(Run(R));
#else
    Y32[i] = floatBitsToUint(Run(R));
#endif
    return;
  }
  if (i * 4u >= total) return;
  Offsets(i * 4u, off);
  const vec4 x0 = Load4(X0, IN_KIND0, IN_DT0, IN_SLOT0, i, off);
  const vec4 x1 = Load4(X1, IN_KIND1, IN_DT1, IN_SLOT1, i, off);
  const vec4 x2 = Load4(X2, IN_KIND2, IN_DT2, IN_SLOT2, i, off);
  const vec4 x3 = Load4(X3, IN_KIND3, IN_DT3, IN_SLOT3, i, off);
  vec4 y;
  [[unroll]] for (int k = 0; k < 4; ++k) {
    float R[12];
    R[0] = x0[k];
    R[1] = x1[k];
    R[2] = x2[k];
    R[3] = x3[k];
    y[k] = Run(R);
  }
#ifdef MSC_VK_F16
  Yh4[i] = OUT_T4(y);
#else
  Y4[i] = floatBitsToUint(y);
#endif
}
