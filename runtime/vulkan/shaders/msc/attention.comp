// msc.attention: fused scaled-dot-product attention (relax.nn.attention[_bias] as legalized by
// TVM, python/tvm/relax/transform/legalize_ops/nn.py _te_attention), in one pass over the keys
// with the online softmax of Milakov & Gimelshein 2018 ("Online normalizer calculation for
// softmax"), as FlashAttention (Dao et al. 2022) does:
//   s_j = scale * <q[b, i, n, :], k[b, j, n, :]> + mask[b, n, i, j]        j < Skv
//   causal: keys j > i + offset are dropped (np.tril(S, offset))
//   O[b, i, n, :] = sum_j softmax_j(s)_j * v[b, j, n, :]
// q, k, v, O are addressed through element strides per relax dim (b, s, n, h) (q, k, v from an
// element offset), so any input permutation (MSC's axes attrs) or strided view (a qkv split
// read in place) costs nothing; the mask through strides per (b, n, i, j), 0 for
// broadcast dims.
//
// Two schedules (spec constant ROWS, chosen by the host like the GEMM variant):
// ROWS = 0 (GPUs): one workgroup (64 lanes) per query row (b, n, i), grid folded as
// (x + y * gx) over B*N*Sq. Keys go in chunks of 64, one per lane: the lane computes s_j, the
// chunk maximum and the probabilities are exchanged through shared memory, then each lane
// accumulates O for output dims h = lane + 64 t (t < 4) of the current block of 256 (blocks loop
// when Hv > 256).
// ROWS = 1 (CPU devices): RowsMain() below, one invocation per (row, 64 output dims), no shared
// memory; grid folded by LinearId() over B*N*Sq*ceil(Hv / 64).
// Both use the same update per step of keys:
//   m' = max(m, max_step s), alpha = exp(m - m'), l = l * alpha + sum_step exp(s_j - m'),
//   acc = acc * alpha + sum_step exp(s_j - m') v_j;   O = acc / l at the end.
// Fully masked (-inf) scores get probability 0; a row with every score -inf gives 0/0 = NaN,
// as softmax does.
// Bindings: 0 Q, 1 K, 2 V (texel; vec4 views with QK4 / V4), 3 Mask (texel float; Q again when
// HAS_MASK = 0), 4 O (storage).
// msc_vk:variants f16
#version 450
#include "common/util.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint HAS_MASK = 0;
layout(constant_id = 1) const uint ROWS = 0;  // 1: RowsMain() (CPU devices), 0: one workgroup per row
layout(constant_id = 2) const uint QK4 = 0;   // RowsMain: vec4 views of Q and K
layout(constant_id = 3) const uint V4 = 0;    // RowsMain: vec4 view of V

layout(set = 0, binding = 0) uniform samplerBuffer Q;
layout(set = 0, binding = 1) uniform samplerBuffer K;
layout(set = 0, binding = 2) uniform samplerBuffer V;
layout(set = 0, binding = 3) uniform samplerBuffer Mask;
layout(std430, set = 0, binding = 4) writeonly buffer BufO { OUT_T O[]; };

layout(push_constant) uniform Push {
  uint B, N, Sq, Skv, H, Hv;
  uint qs[4], ks[4], vs[4], os[4];  // element strides of dims (b, s, n, h)
  uint ms[4];                       // mask strides of (b, n, i, j), 0 = broadcast
  float scale;
  uint causal;  // 1: keys j <= i + offset only
  uint offset;
  uint qo, ko, vo;  // element offsets of q, k, v in their bindings (strided views)
} p;

#define CHUNK 64
#define HV_BLOCK 256  // 4 output dims per lane

shared float chunk[CHUNK];

#define ROW_HV 64  // output dims per invocation in RowsMain()
#define ROW_KB 8   // keys per online-softmax step in RowsMain()

// q . k_j over H (RowsMain); QK4: vec4 views of Q and K (H % 4 == 0, h contiguous in both).
float Dot(uint qbase, uint kj) {
  if (QK4 != 0) {
    vec4 acc = vec4(0.0);
    for (uint h = 0; h < p.H; h += 4) acc = fma(texelFetch(Q, int((qbase + h) >> 2)), texelFetch(K, int((kj + h) >> 2)), acc);
    return (acc.x + acc.y) + (acc.z + acc.w);
  }
  float acc = 0.0;
  for (uint h = 0; h < p.H; ++h) acc = fma(Fetch(Q, qbase + h * p.qs[3]), Fetch(K, kj + h * p.ks[3]), acc);
  return acc;
}

// ROWS = 1: one invocation per (query row, block of ROW_HV output dims), no shared memory and no
// barriers (on CPU devices both cost more than the arithmetic). Consecutive lanes take
// consecutive query rows of the same (b, n), so their K / V fetches hit the same addresses.
// Keys go ROW_KB at a time: scores, then one rescale of the accumulators per step.
// V4: vec4 view of V (Hv % 4 == 0, h contiguous).
void RowsMain() {
  const uint id = LinearId();
  const uint rows = p.B * p.N * p.Sq;
  if (id >= rows * ((p.Hv + ROW_HV - 1) / ROW_HV)) return;
  const uint row = id % rows, hv0 = (id / rows) * ROW_HV;
  const uint i = row % p.Sq, bn = row / p.Sq;
  const uint n = bn % p.N, b = bn / p.N;
  const uint qbase = p.qo + b * p.qs[0] + i * p.qs[1] + n * p.qs[2];
  const uint kbase = p.ko + b * p.ks[0] + n * p.ks[2];
  const uint vbase = p.vo + b * p.vs[0] + n * p.vs[2] + hv0 * p.vs[3];
  const uint mbase = b * p.ms[0] + n * p.ms[1] + i * p.ms[2];
  const uint jend = p.causal != 0 ? min(p.Skv, i + p.offset + 1) : p.Skv;
  const uint hn = min(uint(ROW_HV), p.Hv - hv0);
  const float NEG_INF = -1.0 / 0.0;
  float m = NEG_INF, l = 0.0;
  vec4 acc[ROW_HV / 4];
  [[unroll]] for (uint t = 0; t < ROW_HV / 4; ++t) acc[t] = vec4(0.0);
  for (uint j0 = 0; j0 < jend; j0 += ROW_KB) {
    float s[ROW_KB];
    float smax = NEG_INF;
    [[unroll]] for (uint u = 0; u < ROW_KB; ++u) {
      const uint j = j0 + u;
      s[u] = NEG_INF;
      if (j < jend) {
        s[u] = Dot(qbase, kbase + j * p.ks[1]) * p.scale;
        if (HAS_MASK != 0) s[u] += Fetch(Mask, mbase + j * p.ms[3]);
      }
      smax = max(smax, s[u]);
    }
    const float m_new = max(m, smax);
    const float alpha = m == NEG_INF ? 0.0 : exp(m - m_new);
    l *= alpha;
    [[unroll]] for (uint t = 0; t < ROW_HV / 4; ++t) acc[t] *= alpha;
    [[unroll]] for (uint u = 0; u < ROW_KB; ++u) {
      const float pj = s[u] == NEG_INF ? 0.0 : exp(s[u] - m_new);
      if (pj != 0.0) {  // also: no fetch for keys past jend
        l += pj;
        const uint vrow = vbase + (j0 + u) * p.vs[1];
        [[unroll]] for (uint t = 0; t < ROW_HV / 4; ++t) {
          if (4 * t < hn) {
            vec4 v;
            if (V4 != 0) {
              v = texelFetch(V, int((vrow >> 2) + t));
            } else {
              [[unroll]] for (uint c = 0; c < 4; ++c) v[c] = Fetch(V, vrow + min(4 * t + c, hn - 1) * p.vs[3]);
            }
            acc[t] = fma(vec4(pj), v, acc[t]);
          }
        }
      }
    }
    m = m_new;
  }
  const uint obase = b * p.os[0] + i * p.os[1] + n * p.os[2] + hv0 * p.os[3];
  [[unroll]] for (uint t = 0; t < ROW_HV; ++t) {
    if (t < hn) O[obase + t * p.os[3]] = OUT_T(acc[t / 4][t % 4] / l);
  }
}

void main() {
  if (ROWS != 0) {
    RowsMain();
    return;
  }
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (row >= p.B * p.N * p.Sq) return;  // uniform per workgroup
  const uint lane = gl_LocalInvocationID.x;
  const uint i = row % p.Sq, bn = row / p.Sq;
  const uint n = bn % p.N, b = bn / p.N;
  const uint qbase = p.qo + b * p.qs[0] + i * p.qs[1] + n * p.qs[2];
  const uint kbase = p.ko + b * p.ks[0] + n * p.ks[2];
  const uint vbase = p.vo + b * p.vs[0] + n * p.vs[2];
  const uint obase = b * p.os[0] + i * p.os[1] + n * p.os[2];
  const uint mbase = b * p.ms[0] + n * p.ms[1] + i * p.ms[2];
  const uint jend = p.causal != 0 ? min(p.Skv, i + p.offset + 1) : p.Skv;
  const float NEG_INF = -1.0 / 0.0;

  for (uint hv0 = 0; hv0 < p.Hv; hv0 += HV_BLOCK) {
    const uint tn = min(4u, (p.Hv - hv0 + CHUNK - 1) / CHUNK);  // output dims per lane (uniform)
    float m = NEG_INF, l = 0.0;
    float acc[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint j0 = 0; j0 < jend; j0 += CHUNK) {
      const uint j = j0 + lane;
      float s = NEG_INF;
      if (j < jend) {
        const uint kj = kbase + j * p.ks[1];
        float dot = 0.0;
        for (uint h = 0; h < p.H; ++h) dot = fma(Fetch(Q, qbase + h * p.qs[3]), Fetch(K, kj + h * p.ks[3]), dot);
        s = dot * p.scale;
        if (HAS_MASK != 0) s += Fetch(Mask, mbase + j * p.ms[3]);
      }
      chunk[lane] = s;
      barrier();
      float cmax = NEG_INF;
      for (uint jj = 0; jj < CHUNK; ++jj) cmax = max(cmax, chunk[jj]);
      const float m_new = max(m, cmax);
      barrier();
      chunk[lane] = s == NEG_INF ? 0.0 : exp(s - m_new);
      barrier();
      const float alpha = m == NEG_INF ? 0.0 : exp(m - m_new);
      [[unroll]] for (uint t = 0; t < 4; ++t) acc[t] *= alpha;
      float psum = 0.0;
      const uint nj = min(uint(CHUNK), jend - j0);
      for (uint jj = 0; jj < nj; ++jj) {
        const float pj = chunk[jj];
        psum += pj;
        const uint vrow = vbase + (j0 + jj) * p.vs[1];
        [[unroll]] for (uint t = 0; t < 4; ++t) {
          const uint h = hv0 + lane + CHUNK * t;
          if (t < tn && h < p.Hv) acc[t] = fma(pj, Fetch(V, vrow + h * p.vs[3]), acc[t]);
        }
      }
      l = l * alpha + psum;
      m = m_new;
      barrier();  // chunk[] is rewritten by the next iteration
    }
    [[unroll]] for (uint t = 0; t < 4; ++t) {
      const uint h = hv0 + lane + CHUNK * t;
      if (t < tn && h < p.Hv) O[obase + h * p.os[3]] = OUT_T(acc[t] / l);
    }
  }
}
