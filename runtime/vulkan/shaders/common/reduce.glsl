// Reductions over any set of axes, included by sum.comp, prod.comp, max.comp, min.comp,
// mean.comp, variance.comp, std.comp (REDUCE_OP before the include).
//
// The host (ops_reduce.cc) drops size-1 dims, merges runs of kept / reduced dims and passes
//   kept dims    kshape[4], kstride[4]  (outermost first; the output is their row-major order)
//   reduced dims rshape[4], rstride[4]  (element strides in X; padded with size 1)
//   Y[i] = OP over the reduced coordinates r of X[base(i) + sum_d r_d * rstride[d]]
// OP: sum, prod, max, min, mean = sum / count, variance = mean((x - mean)^2) (population, two
// passes), std = sqrt(variance).
//
// dtypes (specialization constants XT = YT, codes of common/dtype.glsl): float32 / float16
// compute in float32 (float16 widened on load, rounded to nearest even on store). int32 / int64
// (ITYPE: int64 only in the "+ext" variant) and bool (0/1) compute exactly in ITYPE: sum and prod
// wrap as two's complement (as numpy / TVM; an int32 result is the low word of the int64 one),
// max / min exact. bool stores `value != 0`: sum = any, prod = all, max = any, min = all (numpy's
// add / multiply reductions with dtype=bool). mean / variance / std: float dtypes only (host).
//
// COOP = 0: one output per invocation (workgroup (64, 1, 1), grid folded by LinearId() over the
//           outputs).
// COOP = 1: one output per workgroup (grid folded over the outputs as workgroups): the lanes
//           split the innermost reduced dim, partial results combine through shared memory.
// Bindings: 0 X (texel of raw element bits, View::kTexelUint), 1 Y (storage).
// The including .comp files declare the "+ext" variant (int64 / float16 / bool).
#include "dtype.glsl"
#include "util.glsl"

#define OP_SUM 0
#define OP_PROD 1
#define OP_MAX 2
#define OP_MIN 3
#define OP_MEAN 4
#define OP_VARIANCE 5
#define OP_STD 6

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint COOP = 0;
layout(constant_id = 1) const uint XT = DT_F32;
layout(constant_id = 2) const uint YT = DT_F32;

layout(set = 0, binding = 0) uniform usamplerBuffer X;
OUTPUT(1, Y)

layout(push_constant) uniform Push {
  uint kshape[4], kstride[4];
  uint rshape[4], rstride[4];
  uint total;  // outputs
  uint count;  // reduced elements per output
} p;

// ---- float domain (float32 / float16) ------------------------------------------------------

shared float partial[64];

float Identity(int op) {
  if (op == OP_PROD) return 1.0;
  if (op == OP_MAX) return -1.0 / 0.0;
  if (op == OP_MIN) return 1.0 / 0.0;
  return 0.0;
}

float Combine(int op, float a, float b) {
  if (op == OP_PROD) return a * b;
  if (op == OP_MAX) return max(a, b);
  if (op == OP_MIN) return min(a, b);
  return a + b;
}

// op over this lane's share of the reduced elements: rows (dims 0..2) in order, the innermost
// dim from `lane` in steps of `step`. centered: sum of (x - center)^2 instead.
float Partial(int op, uint base, uint lane, uint step, bool centered, float center) {
  float acc = Identity(op);
  for (uint a = 0; a < p.rshape[0]; ++a) {
    for (uint b = 0; b < p.rshape[1]; ++b) {
      for (uint c = 0; c < p.rshape[2]; ++c) {
        const uint row = base + a * p.rstride[0] + b * p.rstride[1] + c * p.rstride[2];
        for (uint d = lane; d < p.rshape[3]; d += step) {
          const float v = LoadF(X, XT, row + d * p.rstride[3]);
          acc = centered ? acc + (v - center) * (v - center) : Combine(op, acc, v);
        }
      }
    }
  }
  return acc;
}

// Combines one value per lane (COOP) into one, returned to every lane. Uniform control flow.
float WorkgroupCombine(int op, float v) {
  const uint lane = gl_LocalInvocationID.x;
  partial[lane] = v;
  barrier();
  [[unroll]] for (uint s = 32; s > 0; s >>= 1) {
    if (lane < s) partial[lane] = Combine(op, partial[lane], partial[lane + s]);
    barrier();
  }
  const float r = partial[0];
  barrier();  // partial[] is reused by the next call
  return r;
}

float Reduce(int op, uint base, uint lane, uint step) {
  const bool stats = op == OP_MEAN || op == OP_VARIANCE || op == OP_STD;
  const int first = stats ? OP_SUM : op;
  float r = Partial(first, base, lane, step, false, 0.0);
  if (COOP != 0) r = WorkgroupCombine(first, r);
  if (!stats) return r;
  const float mean = r / float(p.count);
  if (op == OP_MEAN) return mean;
  float sq = Partial(OP_SUM, base, lane, step, true, mean);
  if (COOP != 0) sq = WorkgroupCombine(OP_SUM, sq);
  const float var = sq / float(p.count);
  return op == OP_STD ? sqrt(var) : var;
}

// ---- integer domain (int32 / int64 / bool; sum, prod, max, min) ----------------------------

#ifdef MSC_VK_EXT
const ITYPE kIMin = int64_t(0x8000000000000000UL), kIMax = int64_t(0x7fffffffffffffffUL);
#else
const ITYPE kIMin = int(0x80000000u), kIMax = int(0x7fffffffu);
#endif

shared ITYPE ipartial[64];

ITYPE IdentityI(int op) {
  if (op == OP_PROD) return ITYPE(1);
  if (op == OP_MAX) return kIMin;
  if (op == OP_MIN) return kIMax;
  return ITYPE(0);
}

ITYPE CombineI(int op, ITYPE a, ITYPE b) {
  if (op == OP_PROD) return a * b;
  if (op == OP_MAX) return max(a, b);
  if (op == OP_MIN) return min(a, b);
  return a + b;
}

ITYPE PartialI(int op, uint base, uint lane, uint step) {
  ITYPE acc = IdentityI(op);
  for (uint a = 0; a < p.rshape[0]; ++a) {
    for (uint b = 0; b < p.rshape[1]; ++b) {
      for (uint c = 0; c < p.rshape[2]; ++c) {
        const uint row = base + a * p.rstride[0] + b * p.rstride[1] + c * p.rstride[2];
        for (uint d = lane; d < p.rshape[3]; d += step) {
          acc = CombineI(op, acc, LoadI(X, XT, row + d * p.rstride[3]));
        }
      }
    }
  }
  return acc;
}

ITYPE WorkgroupCombineI(int op, ITYPE v) {
  const uint lane = gl_LocalInvocationID.x;
  ipartial[lane] = v;
  barrier();
  [[unroll]] for (uint s = 32; s > 0; s >>= 1) {
    if (lane < s) ipartial[lane] = CombineI(op, ipartial[lane], ipartial[lane + s]);
    barrier();
  }
  const ITYPE r = ipartial[0];
  barrier();
  return r;
}

ITYPE ReduceI(int op, uint base, uint lane, uint step) {
  ITYPE r = PartialI(op, base, lane, step);
  if (COOP != 0) r = WorkgroupCombineI(op, r);
  return r;
}

void main() {
  const uint i = COOP != 0 ? gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x : LinearId();
  if (i >= p.total) return;  // uniform per workgroup when COOP
  uint rest = i, base = 0;
  [[unroll]] for (int d = 3; d >= 0; --d) {
    base += (rest % p.kshape[d]) * p.kstride[d];
    rest /= p.kshape[d];
  }
  const uint lane = COOP != 0 ? gl_LocalInvocationID.x : 0u;
  const uint step = COOP != 0 ? 64u : 1u;
  const bool store = COOP == 0 || gl_LocalInvocationID.x == 0;
  const bool stats = REDUCE_OP == OP_MEAN || REDUCE_OP == OP_VARIANCE || REDUCE_OP == OP_STD;
  if (IsFloatType(XT) || stats) {  // spec-constant branch: uniform
    const float r = Reduce(REDUCE_OP, base, lane, step);
    if (store) StoreF_Y(YT, i, r);
  } else {
    const ITYPE r = ReduceI(REDUCE_OP, base, lane, step);
    if (store) StoreI_Y(YT, i, r);
  }
}
