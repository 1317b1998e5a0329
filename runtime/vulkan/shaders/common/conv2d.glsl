// 2-D convolution, included by nn/conv2d.comp and msc/conv2d_bias.comp (HAS_BIAS).
//
//   Y[n, o, oh, ow] = act( sum_{c, kh, kw} W[o, c, kh, kw] * X[n, g*Cg + c, ih, iw] (+ bias[o])
//                          (+ R[n, o, oh, ow]) )
//   ih = oh*sh - pt + kh*dh,  iw = ow*sw - pl + kw*dw  (outside the input: 0)
//   X: NCHW, W: OIHW with I = C / groups (Cg), Y: NCHW; o in group g = o / Og, Og = O / groups.
//
// One shader, eight kernels (MODEs; ops_gemm.cc picks them). Each is its own SPIR-V module: the
// including .comp has a "// msc_vk:kernel <name> <variants>" line per kernel (direct, wino_input,
// gemm1x1, wino_gemm, wino_output, depthwise, im2col, im2col_gemm: MODE_<NAME> below), and
// EmbedShaders.cmake compiles "<stem>@<name>" with -DMSC_VK_KERNEL=MODE_<NAME>, so MODE is a
// compile-time constant and each module holds one kernel's code (lavapipe compiles a pipeline in
// time that grows with the whole module, not with the specialized kernel).
//
// MODE 0, direct (any conv): each invocation computes CONV_BM (16) output channels x CONV_BN (8)
//   consecutive output pixels (flattened oh*OW + ow). DEPTHWISE (Cg == 1 and Og == 1) computes
//   1 channel x 8 pixels instead. Invocation i (LinearId) takes channel block i / PB and pixel
//   block i % PB (PB = ceil(OH*OW / 8); channel blocks: groups * ceil(Og / 16)), so the
//   channels are the same for a whole workgroup except where a small image's blocks run out.
//   Workgroup (64, 1, 1). Grid: a 1-D grid (Grid1D) of ceil(blocks * PB / 64) workgroups, z = N.
//
// MODE 2, 1x1 GEMM (KH = KW = 1, stride 1, no padding, groups 1): per image n,
//   Y[n] (O x P) = W (O x C) @ X[n] (C x P), P = OH*OW, as a register-blocked GEMM: each invocation
//   computes 16 rows (channels) x 8 columns (pixels); W through a vec4 view when C % 4 == 0
//   (WVEC4), X through a vec4 view when P % 4 == 0 (STORE4), or else with XU4 through a vec4 view
//   at unaligned element offsets (three texels per row of 8 columns instead of 8 float fetches;
//   the view reaches past X's last element to a whole texel). Invocation i computes row block
//   i / ceil(P/8), column block i % ceil(P/8). Grid: x = ceil(ceil(O/16) * ceil(P/8) / 64), z = N.
//
// MODE 6 + 7, im2col + GEMM (groups 1, any kernel, stride, padding, dilation): MODE 6 writes the
//   im2col matrix B [N, Kp, Pp] (K = C*KH*KW, Kp = K or, with WVEC4 = 1 in MODE 6, K rounded up
//   to 4 with zero rows; Pp = P rounded up to 4) into a workspace, MODE 7 is the MODE 2 GEMM
//   W [O, Kp] @ B[n] with B's row stride Pp (always vec4 loads). Grids: MODE 6 a 1-D grid
//   (Grid1D) of ceil(Kp * ceil(Pp / 8) / 64) workgroups, z = N (invocation i: row i / ceil(Pp/8),
//   column block i % ceil(Pp/8)); MODE 7 as MODE 2 (push constant C = Kp there).
//
// MODE 5, depthwise (Cg == 1, Og == 1; KH = KW = DW_K in {3, 5}, stride DW_S in {1, 2} both
//   ways, dilation 1): each invocation computes DW_R (2) output rows x DW_C (8) output columns
//   of one channel, fetching each input row of its window once. Invocation i (LinearId) computes
//   block i % B of plane i / B (B = ceil(OH/2) * ceil(OW/8), plane = n*C + c): a 1-D grid of
//   ceil(N*C*B / 64) workgroups (Grid1D); STORE4 means OW % 4 == 0 here. DW_XVEC4 (W % 4 == 0): X is bound
//   as a vec4 view and each input row of the window is fetched as whole vec4 texels (4 to 6 per
//   row instead of 10 to 19 floats; on lavapipe every fetch is a gather across the lanes).
//
// Winograd F(FxF, 3x3), F = WINO_F = 2 or 4 (Lavin & Gray 2016, "Fast Algorithms for
// Convolutional Neural Networks", sec. 4; 3x3, stride 1, dilation 1, groups 1):
//   Y_tile = A^T [ sum_c (G g_oc G^T) .* (B^T d_ct B) ] A,
// d_ct the SxS input patch (S = F + 2) at (F*th - pt, F*tw - pl), zeros outside the input.
//   F = 2: B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
//          A^T = [1 1 1 0; 0 1 -1 -1];
//   F = 4, the Toom-Cook construction on the points 0, -1, 1, 1/2, -2 and infinity, not Lavin &
//          Gray's 0, 1, -1, 2, -2 (the choice of points is what Barabasz et al. 2020, "Error
//          analysis and improving the accuracy of Winograd convolution for deep neural
//          networks", ACM TOMS 46(4), study; pairing 2 with its reciprocal keeps the transforms'
//          coefficients small). Of the sets tried (+-2, +-1/2, 1/2 and -2, 2 and -1/2, 1/2 and
//          -1/3) it rounded least in a float32 simulation; in the kernel, over 256 channels, the
//          worst error is 5.8e-6 instead of 1.9e-5 (the direct kernel's: 6.7e-6; test_conv_algos
//          "Winograd F(4x4,3x3) accuracy"):
//          B^T = [1 -3/2 -2 3/2 1 0; 0 1 -5/2 1/2 1 0; 0 -1 1/2 5/2 1 0; 0 -2 -1 2 1 0;
//                 0 1/2 -1 -1/2 1 0; 0 1 -3/2 -2 3/2 1],
//          G = [1 0 0; -1/3 1/3 -1/3; 1/3 1/3 1/3; -16/15 -8/15 -4/15; 1/15 -2/15 4/15; 0 0 1],
//          A^T = [1 1 1 1 1 0; 0 -1 1 1/2 -2 0; 0 1 1 1/4 4 0; 0 -1 1 1/8 -8 1].
// Output tiles of FxF pixels, TH = ceil(OH/F), TW = ceil(OW/F), T = N*TH*TW tiles numbered
// t = (n*TH + th)*TW + tw, Tp = T rounded up to 4, XI = S*S transformed points.
//   U [XI, O, C] = G W[o, c] G^T, transformed once on the host (ops_gemm.cc), bound as W.
//   MODE 1, input transform:  V[xi, c, t] = (B^T d B)[xi] (zeros for t >= T). Binds X,
//            Y = V [XI, C, Tp]. Invocation i (LinearId) does c = i / Tp, t = i % Tp: a 1-D grid
//            of ceil(C * Tp / 64) workgroups (Grid1D).
//   MODE 3, GEMM: M[xi] (O x Tp) = U[xi] (O x C) @ V[xi] (C x Tp) for the XI xi (grid z), the
//            MODE 2 kernel with a batched A and without bias/activation. Binds X = V, W = U, Y = M.
//   MODE 4, output transform: Y[n, o, F*th+i, F*tw+j] = act((A^T M[:, o, t] A)[i, j] + bias[o]
//            (+ R[n, o, F*th+i, F*tw+j])) for the pixels inside the output. Binds X = M.
//            Invocation i does o = i / T, t = i % T: ceil(O * T / 64) workgroups (Grid1D).
//   The push constants keep their meaning (N, C, O, OH, OW, pt, pl); MODE 3 uses C = K (input
//   channels), O = rows, OH = 1, OW = Tp, N = XI.
//
// Bindings: 0 X (texel: float, or vec4 in MODE 2/3 when STORE4 or XU4), 1 W (texel: float, or vec4 when
//           WVEC4), [2 bias (texel float)], then Y (storage), then R (texel), always bound: with
//           RES = 1 the fused residual (issue 9: resnet's skip connection), Y's shape, read at Y's
//           element indices before the activation: a vec4 view when STORE4, else float (MODE 4:
//           float); with RES = 0 any texel view (ops_gemm.cc binds X), never read. Every store
//           site (EPILOGUE_ROWS8: MODEs 0, 2, 5, 7; MODE 4) applies it; MODEs 1, 3 and 6 write workspaces
//           and take RES = 0.
//
// SG (the "+sg" variant, MSC_VK_SUBGROUP; spec constant 8 = the subgroup size 4, 8 or 16, else
// 0) in the GEMM MODEs 2, 3, 7: when all lanes of a subgroup fall in one row block (they share
// m0), lane l fetches W rows m0 + l, m0 + SG + l, ... and subgroupShuffle hands each row to every
// lane: 16 / SG row fetches per lane and k-step instead of 16 (as gemm.glsl SG). Subgroups that
// straddle two row blocks (narrow outputs) fetch per invocation.
#include "util.glsl"
#include "subgroup_rows.glsl"

#define CONV_BM 16
#define CONV_BN 8

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#define MODE_DIRECT 0
#define MODE_WINO_INPUT 1
#define MODE_GEMM1X1 2
#define MODE_WINO_GEMM 3
#define MODE_WINO_OUTPUT 4
#define MODE_DEPTHWISE 5
#define MODE_IM2COL 6
#define MODE_IM2COL_GEMM 7

#ifndef MSC_VK_KERNEL
#error "conv2d.glsl: one module per kernel, -DMSC_VK_KERNEL=MODE_<NAME> (msc_vk:kernel lines)"
#endif
const uint MODE = MSC_VK_KERNEL;  // see the header

layout(constant_id = 0) const uint ACT = 0;        // act.glsl: 1 clamp, 16 + a unary op
layout(constant_id = 1) const uint WVEC4 = 0;      // 1: W view is vec4 (Cg*KH*KW % 4 == 0)
layout(constant_id = 2) const uint DEPTHWISE = 0;  // 1: Cg == 1 and Og == 1
layout(constant_id = 3) const uint STORE4 = 0;     // 1: OH*OW % 4 == 0, vec4 stores
layout(constant_id = 4) const uint WINO_F = 2;     // Winograd output tile: F(2x2,3x3) or F(4x4,3x3)
layout(constant_id = 5) const uint DW_K = 3;       // MODE 5: kernel size (3 or 5)
layout(constant_id = 6) const uint DW_S = 1;       // MODE 5: stride (1 or 2)
layout(constant_id = 7) const uint RES = 0;        // 1: v += R[element] before the activation
layout(constant_id = 8) const uint SG = 0;         // "+sg": subgroup size (4, 8, 16); 0: off
layout(constant_id = 9) const uint DW_XVEC4 = 0;   // MODE 5: X read as vec4 texels (W % 4 == 0)
layout(constant_id = 10) const uint DW_OFF = 0;    // MODE 5, DW_XVEC4: (-pl) mod 4, see there
layout(constant_id = 11) const uint XU4 = 0;       // MODE 2, STORE4 = 0: X as vec4 texels, see GemmK
#define SG_ROWS (CONV_BM / 4)                      // W row fetches per lane, at most (SG = 4)

#define DW_R 2  // MODE 5: output rows per invocation
#define DW_C 8  // MODE 5: output columns per invocation

layout(set = 0, binding = 0) uniform samplerBuffer X;
layout(set = 0, binding = 1) uniform samplerBuffer Wt;
#ifdef HAS_BIAS
layout(set = 0, binding = 2) uniform samplerBuffer Bias;
layout(std430, set = 0, binding = 3) writeonly buffer BufY { OUT_T Y[]; };
layout(std430, set = 0, binding = 3) writeonly buffer BufY4 { OUT_T4 Y4[]; };
layout(set = 0, binding = 4) uniform samplerBuffer Res;
#else
layout(std430, set = 0, binding = 2) writeonly buffer BufY { OUT_T Y[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BufY4 { OUT_T4 Y4[]; };
layout(set = 0, binding = 3) uniform samplerBuffer Res;
#endif

layout(push_constant) uniform Push {
  uint N, C, H, W;
  uint O, OH, OW;
  uint KH, KW;
  uint sh, sw;   // strides
  uint pt, pl;   // padding top, left (bottom/right only shape OH/OW)
  uint dh, dw;   // dilation
  uint groups;
  float act_min, act_max;
} p;

#include "act.glsl"

// v + R[e] for element e of Y (without RES: v, bit-identical to the unfused kernel). Callers read
// only elements they store, so every read is inside R; the activation follows on the whole block
// (act.glsl ACT_ROWS8 / ACT_GRID).
float Residual(float v, uint e) {
  if (RES != 0)
    v += STORE4 != 0 ? texelFetch(Res, int(e >> 2))[e & 3u] : texelFetch(Res, int(e)).x;
  return v;
}

// Adds the residual to 8 outputs (pixels p0..p0+7 of the output channel row starting at element
// `row`), as Store8 will write them.
void Residual8(uint row, uint p0, uint ohw, inout vec4 v[2]) {
  if (RES == 0) return;
  const uint c = row + p0;
  if (STORE4 != 0 && p0 + 8 <= ohw) {  // c % 4 == 0: R's vec4 view
    v[0] += texelFetch(Res, int(c >> 2));
    v[1] += texelFetch(Res, int(c >> 2) + 1);
  } else {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      if (p0 + j < ohw) v[0][j] = Residual(v[0][j], c + j);
      if (p0 + j + 4 < ohw) v[1][j] = Residual(v[1][j], c + j + 4);
    }
  }
}

// Writes 8 outputs (pixels p0..p0+7 of the output channel row starting at element `row`).
void Store8(uint row, uint p0, uint ohw, vec4 v[2]) {
  const uint c = row + p0;
  if (STORE4 != 0 && p0 + 8 <= ohw) {
    Y4[c >> 2] = OUT_T4(v[0]);
    Y4[(c >> 2) + 1] = OUT_T4(v[1]);
  } else {
    [[unroll]] for (uint j = 0; j < 4; ++j) {
      if (p0 + j < ohw) Y[c + j] = OUT_T(v[0][j]);
      if (p0 + j + 4 < ohw) Y[c + j + 4] = OUT_T(v[1][j]);
    }
  }
}

// The epilogue of a block of ROWS x 8 outputs v[ROWS][2] (bias already added): row r starts at
// element row[r] and is written when ok[r]. Residual, the activation on the whole block, stores.
#define EPILOGUE_ROWS8(v, ROWS, ok, row, p0, ohw)                                   \
  [[unroll]] for (uint r_ = 0; r_ < (ROWS); ++r_)                                   \
    if (ok[r_]) Residual8(row[r_], p0, ohw, v[r_]);                                 \
  ACT_ROWS8(v, ROWS)                                                                \
  [[unroll]] for (uint r_ = 0; r_ < (ROWS); ++r_)                                   \
    if (ok[r_]) Store8(row[r_], p0, ohw, v[r_]);

float BiasOf(uint o) {
#ifdef HAS_BIAS
  return Fetch(Bias, o);
#else
  return 0.0;
#endif
}

// Elements s..s+3 of the 8 elements (a, b).
vec4 Shift4(vec4 a, vec4 b, uint s) {
  return s == 0u ? a : s == 1u ? vec4(a.yzw, b.x) : s == 2u ? vec4(a.zw, b.xy) : vec4(a.w, b.xyz);
}

// GemmMain's k loop: acc[i][h] += A[z, m0 + i, :] @ B[z, :, n0 + 4h .. n0 + 4h + 3]. `by_subgroup`
// (the same for the whole subgroup): A's rows come through the subgroup (lrow: this lane's rows),
// else per invocation (arow). A call with a constant `by_subgroup` compiles to its own loop.
void GemmK(const bool by_subgroup, const uint arow[CONV_BM], const uint lrow[SG_ROWS], uint K,
           uint ldb, bool vec4_b, uint bv0, uint bv1, const uint bcol[CONV_BN], uint last_texel,
           inout vec4 acc[CONV_BM][2]) {
  for (uint k = 0; k < K; k += 4) {
    vec4 a[CONV_BM], v[SG_ROWS];
    if (by_subgroup) {
      [[unroll]] for (uint r = 0; r < SG_ROWS; ++r) {
        if (r * SG < CONV_BM) {
          if (WVEC4 != 0) {
            v[r] = texelFetch(Wt, int((lrow[r] + k) >> 2));
          } else {
            [[unroll]] for (uint t = 0; t < 4; ++t) v[r][t] = Fetch(Wt, lrow[r] + min(k + t, K - 1));
          }
        }
      }
    } else if (WVEC4 != 0) {
      [[unroll]] for (uint i = 0; i < CONV_BM; ++i) a[i] = texelFetch(Wt, int((arow[i] + k) >> 2));
    } else {
      [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
        [[unroll]] for (uint t = 0; t < 4; ++t) a[i][t] = Fetch(Wt, arow[i] + min(k + t, K - 1));
      }
    }
    [[unroll]] for (uint t = 0; t < 4; ++t) {
      if (WVEC4 != 0 || k + t < K) {
        const uint row = (k + t) * ldb;
        vec4 b0, b1;
        if (vec4_b) {
          b0 = texelFetch(X, int((bv0 + row) >> 2));
          b1 = texelFetch(X, int((bv1 + row) >> 2));
        } else if (XU4 != 0) {
          // B[k + t, n0 .. n0 + 7] from the three texels holding it (columns past P read the next
          // row, or the clamped last texel: never stored).
          const uint e = bv0 + row, q = e >> 2;
          const vec4 t0 = texelFetch(X, int(q));
          const vec4 t1 = texelFetch(X, int(min(q + 1u, last_texel)));
          const vec4 t2 = texelFetch(X, int(min(q + 2u, last_texel)));
          b0 = Shift4(t0, t1, e & 3u);
          b1 = Shift4(t1, t2, e & 3u);
        } else {
          [[unroll]] for (uint j = 0; j < 4; ++j) {
            b0[j] = Fetch(X, bcol[j] + row);
            b1[j] = Fetch(X, bcol[j + 4] + row);
          }
        }
        [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
          const float ai = by_subgroup ? SHUFFLE_ROW(v, i)[t] : a[i][t];
          acc[i][0] = fma(vec4(ai), b0, acc[i][0]);
          acc[i][1] = fma(vec4(ai), b1, acc[i][1]);
        }
      }
    }
  }
}

// MODE 2 / MODE 3: C[z] (M x P) = A[z] (M x K) @ B[z] (K x P), A = W (batched in MODE 3 only),
// B = X, C = Y; M = p.O, K = p.C, P = p.OH * p.OW, z = gl_WorkGroupID.z.
void GemmMain() {
  const uint M = p.O, K = p.C, P = p.OH * p.OW;
  // Invocations walk the (row block, column block) grid row-major, so that narrow outputs
  // (few column blocks, e.g. the 16 Winograd tiles of a 7x7 image) still fill whole workgroups.
  const uint col_blocks = (P + CONV_BN - 1) / CONV_BN;
  const uint id = gl_GlobalInvocationID.x;
  const uint m0 = (id / col_blocks) * CONV_BM;
  const uint n0 = (id % col_blocks) * CONV_BN;
  // The subgroup's lanes are the consecutive ids id - lane .. id - lane + SG - 1 (SG = 0 outside
  // the "+sg" variant).
  const uint lane = SUBGROUP_LANE, first = id - lane;
  const bool shared_rows =
      SUBGROUP_VARIANT && SG != 0 && first / col_blocks == (first + SG - 1) / col_blocks;
  if (m0 >= M) return;  // with shared_rows: the whole subgroup
  const uint z = gl_WorkGroupID.z;
  const uint a_base = MODE == MODE_WINO_GEMM ? z * M * K : 0u;
  // B row stride: P, or P rounded up to 4 for the im2col workspace (always vec4-loadable).
  const uint ldb = MODE == MODE_IM2COL_GEMM ? (P + 3) & ~3u : P;
  const bool vec4_b = STORE4 != 0 || MODE == MODE_IM2COL_GEMM;
  const uint b_base = z * K * ldb;
  uint arow[CONV_BM];  // element index of A[z, m, 0] (rows clamped to M - 1)
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) arow[i] = a_base + min(m0 + i, M - 1) * K;
  uint lrow[SG_ROWS];  // shared_rows: this lane's rows m0 + r * SG + lane (clamped)
  [[unroll]] for (uint r = 0; r < SG_ROWS; ++r) lrow[r] = a_base + min(m0 + r * max(SG, 1u) + lane, M - 1) * K;
  uint bcol[CONV_BN];  // element index of B[z, 0, n] (columns clamped to P - 1)
  [[unroll]] for (uint j = 0; j < CONV_BN; ++j) bcol[j] = b_base + min(n0 + j, P - 1);
  // vec4 columns n0..n0+3 and n0+4..n0+7 (the second clamped for P % 8 == 4).
  const uint bv0 = b_base + n0, bv1 = b_base + min(n0 + 4, ldb - 4);

  vec4 acc[CONV_BM][2];
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  const uint last_texel = (p.N * K * ldb + 3u) / 4u - 1u;  // XU4: X's last (partial) texel
  if (shared_rows)
    GemmK(true, arow, lrow, K, ldb, vec4_b, bv0, bv1, bcol, last_texel, acc);
  else
    GemmK(false, arow, lrow, K, ldb, vec4_b, bv0, bv1, bcol, last_texel, acc);
  if (MODE == MODE_WINO_GEMM) {
    [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
      const uint m = m0 + i;
      if (m >= M) continue;
      const uint c = (z * M + m) * P + n0;
      if (n0 + 8 <= P) {  // P = Tp is a multiple of 4
        Y4[c >> 2] = OUT_T4(acc[i][0]);
        Y4[(c >> 2) + 1] = OUT_T4(acc[i][1]);
      } else {
        Y4[c >> 2] = OUT_T4(acc[i][0]);
      }
    }
    return;
  }
  bool ok[CONV_BM];
  uint row[CONV_BM];
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
    const uint m = m0 + i;
    ok[i] = m < M;
    row[i] = (z * M + m) * P;
    const float b = ok[i] ? BiasOf(m) : 0.0;
    acc[i][0] += b;
    acc[i][1] += b;
  }
  EPILOGUE_ROWS8(acc, CONV_BM, ok, row, n0, P)
}

// Winograd transforms of one 1-D line (rows, then columns of a tile).
// F(2,3): B^T d (4 -> 4) and A^T m (4 -> 2).
void InputLine2(inout float d[6]) {
  const float r0 = d[0] - d[2], r1 = d[1] + d[2], r2 = d[2] - d[1], r3 = d[1] - d[3];
  d[0] = r0;
  d[1] = r1;
  d[2] = r2;
  d[3] = r3;
}
// F(4,3): B^T d (6 -> 6) and A^T m (6 -> 4).
void InputLine4(inout float d[6]) {
  const float r0 = d[0] + 1.5 * (d[3] - d[1]) - 2.0 * d[2] + d[4];
  const float r1 = d[1] - 2.5 * d[2] + 0.5 * d[3] + d[4];
  const float r2 = 0.5 * d[2] - d[1] + 2.5 * d[3] + d[4];
  const float r3 = 2.0 * (d[3] - d[1]) - d[2] + d[4];
  const float r4 = 0.5 * (d[1] - d[3]) - d[2] + d[4];
  const float r5 = d[1] - 1.5 * d[2] - 2.0 * d[3] + 1.5 * d[4] + d[5];
  d[0] = r0;
  d[1] = r1;
  d[2] = r2;
  d[3] = r3;
  d[4] = r4;
  d[5] = r5;
}
void OutputLine(inout float m[6]) {
  if (WINO_F == 2) {
    const float r0 = m[0] + m[1] + m[2], r1 = m[1] - m[2] - m[3];
    m[0] = r0;
    m[1] = r1;
  } else {
    const float s12 = m[1] + m[2], d21 = m[2] - m[1];
    const float r0 = m[0] + s12 + m[3] + m[4];
    const float r1 = d21 + 0.5 * m[3] - 2.0 * m[4];
    const float r2 = s12 + 0.25 * m[3] + 4.0 * m[4];
    m[3] = d21 + 0.125 * m[3] - 8.0 * m[4] + m[5];
    m[0] = r0;
    m[1] = r1;
    m[2] = r2;
  }
}

// MODE 1: one invocation per (tile t, channel c).
void WinoInputMain() {
  const uint F = WINO_F, S = WINO_F + 2;  // output tile F x F, input patch S x S
  const uint TH = (p.OH + F - 1) / F, TW = (p.OW + F - 1) / F;
  const uint T = p.N * TH * TW, Tp = (T + 3) & ~3u;
  // (c, t) pairs row-major over the 1-D grid: few tiles (a 7x7 image: 16) still fill workgroups.
  const uint gid = LinearId();
  if (gid >= p.C * Tp) return;
  const uint c = gid / Tp, t = gid % Tp;
  float d[6][6];
  const uint n = t / (TH * TW), r = t % (TH * TW);
  const int ih0 = int((r / TW) * F) - int(p.pt), iw0 = int((r % TW) * F) - int(p.pl);
  const uint xbase = (n * p.C + c) * p.H * p.W;
  [[unroll]] for (uint i = 0; i < S; ++i) {
    [[unroll]] for (uint j = 0; j < S; ++j) {
      const int ih = ih0 + int(i), iw = iw0 + int(j);
      const bool ok = t < T && uint(ih) < p.H && uint(iw) < p.W;  // zeros for t >= T
      const float v = Fetch(X, ok ? xbase + uint(ih) * p.W + uint(iw) : 0u);
      d[i][j] = ok ? v : 0.0;
    }
  }
  // Rows (B^T applied to each column of d), then columns.
  [[unroll]] for (uint j = 0; j < S; ++j) {
    float line[6];
    [[unroll]] for (uint i = 0; i < S; ++i) line[i] = d[i][j];
    if (F == 2) InputLine2(line); else InputLine4(line);
    [[unroll]] for (uint i = 0; i < S; ++i) d[i][j] = line[i];
  }
  const uint plane = p.C * Tp, base = c * Tp + t;
  [[unroll]] for (uint i = 0; i < S; ++i) {
    if (F == 2) InputLine2(d[i]); else InputLine4(d[i]);
    [[unroll]] for (uint j = 0; j < S; ++j) Y[base + (i * S + j) * plane] = OUT_T(d[i][j]);
  }
}

// MODE 4: one invocation per (tile t, output channel o).
void WinoOutputMain() {
  const uint F = WINO_F, S = WINO_F + 2;
  const uint TH = (p.OH + F - 1) / F, TW = (p.OW + F - 1) / F;
  const uint T = p.N * TH * TW, Tp = (T + 3) & ~3u;
  const uint gid = LinearId();  // (o, t) pairs row-major, as the input transform
  if (gid >= p.O * T) return;
  const uint o = gid / T, t = gid % T;
  const uint plane = p.O * Tp, base = o * Tp + t;
  float m[6][6];
  [[unroll]] for (uint i = 0; i < S; ++i) {
    [[unroll]] for (uint j = 0; j < S; ++j) m[i][j] = Fetch(X, base + (i * S + j) * plane);
  }
  [[unroll]] for (uint j = 0; j < S; ++j) {  // A^T m: columns
    float line[6];
    [[unroll]] for (uint i = 0; i < S; ++i) line[i] = m[i][j];
    OutputLine(line);
    [[unroll]] for (uint i = 0; i < F; ++i) m[i][j] = line[i];
  }
  const float b = BiasOf(o);
  const uint n = t / (TH * TW), rt = t % (TH * TW);
  const uint oh0 = (rt / TW) * F, ow0 = (rt % TW) * F;
  const uint ybase = (n * p.O + o) * p.OH * p.OW;
  [[unroll]] for (uint i = 0; i < F; ++i) {
    OutputLine(m[i]);  // (A^T m) A: rows
    [[unroll]] for (uint j = 0; j < F; ++j) {
      const uint e = ybase + (oh0 + i) * p.OW + ow0 + j;
      m[i][j] += b;
      if (oh0 + i < p.OH && ow0 + j < p.OW) m[i][j] = Residual(m[i][j], e);
    }
  }
  ACT_GRID(m, F, F)
  [[unroll]] for (uint i = 0; i < F; ++i) {
    [[unroll]] for (uint j = 0; j < F; ++j) {
      const uint e = ybase + (oh0 + i) * p.OW + ow0 + j;
      if (oh0 + i < p.OH && ow0 + j < p.OW) Y[e] = OUT_T(m[i][j]);
    }
  }
}

// MODE 5: one invocation per (DW_R x DW_C output block, image-channel plane = gl_WorkGroupID.y).
// Input rows are fetched once per block and reused by every output row and kernel column.
void DepthwiseMain() {
  const uint KS = DW_K, S = DW_S, L = (DW_C - 1) * DW_S + DW_K;  // input columns per row
  const uint bw = (p.OW + DW_C - 1) / DW_C, bh = (p.OH + DW_R - 1) / DW_R;
  // Invocations walk the (plane, block) pairs row-major: a small image (7x7: 4 blocks) still
  // fills whole workgroups with the blocks of consecutive channels.
  const uint gid = LinearId();
  if (gid >= p.N * p.C * bh * bw) return;
  const uint plane = gid / (bh * bw), id = gid % (bh * bw), c = plane % p.C;
  const uint oh0 = (id / bw) * DW_R, ow0 = (id % bw) * DW_C;
  const int ih0 = int(oh0 * S) - int(p.pt), iw0 = int(ow0 * S) - int(p.pl);
  float wt[25];
  [[unroll]] for (uint k = 0; k < KS * KS; ++k) wt[k] = Fetch(Wt, c * KS * KS + k);
  bool colok[20];
  [[unroll]] for (uint j = 0; j < L; ++j) colok[j] = uint(iw0 + int(j)) < p.W;
  float acc[DW_R][DW_C];
  [[unroll]] for (uint r = 0; r < DW_R; ++r) [[unroll]] for (uint j = 0; j < DW_C; ++j) acc[r][j] = 0.0;
  const uint xbase = plane * p.H * p.W;
  [[unroll]] for (uint ir = 0; ir < (DW_R - 1) * DW_S + DW_K; ++ir) {
    const int ih = ih0 + int(ir);
    const bool rowok = uint(ih) < p.H;
    const int rbase = int(xbase) + ih * int(p.W) + iw0;
    float xr[20];
    if (DW_XVEC4 != 0) {
      // Columns iw0 + j, j < L, from the vec4 texels starting at column a0 = iw0 - DW_OFF (a
      // multiple of 4: ow0 * S is a multiple of 8 and DW_OFF = (-pl) mod 4). As W % 4 == 0, a
      // texel lies wholly inside the row or wholly outside it (zeros).
      vec4 xv[6];
      const int a0 = iw0 - int(DW_OFF);
      [[unroll]] for (uint t = 0; t < (DW_OFF + L + 3) / 4; ++t) {
        const int col = a0 + int(4 * t);
        const bool ok = rowok && col >= 0 && col < int(p.W);
        const vec4 v = texelFetch(X, ok ? (rbase - int(DW_OFF) + int(4 * t)) >> 2 : 0);
        xv[t] = ok ? v : vec4(0.0);
      }
      [[unroll]] for (uint j = 0; j < L; ++j) xr[j] = xv[(DW_OFF + j) / 4][(DW_OFF + j) % 4];
    } else {
      [[unroll]] for (uint j = 0; j < L; ++j) {
        const bool ok = rowok && colok[j];
        const float v = texelFetch(X, ok ? rbase + int(j) : 0).x;
        xr[j] = ok ? v : 0.0;
      }
    }
    [[unroll]] for (uint r = 0; r < DW_R; ++r) {
      if (ir >= r * S && ir < r * S + KS) {
        const uint kh = ir - r * S;
        [[unroll]] for (uint kw = 0; kw < KS; ++kw) {
          const float wv = wt[kh * KS + kw];
          [[unroll]] for (uint j = 0; j < DW_C; ++j) acc[r][j] = fma(wv, xr[j * S + kw], acc[r][j]);
        }
      }
    }
  }
  const float b = BiasOf(c);
  vec4 v[DW_R][2];
  bool ok[DW_R];
  uint row[DW_R];
  [[unroll]] for (uint r = 0; r < DW_R; ++r) {
    v[r][0] = vec4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]) + b;
    v[r][1] = vec4(acc[r][4], acc[r][5], acc[r][6], acc[r][7]) + b;
    ok[r] = oh0 + r < p.OH;
    row[r] = (plane * p.OH + oh0 + r) * p.OW;
  }
  EPILOGUE_ROWS8(v, DW_R, ok, row, ow0, p.OW)
}

// MODE 6: im2col. B[n, k, p] = X[n, c, oh*sh - pt + kh*dh, ow*sw - pl + kw*dw] (0 outside, and
// for the padding columns p >= P and rows k >= K), k = (c*KH + kh)*KW + kw, p = oh*OW + ow; B is
// [N, Kp, Pp], Kp = gl_NumWorkGroups.y (K, or K rounded up to 4 for zero-padded constant
// weights), Pp = P rounded up to 4. One invocation per (8 consecutive p, k = workgroup y,
// n = workgroup z).
void Im2colMain() {
  const uint P = p.OH * p.OW, Pp = (P + 3) & ~3u, K = p.C * p.KH * p.KW;
  const uint Kp = WVEC4 != 0 ? (K + 3) & ~3u : K;  // rows k >= K are zeros
  // (k, 8-column block) pairs row-major over the 1-D grid: a small output (7x7: 7 blocks) still
  // fills whole workgroups with the blocks of consecutive rows.
  const uint cb = (Pp + 7) / 8, gid = LinearId();
  if (gid >= Kp * cb) return;
  const uint k = gid / cb, p0 = (gid % cb) * 8, n = gl_WorkGroupID.z;
  const uint c = k / (p.KH * p.KW), kr = k % (p.KH * p.KW);
  const int dy = int((kr / p.KW) * p.dh) - int(p.pt), dx = int((kr % p.KW) * p.dw) - int(p.pl);
  const uint xbase = (n * p.C + c) * p.H * p.W;
  uint oh = p0 / p.OW, ow = p0 % p.OW;
  float v[8];
  [[unroll]] for (uint j = 0; j < 8; ++j) {
    const int ih = int(oh * p.sh) + dy, iw = int(ow * p.sw) + dx;
    const bool ok = k < K && p0 + j < P && uint(ih) < p.H && uint(iw) < p.W;
    const float x = Fetch(X, ok ? xbase + uint(ih) * p.W + uint(iw) : 0u);
    v[j] = ok ? x : 0.0;
    const bool wrap = ++ow == p.OW;
    ow = wrap ? 0u : ow;
    oh += wrap ? 1u : 0u;
  }
  const uint e = ((n * Kp + k) * Pp + p0) >> 2;
  Y4[e] = OUT_T4(vec4(v[0], v[1], v[2], v[3]));
  if (p0 + 4 < Pp) Y4[e + 1] = OUT_T4(vec4(v[4], v[5], v[6], v[7]));
}

void main() {
  if (MODE == MODE_IM2COL) {
    Im2colMain();
    return;
  }
  if (MODE == MODE_DEPTHWISE) {
    DepthwiseMain();
    return;
  }
  if (MODE == MODE_GEMM1X1 || MODE == MODE_WINO_GEMM || MODE == MODE_IM2COL_GEMM) {
    GemmMain();
    return;
  }
  if (MODE == MODE_WINO_INPUT) {
    WinoInputMain();
    return;
  }
  if (MODE == MODE_WINO_OUTPUT) {
    WinoOutputMain();
    return;
  }
  const uint ohw = p.OH * p.OW;
  const uint Cg = p.C / p.groups, Og = p.O / p.groups;
  const uint blocks = (Og + CONV_BM - 1) / CONV_BM;
  // (channel block, pixel block) pairs row-major over the 1-D grid (LinearId): a small image
  // (7x7: 7 pixel blocks) still fills whole workgroups with several channel blocks.
  const uint pixel_blocks = (ohw + CONV_BN - 1) / CONV_BN, gid = LinearId();
  if (gid >= p.groups * blocks * pixel_blocks) return;
  const uint yb = gid / pixel_blocks, p0 = (gid % pixel_blocks) * CONV_BN;
  const uint g = yb / blocks;
  const uint o0 = (yb % blocks) * CONV_BM;
  const uint n = gl_WorkGroupID.z;
  const uint hw = p.H * p.W;

  int ih0[CONV_BN], iw0[CONV_BN];
  [[unroll]] for (uint j = 0; j < CONV_BN; ++j) {
    const uint pix = min(p0 + j, ohw - 1);
    ih0[j] = int((pix / p.OW) * p.sh) - int(p.pt);
    iw0[j] = int((pix % p.OW) * p.sw) - int(p.pl);
  }
  const uint xbase = (n * p.C + g * Cg) * hw;

  if (DEPTHWISE != 0) {
    vec4 acc0 = vec4(0.0), acc1 = vec4(0.0);
    uint widx = g * p.KH * p.KW;
    for (uint kh = 0; kh < p.KH; ++kh) {
      for (uint kw = 0; kw < p.KW; ++kw) {
        const float w = Fetch(Wt, widx++);
        vec4 x0, x1;
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          const int ih = ih0[j] + int(kh * p.dh), iw = iw0[j] + int(kw * p.dw);
          const bool ok = uint(ih) < p.H && uint(iw) < p.W;
          const float v = Fetch(X, ok ? xbase + uint(ih) * p.W + uint(iw) : 0u);
          x0[j] = ok ? v : 0.0;
          const int ih1 = ih0[j + 4] + int(kh * p.dh), iw1 = iw0[j + 4] + int(kw * p.dw);
          const bool ok1 = uint(ih1) < p.H && uint(iw1) < p.W;
          const float v1 = Fetch(X, ok1 ? xbase + uint(ih1) * p.W + uint(iw1) : 0u);
          x1[j] = ok1 ? v1 : 0.0;
        }
        acc0 = fma(vec4(w), x0, acc0);
        acc1 = fma(vec4(w), x1, acc1);
      }
    }
#ifdef HAS_BIAS
    const float b = Fetch(Bias, g);
    acc0 += b;
    acc1 += b;
#endif
    vec4 v[1][2] = {{acc0, acc1}};
    const bool ok[1] = {true};
    const uint row[1] = {(n * p.O + g) * ohw};
    EPILOGUE_ROWS8(v, 1, ok, row, p0, ohw)
    return;
  }

  int pbase[CONV_BN];  // ih0 * W + iw0: element offset of each pixel's window origin in a channel
  [[unroll]] for (uint j = 0; j < CONV_BN; ++j) pbase[j] = ih0[j] * int(p.W) + iw0[j];
  const uint kdim = Cg * p.KH * p.KW;
  uint wrow[CONV_BM];  // element index of W[o, 0, 0, 0] (channels clamped to the group)
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) wrow[i] = (g * Og + min(o0 + i, Og - 1)) * kdim;

  vec4 acc[CONV_BM][2];
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  uint c = 0, kh = 0, kw = 0;  // decoded k = (c * KH + kh) * KW + kw
  for (uint k = 0; k < kdim; k += 4) {
    vec4 w[CONV_BM];
    if (WVEC4 != 0) {
      [[unroll]] for (uint i = 0; i < CONV_BM; ++i) w[i] = texelFetch(Wt, int((wrow[i] + k) >> 2));
    } else {
      // Past the end of kdim the weights are never used (the t loop below skips those k).
      [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
        [[unroll]] for (uint t = 0; t < 4; ++t) w[i][t] = Fetch(Wt, wrow[i] + min(k + t, kdim - 1));
      }
    }
    [[unroll]] for (uint t = 0; t < 4; ++t) {
      if (WVEC4 != 0 || k + t < kdim) {  // kdim % 4 == 0 with WVEC4: no tail
        const int dy = int(kh * p.dh), dx = int(kw * p.dw);
        const int koff = int(xbase + c * hw) + dy * int(p.W) + dx;
        vec4 x0, x1;
        [[unroll]] for (uint j = 0; j < 4; ++j) {
          const bool ok = uint(ih0[j] + dy) < p.H && uint(iw0[j] + dx) < p.W;
          const float v = texelFetch(X, ok ? pbase[j] + koff : 0).x;
          x0[j] = ok ? v : 0.0;
          const bool ok1 = uint(ih0[j + 4] + dy) < p.H && uint(iw0[j + 4] + dx) < p.W;
          const float v1 = texelFetch(X, ok1 ? pbase[j + 4] + koff : 0).x;
          x1[j] = ok1 ? v1 : 0.0;
        }
        [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
          acc[i][0] = fma(vec4(w[i][t]), x0, acc[i][0]);
          acc[i][1] = fma(vec4(w[i][t]), x1, acc[i][1]);
        }
        // Advance (c, kh, kw) without branches (cheaper under SIMD execution masks).
        const bool wrap_w = ++kw == p.KW;
        kw = wrap_w ? 0u : kw;
        kh += wrap_w ? 1u : 0u;
        const bool wrap_h = kh == p.KH;
        kh = wrap_h ? 0u : kh;
        c += wrap_h ? 1u : 0u;
      }
    }
  }

  bool ok[CONV_BM];
  uint row[CONV_BM];
  [[unroll]] for (uint i = 0; i < CONV_BM; ++i) {
    ok[i] = o0 + i < Og;
    const uint o = g * Og + o0 + i;
    row[i] = (n * p.O + o) * ohw;
#ifdef HAS_BIAS
    const float b = ok[i] ? Fetch(Bias, o) : 0.0;
    acc[i][0] += b;
    acc[i][1] += b;
#endif
  }
  EPILOGUE_ROWS8(acc, CONV_BM, ok, row, p0, ohw)
}
