// Register-blocked GEMM, included by matmul.comp, nn/batch_matmul.comp, nn/dense.comp,
// msc/linear.comp, msc/linear_bias.comp (HAS_BIAS).
//
//   C[b, m, n] = act( sum_k A[b, m, k] * B'[b, k, n] (+ bias[n]) (+ R[b, m, n]) )  float32,
//   row-major
//   B' = B (B is [.., K, N]) or B^T (TRANS_B = 1: B is [.., N, K], the torch Linear weight layout)
//   A' = A (A is [.., M, K]) or A^T (TRANS_A = 1: A is [.., K, M]; float views only, VEC4 = 0)
//
// Each invocation computes a GEMM_BM x GEMM_BN block of C (16 x 8): the rows are the same for the
// whole workgroup, the columns differ per invocation. No shared memory (it only costs on CPU
// devices). VEC4 = 1 reads A and B as vec4 texels (needs K % 4 == 0 and N % 4 == 0); VEC4 = 0
// reads floats (any sizes). Edge blocks clamp their load indices and guard their stores.
//
// SG (the "+sg" variant, MSC_VK_SUBGROUP; spec constant 8 = the subgroup size, 4, 8 or 16): the
// register path's A rows are fetched once per subgroup, not once per invocation: lane l fetches
// rows m0 + l, m0 + SG + l, ..., and subgroupShuffle hands each row to every lane. All lanes of a
// subgroup share m0 (the workgroup's row block), and every lane takes part in the shuffles (lanes
// past N clamp their B columns and store nothing). On lavapipe (8-lane subgroups) this cuts the
// A texel fetches per k-step from 16 to 2: 1024^3 SGEMM 64 -> 69-71 GFLOP/s (best of 10) on 2 cores.
//
// NORM (spec constant 9; register path only, the whole row in one workgroup: grid x = 1,
// LOCAL_X * 8 >= N): layer_norm of each row of C after the epilogue, as nn/layer_norm computes it
// (common/normalize.glsl: mean, then the population variance of the deviations, both float32
// sums; Z = (v - mean) * inversesqrt(var + eps) * gamma + beta), the row sums combined through
// shared memory. Bits: 1 on, 2 also store C (read elsewhere), 4 gamma, 8 beta. Z, Gamma and Beta
// are bound after R (ops_gemm.cc binds other views when NORM is off).
//
// TILED = 1 (GPUs, where shared memory pays off): classic shared-memory tiling instead: a 16x16
// workgroup computes a 64x64 block of C, each invocation 4x4 outputs, K in steps of 16 staged
// through shared memory (float views of A and B, any sizes).
//
// Bindings: 0 A (texel), 1 B (texel), [2 bias (texel, N floats)], then C (storage, float), then R
//           (texel), always bound: with RES = 1 the fused residual (C's shape, read at C's element
//           indices before the activation; a vec4 view when VEC4, else float), with RES = 0 any
//           texel view (ops_gemm.cc binds A), never read; then Z (storage, C's shape), Gamma and
//           Beta (texel, N floats), read / written with NORM only.
// Register path: workgroup (64, 1, 1), grid x = ceil(ceil(N / 8) / 64), y = ceil(M / 16),
//                z = batch entries.
// TILED:         workgroup (16, 16, 1) (spec constants 4, 5), grid x = ceil(N / 64),
//                y = ceil(M / 64), z = batch entries.
#include "util.glsl"
#include "subgroup_rows.glsl"

#define GEMM_BM 16
#define GEMM_BN 8

layout(local_size_x_id = 4, local_size_y_id = 5, local_size_z = 1) in;

layout(constant_id = 0) const uint TRANS_B = 0;  // 1: B is [N, K]
layout(constant_id = 1) const uint ACT = 0;      // act.glsl: 1 clamp (relu: 0, +inf), 16 + a unary op
layout(constant_id = 2) const uint VEC4 = 0;     // 1: vec4 texel views of A and B
layout(constant_id = 3) const uint TILED = 0;    // 1: shared-memory tiled path (local size 16x16)
layout(constant_id = 4) const uint LOCAL_X = 64;
layout(constant_id = 5) const uint LOCAL_Y = 1;
layout(constant_id = 6) const uint TRANS_A = 0;  // 1: A is [K, M] (needs VEC4 = 0)
layout(constant_id = 7) const uint RES = 0;      // 1: v += R[element] before the activation
layout(constant_id = 8) const uint SG = 0;       // "+sg": subgroup size (4, 8, 16); 0: off
layout(constant_id = 9) const uint NORM = 0;     // layer_norm epilogue bits (see above); 0: off
#define SG_ROWS (GEMM_BM / 4)                    // A row fetches per lane, at most (SG = 4)

#define TILE 64
#define TILE_K 16
shared float tile_a[TILE_K][TILE];  // [k][m]
shared float tile_b[TILE_K][TILE];  // [k][n]

layout(set = 0, binding = 0) uniform samplerBuffer A;
layout(set = 0, binding = 1) uniform samplerBuffer B;
#ifdef HAS_BIAS
layout(set = 0, binding = 2) uniform samplerBuffer Bias;
layout(std430, set = 0, binding = 3) writeonly buffer BufC { OUT_T C[]; };
layout(std430, set = 0, binding = 3) writeonly buffer BufC4 { OUT_T4 C4[]; };
layout(set = 0, binding = 4) uniform samplerBuffer Res;
#define NORM_BINDING 5
#else
layout(std430, set = 0, binding = 2) writeonly buffer BufC { OUT_T C[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufC4 { OUT_T4 C4[]; };
layout(set = 0, binding = 3) uniform samplerBuffer Res;
#define NORM_BINDING 4
#endif
layout(std430, set = 0, binding = NORM_BINDING) writeonly buffer BufZ { OUT_T Z[]; };
layout(set = 0, binding = NORM_BINDING + 1) uniform samplerBuffer Gamma;
layout(set = 0, binding = NORM_BINDING + 2) uniform samplerBuffer Beta;
// NORM: per-invocation partial row sums, then each row's statistic.
shared float norm_part[GEMM_BM * LOCAL_X];
shared float norm_stat[GEMM_BM];

layout(push_constant) uniform Push {
  uint M, N, K;
  uint batch_ndim;    // batch dims used (0..4), outermost first in the arrays below
  uint bshape[4];     // output batch dims
  uint a_bstride[4];  // A element stride per batch dim (0: broadcast)
  uint b_bstride[4];  // B element stride per batch dim (0: broadcast)
  float act_min, act_max;
  float norm_eps;  // NORM: layer_norm's epsilon
} p;

// Element offsets of A and B for batch entry z.
void BatchBase(uint z, out uint a_base, out uint b_base) {
  uint rest = z;
  a_base = 0;
  b_base = 0;
  for (int d = int(p.batch_ndim) - 1; d >= 0; --d) {
    const uint i = rest % p.bshape[d];
    rest /= p.bshape[d];
    a_base += i * p.a_bstride[d];
    b_base += i * p.b_bstride[d];
  }
}

#include "act.glsl"

// v + R[e] for element e of C (without RES: v). Callers read only elements they store, so every
// read is inside R; the activation follows on the whole block (act.glsl).
float Residual(float v, uint e) {
  if (RES != 0)
    v += VEC4 != 0 ? texelFetch(Res, int(e >> 2))[e & 3u] : texelFetch(Res, int(e)).x;
  return v;
}

void TiledMain() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;  // 16 x 16
  const uint tid = ty * 16 + tx;
  const uint m_tile = gl_WorkGroupID.y * TILE, n_tile = gl_WorkGroupID.x * TILE;
  uint a_base, b_base;
  BatchBase(gl_WorkGroupID.z, a_base, b_base);
  float acc[4][4];
  [[unroll]] for (uint i = 0; i < 4; ++i)
    [[unroll]] for (uint j = 0; j < 4; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.K; k0 += TILE_K) {
    // 1024 elements of each tile, 4 per invocation; out-of-range elements are 0.
    [[unroll]] for (uint r = 0; r < 4; ++r) {
      const uint e = tid + r * 256;
      const uint kk = e % TILE_K, mm = e / TILE_K;  // A: consecutive invocations walk k
      const uint m = m_tile + mm, k = k0 + kk;
      tile_a[kk][mm] = (m < p.M && k < p.K) ? Fetch(A, a_base + (TRANS_A != 0 ? k * p.M + m : m * p.K + k)) : 0.0;
      const uint nn = TRANS_B != 0 ? e / TILE_K : e % TILE;
      const uint kb = TRANS_B != 0 ? e % TILE_K : e / TILE;
      const uint n = n_tile + nn, kg = k0 + kb;
      tile_b[kb][nn] = (n < p.N && kg < p.K) ? Fetch(B, b_base + (TRANS_B != 0 ? n * p.K + kg : kg * p.N + n)) : 0.0;
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < TILE_K; ++kk) {
      float a[4], b[4];
      [[unroll]] for (uint i = 0; i < 4; ++i) a[i] = tile_a[kk][ty + 16 * i];
      [[unroll]] for (uint j = 0; j < 4; ++j) b[j] = tile_b[kk][tx + 16 * j];
      [[unroll]] for (uint i = 0; i < 4; ++i)
        [[unroll]] for (uint j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    barrier();
  }
  const uint c_base = gl_WorkGroupID.z * p.M * p.N;
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    const uint m = m_tile + ty + 16 * i;
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      const uint n = n_tile + tx + 16 * j;
      if (m < p.M && n < p.N) {
#ifdef HAS_BIAS
        acc[i][j] += Fetch(Bias, n);
#endif
        acc[i][j] = Residual(acc[i][j], c_base + m * p.N + n);
      }
    }
  }
  ACT_GRID(acc, 4, 4)
  [[unroll]] for (uint i = 0; i < 4; ++i) {
    const uint m = m_tile + ty + 16 * i;
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      const uint n = n_tile + tx + 16 * j;
      if (m < p.M && n < p.N) C[c_base + m * p.N + n] = OUT_T(acc[i][j]);
    }
  }
}

// NORM: sum over the workgroup of each row's partial `part[i]` (this invocation's columns), times
// `scale`, into norm_stat[i]. Every invocation of the workgroup calls it (barriers).
void RowSums(float part[GEMM_BM], float scale) {
  const uint t = gl_LocalInvocationID.x;
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) norm_part[i * LOCAL_X + t] = part[i];
  barrier();
  for (uint r = t; r < GEMM_BM; r += LOCAL_X) {
    float s = 0.0;
    for (uint j = 0; j < LOCAL_X; ++j) s += norm_part[r * LOCAL_X + j];
    norm_stat[r] = s * scale;
  }
  barrier();
}

// NORM: the rows m0.. of this invocation's columns n0..n0+7: v = act(acc + bias (+ R)), then
// Z = layer_norm(v) over the row (and C = v with NORM bit 2). Rows past M and columns past N
// take part in no sum and are not stored.
void NormStore(vec4 acc[GEMM_BM][2], vec4 bias0, vec4 bias1, uint m0, uint n0, uint c_base) {
  float v[GEMM_BM][GEMM_BN];
  float part[GEMM_BM];
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
    const uint m = min(m0 + i, p.M - 1);
    part[i] = 0.0;
    [[unroll]] for (uint j = 0; j < GEMM_BN; ++j) {
      const uint n = min(n0 + j, p.N - 1);
      const float a = j < 4 ? acc[i][0][j] + bias0[j] : acc[i][1][j - 4] + bias1[j - 4];
      v[i][j] = Residual(a, c_base + m * p.N + n);
    }
  }
  ACT_GRID(v, GEMM_BM, GEMM_BN)
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i)
    [[unroll]] for (uint j = 0; j < GEMM_BN; ++j)
      if (n0 + j < p.N) part[i] += v[i][j];
  RowSums(part, 1.0 / float(p.N));
  float mean[GEMM_BM];
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
    mean[i] = norm_stat[i];
    part[i] = 0.0;
    [[unroll]] for (uint j = 0; j < GEMM_BN; ++j)
      if (n0 + j < p.N) part[i] += (v[i][j] - mean[i]) * (v[i][j] - mean[i]);
  }
  RowSums(part, 1.0 / float(p.N));
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
    const uint m = m0 + i;
    if (m >= p.M) continue;
    const float inv = inversesqrt(norm_stat[i] + p.norm_eps);
    [[unroll]] for (uint j = 0; j < GEMM_BN; ++j) {
      const uint n = n0 + j;
      if (n >= p.N) continue;
      const uint e = c_base + m * p.N + n;
      if ((NORM & 2u) != 0) C[e] = OUT_T(v[i][j]);
      float z = (v[i][j] - mean[i]) * inv;
      if ((NORM & 4u) != 0) z *= Fetch(Gamma, n);
      if ((NORM & 8u) != 0) z += Fetch(Beta, n);
      Z[e] = OUT_T(z);
    }
  }
}

// A's block at k..k+3 (vec4 views): with SG the subgroup's rows into v, else all 16 into a.
#define LOAD_A4                                                                              \
  vec4 a[GEMM_BM], v[SG_ROWS];                                                               \
  if (SG != 0) {                                                                             \
    [[unroll]] for (uint r = 0; r < SG_ROWS; ++r)                                            \
      if (r * SG < GEMM_BM) v[r] = texelFetch(A, int((lrow[r] + k) >> 2));                   \
  } else {                                                                                   \
    [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) a[i] = texelFetch(A, int((arow[i] + k) >> 2)); \
  }

void main() {
  if (TILED != 0) {
    TiledMain();
    return;
  }
  const uint m0 = gl_WorkGroupID.y * GEMM_BM;
  const uint n0 = gl_GlobalInvocationID.x * GEMM_BN;
  // With SG every lane takes part in the shuffles, with NORM in the row sums: lanes past N
  // compute clamped columns and store nothing.
  if (SG == 0 && NORM == 0 && n0 >= p.N) return;

  uint a_base, b_base;
  BatchBase(gl_WorkGroupID.z, a_base, b_base);
  const uint c_base = gl_WorkGroupID.z * p.M * p.N;

  vec4 acc[GEMM_BM][2];
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  uint arow[GEMM_BM];  // element index of A[b, m, 0] (rows clamped to M - 1)
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) arow[i] = a_base + min(m0 + i, p.M - 1) * (TRANS_A != 0 ? 1 : p.K);
  const uint astep = TRANS_A != 0 ? p.M : 1;  // element step of A along k
  const uint lane = SUBGROUP_LANE;
  uint lrow[SG_ROWS];  // SG: element index of A[b, m0 + r * SG + lane, 0] (clamped)
  [[unroll]] for (uint r = 0; r < SG_ROWS; ++r)
    lrow[r] = a_base + min(m0 + r * max(SG, 1u) + lane, p.M - 1) * (TRANS_A != 0 ? 1 : p.K);
  uint ncol[GEMM_BN];  // columns clamped to N - 1
  [[unroll]] for (uint j = 0; j < GEMM_BN; ++j) ncol[j] = min(n0 + j, p.N - 1);

  if (VEC4 != 0 && TRANS_B == 0) {
    // B rows: two vec4 texels per k (columns n0..n0+7; the second clamped for N % 8 == 4).
    const uint b0i = min(n0, p.N - 4), b1d = min(n0 + 4, p.N - 4) - b0i;  // b1d: 4, or 0 (clamped)
    int bi = int((b_base + b0i) >> 2);
    const int bd = int(b1d >> 2), ldb = int(p.N >> 2);
    for (uint k = 0; k < p.K; k += 4) {
      LOAD_A4
      [[unroll]] for (uint kk = 0; kk < 4; ++kk) {
        const vec4 b0 = texelFetch(B, bi), bv1 = texelFetch(B, bi + bd);
        bi += ldb;
        [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
          const float ai = SG != 0 ? SHUFFLE_ROW(v, i)[kk] : a[i][kk];
          acc[i][0] = fma(vec4(ai), b0, acc[i][0]);
          acc[i][1] = fma(vec4(ai), bv1, acc[i][1]);
        }
      }
    }
  } else if (VEC4 != 0) {
    // TRANS_B: B row n is contiguous in k: dot products of vec4s.
    for (uint k = 0; k < p.K; k += 4) {
      LOAD_A4
      vec4 b[GEMM_BN];
      [[unroll]] for (uint j = 0; j < GEMM_BN; ++j) b[j] = texelFetch(B, int((b_base + ncol[j] * p.K + k) >> 2));
      [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
        const vec4 ai = SG != 0 ? SHUFFLE_ROW(v, i) : a[i];
        acc[i][0] += vec4(dot(ai, b[0]), dot(ai, b[1]), dot(ai, b[2]), dot(ai, b[3]));
        acc[i][1] += vec4(dot(ai, b[4]), dot(ai, b[5]), dot(ai, b[6]), dot(ai, b[7]));
      }
    }
  } else {
    uint bidx[GEMM_BN];
    [[unroll]] for (uint j = 0; j < GEMM_BN; ++j) bidx[j] = b_base + (TRANS_B != 0 ? ncol[j] * p.K : ncol[j]);
    const uint bstep = TRANS_B != 0 ? 1 : p.N;
    for (uint k = 0; k < p.K; ++k) {
      float a[GEMM_BM], v[SG_ROWS];
      if (SG != 0) {
        [[unroll]] for (uint r = 0; r < SG_ROWS; ++r)
          if (r * SG < GEMM_BM) v[r] = Fetch(A, lrow[r] + k * astep);
      } else {
        [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) a[i] = Fetch(A, arow[i] + k * astep);
      }
      vec4 b0, b1;
      [[unroll]] for (uint j = 0; j < 4; ++j) {
        b0[j] = Fetch(B, bidx[j]);
        b1[j] = Fetch(B, bidx[j + 4]);
        bidx[j] += bstep;
        bidx[j + 4] += bstep;
      }
      [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
        const float ai = SG != 0 ? SHUFFLE_ROW(v, i) : a[i];
        acc[i][0] = fma(vec4(ai), b0, acc[i][0]);
        acc[i][1] = fma(vec4(ai), b1, acc[i][1]);
      }
    }
  }

  vec4 bias0 = vec4(0.0), bias1 = vec4(0.0);
#ifdef HAS_BIAS
  [[unroll]] for (uint j = 0; j < 4; ++j) {
    bias0[j] = Fetch(Bias, ncol[j]);
    bias1[j] = Fetch(Bias, ncol[j + 4]);
  }
#endif
  if (NORM != 0) {
    NormStore(acc, bias0, bias1, m0, n0, c_base);
    return;
  }
  if (n0 >= p.N) return;  // SG: a lane past N (its shuffles are done)
  const bool full = n0 + GEMM_BN <= p.N;
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
    const uint m = m0 + i;
    acc[i][0] += bias0;
    acc[i][1] += bias1;
    if (RES != 0 && m < p.M) {
      const uint c = c_base + m * p.N + n0;
      if (VEC4 != 0 && full) {  // c % 4 == 0 (N % 4 == 0): R's vec4 view
        acc[i][0] += texelFetch(Res, int(c >> 2));
        acc[i][1] += texelFetch(Res, int(c >> 2) + 1);
      } else {
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          if (n0 + j < p.N) acc[i][0][j] = Residual(acc[i][0][j], c + j);
          if (n0 + j + 4 < p.N) acc[i][1][j] = Residual(acc[i][1][j], c + j + 4);
        }
      }
    }
  }
  ACT_ROWS8(acc, GEMM_BM)
  [[unroll]] for (uint i = 0; i < GEMM_BM; ++i) {
    const uint m = m0 + i;
    if (m < p.M) {
      const uint c = c_base + m * p.N + n0;
      if (VEC4 != 0 && full) {
        C4[c >> 2] = OUT_T4(acc[i][0]);
        C4[(c >> 2) + 1] = OUT_T4(acc[i][1]);
      } else {
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          if (n0 + j < p.N) C[c + j] = OUT_T(acc[i][0][j]);
          if (n0 + j + 4 < p.N) C[c + j + 4] = OUT_T(acc[i][1][j]);
        }
      }
    }
  }
}
