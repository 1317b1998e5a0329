// Numerical tests of the ops in runtime/vulkan/ops_nn_ext.h (attention, einsum, normalization,
// reductions, 1-D conv/pool, transposed conv, resize2d, pad) against CPU references written
// here (double accumulation, straight from the formulas in the header comments / TOPI).
// Every test runs under the validated contexts of test_util.h and checks the dispatch count.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;
using Vec = std::vector<float>;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

std::vector<int64_t> Unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> c(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

int64_t Ravel(const std::vector<int64_t>& c, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

// Runs `add` (recording kernels) on a fresh program of `ctx`; checks the dispatch count.
template <class F>
void RunProgram(msc_vk::Context& ctx, size_t dispatches, F&& add) {
  msc_vk::Program p(ctx);
  add(p);
  CHECK(p.num_dispatches() == dispatches);
  p.Run();
}

// ---- attention reference ------------------------------------------------------------------

struct AttnCase {
  std::string name;
  int64_t B, N, Sq, Skv, H, Hv;
  Shape mask;  // empty: no mask
  std::string causal;
  bool has_scale;
  float scale;
  std::array<int64_t, 4> q_axes, k_axes, v_axes, out_axes;
  bool inf_mask;  // put some -inf into the mask
};

// Stored shape of a relax [d0, d1, d2, d3] tensor permuted by `axes` (relax permute_dims takes
// stored -> relax: relax.shape[r] = stored.shape[axes[r]]).
Shape StoredShape(const std::array<int64_t, 4>& relax, const std::array<int64_t, 4>& axes) {
  Shape s(4);
  for (int r = 0; r < 4; ++r) s[axes[r]] = relax[r];
  return s;
}

// Element of a stored tensor at relax coordinates (b, s, n, h).
double AtRelax(const Vec& t, const Shape& stored, const std::array<int64_t, 4>& axes,
               std::array<int64_t, 4> rc) {
  std::vector<int64_t> c(4);
  for (int r = 0; r < 4; ++r) c[axes[r]] = rc[r];
  return t[Ravel(c, stored)];
}

Vec RefAttention(const AttnCase& c, const Vec& q, const Vec& k, const Vec& v, const Vec& mask,
                 Shape* ys) {
  const Shape qs = StoredShape({c.B, c.Sq, c.N, c.H}, c.q_axes);
  const Shape ks = StoredShape({c.B, c.Skv, c.N, c.H}, c.k_axes);
  const Shape vs = StoredShape({c.B, c.Skv, c.N, c.Hv}, c.v_axes);
  const std::array<int64_t, 4> o_relax = {c.B, c.Sq, c.N, c.Hv};
  ys->assign(4, 0);
  for (int d = 0; d < 4; ++d) (*ys)[d] = o_relax[c.out_axes[d]];
  Vec y(msc_vk::NumElements(*ys));
  const double scale = c.has_scale ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.H));
  const int64_t offset = c.causal == "BottomRight" ? std::llabs(c.Sq - c.Skv) : 0;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t i = 0; i < c.Sq; ++i) {
        std::vector<double> s(c.Skv, -std::numeric_limits<double>::infinity());
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < c.Skv; ++j) {
          if (!c.causal.empty() && j > i + offset) continue;
          double dot = 0;
          for (int64_t h = 0; h < c.H; ++h)
            dot += AtRelax(q, qs, c.q_axes, {b, i, n, h}) * AtRelax(k, ks, c.k_axes, {b, j, n, h});
          s[j] = dot * scale;
          if (!c.mask.empty()) {
            // numpy broadcast of the mask to [B, N, Sq, Skv].
            const int64_t full[4] = {b, n, i, j};
            std::vector<int64_t> mc(c.mask.size());
            for (size_t d = 0; d < c.mask.size(); ++d) {
              const size_t fd = 4 - c.mask.size() + d;
              mc[d] = c.mask[d] == 1 ? 0 : full[fd];
            }
            s[j] += mask[Ravel(mc, c.mask)];
          }
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (double& e : s) {
          e = std::isinf(e) && e < 0 ? 0.0 : std::exp(e - mx);
          sum += e;
        }
        for (int64_t h = 0; h < c.Hv; ++h) {
          double acc = 0;
          for (int64_t j = 0; j < c.Skv; ++j) acc += s[j] * AtRelax(v, vs, c.v_axes, {b, j, n, h});
          std::array<int64_t, 4> rc = {b, i, n, h};
          std::vector<int64_t> oc(4);
          for (int d = 0; d < 4; ++d) oc[d] = rc[c.out_axes[d]];
          y[Ravel(oc, *ys)] = static_cast<float>(acc / sum);
        }
      }
  return y;
}

void RunAttention(msc_vk::Context& ctx, const AttnCase& c, uint32_t seed) {
  INFO("attention case " << c.name);
  vkt::Arena ar(ctx);
  const Shape qs = StoredShape({c.B, c.Sq, c.N, c.H}, c.q_axes);
  const Shape ks = StoredShape({c.B, c.Skv, c.N, c.H}, c.k_axes);
  const Shape vs = StoredShape({c.B, c.Skv, c.N, c.Hv}, c.v_axes);
  const Vec qd = vkt::Random(msc_vk::NumElements(qs), seed, -2, 2);
  const Vec kd = vkt::Random(msc_vk::NumElements(ks), seed + 1, -2, 2);
  const Vec vd = vkt::Random(msc_vk::NumElements(vs), seed + 2);
  Vec md;
  if (!c.mask.empty()) {
    md = vkt::Random(msc_vk::NumElements(c.mask), seed + 3, -3, 1);
    if (c.inf_mask) {
      for (size_t i = 0; i < md.size(); i += 3) md[i] = -kInf;
      md[md.size() - 1] = 0.0f;  // keep the last key of every row
    }
  }
  Shape ys;
  const Vec expect = RefAttention(c, qd, kd, vd, md, &ys);
  Tensor q = ar.Input("q", qs, qd), k = ar.Input("k", ks, kd), v = ar.Input("v", vs, vd);
  Tensor y = ar.Alloc("attn", ys);
  Tensor m = c.mask.empty() ? Tensor{} : ar.Input("mask", c.mask, md);
  ops::AttentionAttrs a;
  a.q_axes = c.q_axes;
  a.k_axes = c.k_axes;
  a.v_axes = c.v_axes;
  a.out_axes = c.out_axes;
  a.has_scale = c.has_scale;
  a.scale = c.scale;
  a.causal_mask = c.causal;
  RunProgram(ctx, 1, [&](msc_vk::Program& p) {
    ops::Attention(p, q, k, v, c.mask.empty() ? nullptr : &m, y, a);
  });
  vkt::ExpectClose(ar.Read(y), expect, 2e-5, 1e-4, c.name);
  vkt::ExpectNoValidationMessages(ctx);
}

// ---- einsum reference (explicit subscripts, letters only) ---------------------------------

Vec RefEinsum(const std::string& eq, const std::vector<Vec>& xs, const std::vector<Shape>& shapes,
              Shape* ys) {
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  std::string cur;
  for (char ch : eq.substr(0, arrow)) {
    if (ch == ',') {
      terms.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(ch);
    }
  }
  terms.push_back(cur);
  const std::string out = eq.substr(arrow + 2);
  std::map<char, int64_t> ext;
  for (size_t k = 0; k < terms.size(); ++k)
    for (size_t d = 0; d < terms[k].size(); ++d)
      ext[terms[k][d]] = std::max(ext[terms[k][d]], shapes[k][d]);
  std::string labels;
  Shape lshape;
  for (const auto& kv : ext) {
    labels.push_back(kv.first);
    lshape.push_back(kv.second);
  }
  ys->clear();
  for (char ch : out) ys->push_back(ext[ch]);
  std::vector<double> acc(msc_vk::NumElements(*ys), 0.0);
  for (int64_t it = 0; it < msc_vk::NumElements(lshape); ++it) {
    const std::vector<int64_t> lc = Unravel(it, lshape);
    auto coord = [&](char ch) { return lc[labels.find(ch)]; };
    double v = 1;
    for (size_t k = 0; k < terms.size(); ++k) {
      std::vector<int64_t> c;
      for (size_t d = 0; d < terms[k].size(); ++d)
        c.push_back(shapes[k][d] == 1 ? 0 : coord(terms[k][d]));
      v *= xs[k][Ravel(c, shapes[k])];
    }
    std::vector<int64_t> oc;
    for (char ch : out) oc.push_back(coord(ch));
    acc[Ravel(oc, *ys)] += v;
  }
  return Vec(acc.begin(), acc.end());
}

// ---- reduction / normalization references ------------------------------------------------

// op: 0 sum 1 prod 2 max 3 min 4 mean 5 variance 6 std; output in row-major kept-dims order.
Vec RefReduce(int op, const Vec& x, const Shape& xs, const std::vector<bool>& red) {
  Shape ks;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (!red[d]) ks.push_back(xs[d]);
  }
  std::vector<std::vector<double>> groups(msc_vk::NumElements(ks));
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const std::vector<int64_t> c = Unravel(i, xs);
    std::vector<int64_t> kc;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (!red[d]) kc.push_back(c[d]);
    }
    groups[Ravel(kc, ks)].push_back(x[i]);
  }
  Vec y;
  for (const auto& g : groups) {
    double r = op == 1 ? 1.0 : (op == 2 ? -INFINITY : (op == 3 ? INFINITY : 0.0));
    double mean = 0;
    for (double v : g) mean += v;
    mean /= static_cast<double>(g.size());
    for (double v : g) {
      if (op == 0 || op == 4) r += v;
      if (op == 1) r *= v;
      if (op == 2) r = std::max(r, v);
      if (op == 3) r = std::min(r, v);
      if (op >= 5) r += (v - mean) * (v - mean);
    }
    if (op >= 4) r /= static_cast<double>(g.size());
    if (op == 6) r = std::sqrt(r);
    y.push_back(static_cast<float>(r));
  }
  return y;
}

// Normalizes groups of x: group(i) -> key, gidx(i) -> gamma/beta index (-1: none). rms: no
// centering.
Vec RefNormalize(const Vec& x, const Shape& xs,
                 const std::function<int64_t(const std::vector<int64_t>&)>& group,
                 const std::function<int64_t(const std::vector<int64_t>&)>& gidx, const Vec& gamma,
                 const Vec& beta, double eps, bool rms) {
  std::map<int64_t, std::vector<int64_t>> members;
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
    members[group(Unravel(i, xs))].push_back(i);
  Vec y(x.size());
  for (const auto& kv : members) {
    double mean = 0, var = 0;
    for (int64_t i : kv.second) mean += x[i];
    mean /= static_cast<double>(kv.second.size());
    if (rms) mean = 0;
    for (int64_t i : kv.second) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(kv.second.size());
    for (int64_t i : kv.second) {
      double v = (x[i] - mean) / std::sqrt(var + eps);
      const int64_t g = gidx(Unravel(i, xs));
      if (!gamma.empty()) v *= gamma[g];
      if (!beta.empty()) v += beta[g];
      y[i] = static_cast<float>(v);
    }
  }
  return y;
}

}  // namespace

// ============================================================================================

TEST_CASE("nn_ext: msc.attention (fused) matches the reference") {
  // name, {B, N, Sq, Skv, H, Hv}, mask shape, causal_mask; torch layout, scale 1/sqrt(H).
  auto make = [](const char* name, std::array<int64_t, 6> d, Shape mask = {},
                 std::string causal = "") {
    const std::array<int64_t, 4> torch_axes = {0, 2, 1, 3};
    return AttnCase{name,   d[0],  d[1], d[2],       d[3],       d[4],       d[5],       mask,
                    causal, false, 1.0f, torch_axes, torch_axes, torch_axes, torch_axes, false};
  };
  std::vector<AttnCase> cases = {
      make("basic (vec4 q/k, scalar v)", {2, 3, 5, 7, 8, 6}),
      make("4-D mask", {2, 2, 4, 9, 5, 5}, {2, 2, 4, 9}),
      make("broadcast mask [Sq, Skv] with -inf", {1, 3, 6, 6, 4, 4}, {6, 6}),
      make("broadcast mask [B, 1, 1, Skv]", {2, 2, 3, 5, 4, 4}, {2, 1, 1, 5}),
      make("causal TopLeft Sq < Skv", {1, 2, 4, 9, 8, 8}, {}, "TopLeft"),
      make("causal TopLeft Sq > Skv", {1, 2, 9, 4, 8, 8}, {}, "TopLeft"),
      make("causal BottomRight Sq < Skv", {1, 2, 4, 9, 8, 8}, {}, "BottomRight"),
      make("causal BottomRight Sq > Skv + mask", {1, 2, 9, 4, 8, 8}, {9, 4}, "BottomRight"),
      make("long keys (3 chunks), causal", {1, 2, 70, 150, 16, 16}, {}, "TopLeft"),
      make("relax layout (identity axes), Hv != H", {2, 3, 5, 66, 7, 13}),
      make("Hv > 256 (several output blocks)", {1, 1, 3, 70, 4, 300}),
      make("mixed permutations (h strided)", {2, 3, 4, 5, 8, 7}),
  };
  cases[1].has_scale = true;
  cases[1].scale = 0.3f;
  cases[2].inf_mask = true;
  cases[9].q_axes = cases[9].k_axes = cases[9].v_axes = cases[9].out_axes = {0, 1, 2, 3};
  cases[11].q_axes = {2, 0, 3, 1};
  cases[11].k_axes = {1, 3, 0, 2};
  cases[11].v_axes = {0, 1, 2, 3};
  cases[11].out_axes = {3, 2, 1, 0};
  // Ctx(): the CPU schedule (one invocation per row); StagingCtx(): the GPU schedule (one
  // workgroup per row, shared memory).
  for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    uint32_t seed = 100;
    for (const AttnCase& c : cases) RunAttention(*ctx, c, seed += 10);
  }
}

TEST_CASE("nn_ext: msc.attention rejects bad shapes and attrs") {
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor q = ar.Alloc("q", {1, 2, 4, 8}), k = ar.Alloc("k", {1, 2, 6, 8});
  Tensor v = ar.Alloc("v", {1, 2, 6, 5}), y = ar.Alloc("out", {1, 2, 4, 5});
  Tensor bad_k = ar.Alloc("k2", {1, 2, 6, 7}), bad_v = ar.Alloc("v2", {1, 2, 5, 5});
  Tensor bad_mask = ar.Alloc("m", {3, 6});
  vkt::ExpectError([&] { ops::Attention(p, q, bad_k, v, nullptr, y); },
                   "msc.attention 'out': key 'k2' float32 [1, 2, 6, 7] is [1, 6, 2, 7]");
  vkt::ExpectError([&] { ops::Attention(p, q, k, bad_v, nullptr, y); },
                   "msc.attention 'out': value 'v2'");
  vkt::ExpectError([&] { ops::Attention(p, q, k, v, &bad_mask, y); },
                   "does not broadcast to [B, N, Sq, Skv] = [1, 2, 4, 6]");
  vkt::ExpectError(
      [&] {
        ops::Attention(p, q, k, v, nullptr, ar.Alloc("o2", {1, 4, 2, 5}));
      },
      "does not match [1, 2, 4, 5]");
  ops::AttentionAttrs a;
  a.causal_mask = "Diagonal";
  vkt::ExpectError([&] { ops::Attention(p, q, k, v, nullptr, y, a); }, "causal_mask 'Diagonal'");
  a = {};
  a.q_axes = {0, 1, 1, 3};
  vkt::ExpectError([&] { ops::Attention(p, q, k, v, nullptr, y, a); },
                   "axes {0, 1, 1, 3} is not a permutation");
  CHECK(p.num_dispatches() == 0);
}

TEST_CASE("nn_ext: einsum matches the reference") {
  struct Case {
    std::string eq;         // as given to the op
    std::string explicit_;  // the same with letters only, for the reference
    std::vector<Shape> shapes;
  };
  const Case cases[] = {
      {"ij,jk->ik", "ij,jk->ik", {{5, 7}, {7, 3}}},
      {"ij,jk", "ij,jk->ik", {{4, 6}, {6, 9}}},  // implicit
      {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 6, 8}}},
      {"ii->i", "ii->i", {{5, 5}}},
      {"ii", "ii->", {{6, 6}}},
      {"ba", "ba->ab", {{3, 4}}},  // implicit transpose (sorted labels)
      {"Ba", "Ba->Ba", {{3, 4}}},  // uppercase sorts first
      {"i,i->", "i,i->", {{9}, {9}}},
      {"i,j->ij", "i,j->ij", {{4}, {5}}},
      {"ij,jk,kl->il", "ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}},
      {"ij,ij->i", "ij,ij->i", {{4, 6}, {1, 6}}},  // size-1 broadcast
      {"...ij,...jk->...ik", "abij,bjk->abik", {{2, 3, 4, 5}, {3, 5, 6}}},
      {"...j,...j->...", "abj,bj->ab", {{2, 1, 3}, {4, 3}}},
      {" i j , j k -> i k ", "ij,jk->ik", {{2, 3}, {3, 2}}},
      {"abcdefg->gfedcba", "abcdefg->gfedcba", {{2, 1, 2, 3, 1, 2, 2}}},
      {"ijk->", "ijk->", {{7, 9, 11}}},
  };
  uint32_t seed = 500;
  for (const Case& c : cases) {
    INFO("einsum '" << c.eq << "'");
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    std::vector<Vec> xs;
    std::vector<Tensor> ts;
    for (const Shape& s : c.shapes) {
      xs.push_back(vkt::Random(msc_vk::NumElements(s), ++seed));
      ts.push_back(ar.Input("x" + std::to_string(ts.size()), s, xs.back()));
    }
    Shape ys;
    // Explicit reference shapes: with ellipsis, the case's letters name the ellipsis dims.
    const Vec expect = RefEinsum(c.explicit_, xs, c.shapes, &ys);
    Tensor y = ar.Alloc("einsum", ys);
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Einsum(p, c.eq, ts, y); });
    vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5, c.eq);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor a = ar.Alloc("a", {2, 3}), b = ar.Alloc("b", {4, 5}), y = ar.Alloc("ein", {2, 5});
  vkt::ExpectError(
      [&] {
        ops::Einsum(p, "ij,jk->ik", {a, b}, y);
      },
      "einsum 'ein': operand 1 'b' float32 [4, 5]: dim 0 has extent 4, elsewhere 3");
  vkt::ExpectError([&] { ops::Einsum(p, "ij->ik", {a}, y); },
                   "output label 'k' of 'ij->ik' is not in any input");
  vkt::ExpectError([&] { ops::Einsum(p, "ijk->i", {a}, y); }, "does not fit term 'ijk'");
  vkt::ExpectError([&] { ops::Einsum(p, "ij,jk->ik", {a}, y); }, "name 2 operands, got 1");
  vkt::ExpectError([&] { ops::Einsum(p, "i1->i", {a}, y); }, "invalid character '1'");
  vkt::ExpectError([&] { ops::Einsum(p, "ij->ij", {a}, y); }, "does not match [2, 3]");
  Tensor big = ar.Alloc("big", {1, 1, 1, 1, 1, 1, 1, 1, 1});
  vkt::ExpectError([&] { ops::Einsum(p, "abcdefghi->", {big}, ar.Alloc("s", {})); },
                   "uses 9 distinct labels");
}

TEST_CASE("nn_ext: reductions sum/prod/max/min/mean/variance/std over up to 8 dims") {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    bool keepdims;
  };
  const Case cases[] = {
      {{2, 3, 4, 5, 2, 3}, {1, 3, 5}, false},  // 6-D, alternating (3 kept + 3 reduced runs)
      {{2, 3, 4, 5, 2, 3}, {0, -1}, true},
      {{3, 2, 2, 2, 3, 2, 2, 3}, {1, 3, 5, 7}, false},  // 8-D, 4 + 4 runs
      {{4, 130}, {1}, false},                           // inner run >= 64: cooperative on GPUs only
      {{70, 3, 90}, {0, 2}, true},                      // strided rows
      {{5, 6}, {}, false},                              // all axes
      {{300, 4}, {}, false},                            // all axes, cooperative on GPUs
      {{6, 1, 5}, {1}, false},                          // size-1 reduced dim
      // cooperative on CPU devices too (at most 8 outputs of >= 8192 elements)
      {{2, 8200}, {1}, false},
      {{2, 100, 90}, {0, 2}, true},  // strided rows
      {{90, 100}, {}, false},        // all axes
  };
  const char* names[] = {"sum", "prod", "max", "min", "mean", "variance", "std"};
  uint32_t seed = 900;
  for (const Case& c : cases) {
    for (int op = 0; op < 7; ++op) {
      INFO(std::string(names[op]) << " of " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      // prod: values near 1 so products of hundreds of elements stay finite and accurate.
      const Vec xd = op == 1 ? vkt::Random(msc_vk::NumElements(c.x), ++seed, 0.9f, 1.1f)
                             : vkt::Random(msc_vk::NumElements(c.x), ++seed, -2.0f, 3.0f);
      std::vector<bool> red(c.x.size(), c.axes.empty());
      for (int64_t a : c.axes) red[a < 0 ? a + c.x.size() : a] = true;
      Shape ys;
      for (size_t d = 0; d < c.x.size(); ++d) {
        if (!red[d])
          ys.push_back(c.x[d]);
        else if (c.keepdims)
          ys.push_back(1);
      }
      Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc(names[op], ys);
      // Which kernel ran, by workgroup count: one per output (cooperative) or per 64 outputs.
      int64_t inner = 1, count = 1;  // innermost reduced run, reduced elements
      for (size_t d = 0; d < c.x.size(); ++d) count *= red[d] ? c.x[d] : 1;
      for (size_t d = c.x.size(); d-- > 0 && (red[d] || c.x[d] == 1);) inner *= c.x[d];
      const int64_t outputs = msc_vk::NumElements(ys);
      const bool gpu = vkt::Ctx().prefers_shared_memory();
      const bool coop = inner >= 64 && (gpu || (outputs <= 8 && count >= 8192));
      RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
        switch (op) {
          case 0:
            ops::Sum(p, x, y, c.axes, c.keepdims);
            break;
          case 1:
            ops::Prod(p, x, y, c.axes, c.keepdims);
            break;
          case 2:
            ops::Max(p, x, y, c.axes, c.keepdims);
            break;
          case 3:
            ops::Min(p, x, y, c.axes, c.keepdims);
            break;
          case 4:
            ops::Mean(p, x, y, c.axes, c.keepdims);
            break;
          case 5:
            ops::Variance(p, x, y, c.axes, c.keepdims);
            break;
          default:
            ops::Std(p, x, y, c.axes, c.keepdims);
            break;
        }
        CHECK(p.num_workgroups() == static_cast<uint64_t>(coop ? outputs : (outputs + 63) / 64));
      });
      vkt::ExpectClose(ar.Read(y), RefReduce(op, xd, c.x, red), 1e-4, 1e-4, names[op]);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());

  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor x9 = ar.Alloc("x9", {2, 2, 2, 2, 2, 2, 2, 2, 2});
  vkt::ExpectError(
      [&] {
        ops::Sum(p, x9, ar.Alloc("s9", {2, 2, 2, 2}), {1, 3, 5, 7}, false);
      },
      "sum 's9': output 's9' float32 [2, 2, 2, 2] does not match [2, 2, 2, 2, 2]");
  vkt::ExpectError(
      [&] {
        ops::Sum(p, x9, ar.Alloc("s9b", {2, 2, 2, 2, 2}), {1, 3, 5, 7}, false);
      },
      "has 5 kept and 4 reduced runs of dims; the shader handles 4 of each");
  CHECK(p.num_dispatches() == 0);
  vkt::ExpectError(
      [&] {
        ops::Max(p, ar.Alloc("e", {3, 0}), ar.Alloc("m0", {3}), {1}, false);
      },
      "max 'm0': reduction over zero elements");
  vkt::ExpectError(
      [&] {
        ops::Sum(p, x9, ar.Alloc("s1", {2, 2, 2, 2, 2, 2, 2, 2}), {1, -8}, false);
      },
      "axis -8 is listed twice");
}

TEST_CASE("nn_ext: layer_norm / group_norm / rms_norm / log_softmax") {
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    msc_vk::Context& ctx = *ctx_ptr;
    // layer_norm over trailing axes: one group per invocation (hidden 8; 12 rows of 96 on CPU
    // devices) and one per workgroup (cooperative: hidden >= 64 with at most 8 groups, or groups
    // of at least 4096 elements, on CPU devices; hidden >= 64 on GPUs), told apart by the
    // workgroup count.
    for (const Shape& xs :
         {Shape{2, 5, 8}, Shape{3, 4, 96}, Shape{2, 3, 96}, Shape{9, 4096}, Shape{2, 3, 4, 5}}) {
      for (int affine = 0; affine < 3; ++affine) {  // 0 none, 1 gamma, 2 gamma + beta
        INFO("layer_norm " << msc_vk::ShapeToString(xs) << " affine " << affine);
        vkt::Arena ar(ctx, 1 << 20);
        const bool two_axes = xs.size() == 4;
        const std::vector<int64_t> axes =
            two_axes ? std::vector<int64_t>{-2, -1} : std::vector<int64_t>{-1};
        const Shape ps = two_axes ? Shape{xs[2], xs[3]} : Shape{xs.back()};
        const Vec xd = vkt::Random(msc_vk::NumElements(xs), 11, -3, 5);
        const Vec gd = affine ? vkt::Random(msc_vk::NumElements(ps), 12) : Vec{};
        const Vec bd = affine == 2 ? vkt::Random(msc_vk::NumElements(ps), 13) : Vec{};
        const size_t nr = axes.size();
        auto group = [&](const std::vector<int64_t>& c) {
          return Ravel(std::vector<int64_t>(c.begin(), c.end() - nr),
                       Shape(xs.begin(), xs.end() - nr));
        };
        auto gidx = [&](const std::vector<int64_t>& c) {
          return Ravel(std::vector<int64_t>(c.end() - nr, c.end()), ps);
        };
        const Vec expect = RefNormalize(xd, xs, group, gidx, gd, bd, 1e-5, false);
        Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("ln", xs);
        Tensor g = affine ? ar.Input("g", ps, gd) : Tensor{};
        Tensor b = affine == 2 ? ar.Input("b", ps, bd) : Tensor{};
        const int64_t count = msc_vk::NumElements(ps), groups = msc_vk::NumElements(xs) / count;
        const bool gpu = ctx.prefers_shared_memory();
        const bool coop = ps.back() >= 64 && (gpu || groups <= 8 || count >= 4096);
        RunProgram(ctx, 1, [&](msc_vk::Program& p) {
          ops::LayerNorm(p, x, affine ? &g : nullptr, affine == 2 ? &b : nullptr, y, axes, 1e-5);
          CHECK(p.num_workgroups() == static_cast<uint64_t>(coop ? groups : (groups + 63) / 64));
        });
        vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
      }
    }
    // group_norm NCHW (channel_axis 1, axes 2, 3) and a channels-last variant.
    struct GN {
      Shape x;
      int64_t groups, channel_axis;
      std::vector<int64_t> axes;
    };
    for (const GN& gn : {GN{{2, 6, 4, 5}, 3, 1, {2, 3}}, GN{{2, 8, 10, 10}, 2, 1, {2, 3}},
                         GN{{2, 5, 6}, 2, -1, {1}}}) {
      INFO("group_norm " << msc_vk::ShapeToString(gn.x) << " groups " << gn.groups);
      vkt::Arena ar(ctx, 1 << 20);
      const size_t ca = gn.channel_axis < 0 ? gn.channel_axis + gn.x.size() : gn.channel_axis;
      const int64_t C = gn.x[ca], Cg = C / gn.groups;
      const Vec xd = vkt::Random(msc_vk::NumElements(gn.x), 21, -2, 4);
      const Vec gd = vkt::Random(C, 22), bd = vkt::Random(C, 23);
      auto group = [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> key;
        for (size_t d = 0; d < c.size(); ++d) {
          const bool reduced =
              std::find(gn.axes.begin(), gn.axes.end(), static_cast<int64_t>(d)) != gn.axes.end();
          if (d == ca)
            key.push_back(c[d] / Cg);
          else if (!reduced)
            key.push_back(c[d]);
        }
        int64_t k = 0;
        for (int64_t v : key) k = k * 1000 + v;
        return k;
      };
      auto gidx = [&](const std::vector<int64_t>& c) { return c[ca]; };
      const Vec expect = RefNormalize(xd, gn.x, group, gidx, gd, bd, 1e-5, false);
      Tensor x = ar.Input("x", gn.x, xd), g = ar.Input("g", {C}, gd), b = ar.Input("b", {C}, bd);
      Tensor y = ar.Alloc("gn", gn.x);
      RunProgram(ctx, 1, [&](msc_vk::Program& p) {
        ops::GroupNorm(p, x, &g, &b, y, gn.groups, gn.channel_axis, gn.axes, 1e-5);
      });
      vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
    }
    // rms_norm with and without weight.
    for (const Shape& xs : {Shape{3, 7, 16}, Shape{2, 200}}) {
      for (bool weighted : {false, true}) {
        INFO("rms_norm " << msc_vk::ShapeToString(xs) << " weighted " << weighted);
        vkt::Arena ar(ctx, 1 << 20);
        const Vec xd = vkt::Random(msc_vk::NumElements(xs), 31, -2, 2);
        const Vec wd = weighted ? vkt::Random(xs.back(), 32) : Vec{};
        auto group = [&](const std::vector<int64_t>& c) {
          return Ravel(std::vector<int64_t>(c.begin(), c.end() - 1),
                       Shape(xs.begin(), xs.end() - 1));
        };
        auto gidx = [&](const std::vector<int64_t>& c) { return c.back(); };
        const Vec expect = RefNormalize(xd, xs, group, gidx, wd, {}, 1e-6, true);
        Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("rms", xs);
        Tensor w = weighted ? ar.Input("w", {xs.back()}, wd) : Tensor{};
        RunProgram(ctx, 1, [&](msc_vk::Program& p) {
          ops::RmsNorm(p, x, weighted ? &w : nullptr, y, {-1}, 1e-6);
        });
        vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
      }
    }
    // log_softmax along a middle axis and the last one, with large magnitudes.
    for (int64_t axis : {1, -1}) {
      vkt::Arena ar(ctx, 1 << 20);
      const Shape xs = {3, 7, 5};
      Vec xd = vkt::Random(105, 41, -20, 20);
      xd[0] = 90.0f;
      const int64_t ax = axis < 0 ? 2 : axis;
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < ax; ++d) outer *= xs[d];
      for (int64_t d = ax + 1; d < 3; ++d) inner *= xs[d];
      Vec expect(xd.size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t n = 0; n < inner; ++n) {
          double m = -INFINITY, s = 0;
          for (int64_t l = 0; l < xs[ax]; ++l)
            m = std::max<double>(m, xd[(o * xs[ax] + l) * inner + n]);
          for (int64_t l = 0; l < xs[ax]; ++l) s += std::exp(xd[(o * xs[ax] + l) * inner + n] - m);
          for (int64_t l = 0; l < xs[ax]; ++l) {
            const int64_t e = (o * xs[ax] + l) * inner + n;
            expect[e] = static_cast<float>(xd[e] - m - std::log(s));
          }
        }
      Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("lsm", xs);
      RunProgram(ctx, 1, [&](msc_vk::Program& p) { ops::LogSoftmax(p, x, y, axis); });
      vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-5);
    }
    vkt::ExpectNoValidationMessages(ctx);
  }
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor x = ar.Alloc("x", {2, 6, 4}), g = ar.Alloc("g", {5});
  vkt::ExpectError(
      [&] {
        ops::LayerNorm(p, x, &g, nullptr, ar.Alloc("ln", {2, 6, 4}), {-1}, 1e-5);
      },
      "nn.layer_norm 'ln': 'g' float32 [5] must have the shape of the normalized dims [4]");
  vkt::ExpectError(
      [&] {
        ops::GroupNorm(p, x, nullptr, nullptr, ar.Alloc("gn", {2, 6, 4}), 4, 1, {2}, 1e-5);
      },
      "num_groups = 4 does not divide the 6 channels");
  vkt::ExpectError(
      [&] {
        ops::GroupNorm(p, x, nullptr, nullptr, ar.Alloc("gn2", {2, 6, 4}), 2, 1, {1}, 1e-5);
      },
      "axes must not contain the channel axis");
}

TEST_CASE("nn_ext: batch_matmul transpose_a / transpose_b and msc.matmul") {
  for (msc_vk::Context* ctx_ptr : {&vkt::Ctx(), &vkt::StagingCtx()}) {
    msc_vk::Context& ctx = *ctx_ptr;
    const int64_t B = 3, M = 19, K = 12, N = 10;
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        INFO("transpose_a " << ta << " transpose_b " << tb);
        vkt::Arena ar(ctx, 1 << 20);
        const Vec ad = vkt::Random(B * M * K, 50 + ta), bd = vkt::Random(B * K * N, 60 + tb);
        // The reference takes a as [B, M, K]: transpose the stored [B, K, M] for transpose_a.
        Vec a_mk = ad;
        if (ta) {
          for (int64_t b = 0; b < B; ++b)
            for (int64_t m = 0; m < M; ++m)
              for (int64_t k = 0; k < K; ++k) a_mk[(b * M + m) * K + k] = ad[(b * K + k) * M + m];
        }
        const Vec expect = ref::Gemm(a_mk, bd, {}, B, M, N, K, tb, M * K, K * N);
        Tensor a = ar.Input("a", ta ? Shape{B, K, M} : Shape{B, M, K}, ad);
        Tensor b = ar.Input("b", tb ? Shape{B, N, K} : Shape{B, K, N}, bd);
        Tensor y = ar.Alloc("bmm", {B, M, N});
        RunProgram(ctx, 1, [&](msc_vk::Program& p) { ops::BatchMatmul(p, a, b, y, ta, tb); });
        vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
      }
    }
    vkt::Arena ar(ctx, 1 << 20);
    const Vec ad = vkt::Random(2 * 5 * 8, 70), bd = vkt::Random(8 * 4, 71);
    const Vec expect = ref::Gemm(ad, bd, {}, 2, 5, 4, 8, false, 5 * 8, 0);
    Tensor a = ar.Input("a", {2, 5, 8}, ad), b = ar.Input("b", {8, 4}, bd);
    Tensor y = ar.Alloc("mm", {2, 5, 4});
    RunProgram(ctx, 1, [&](msc_vk::Program& p) { ops::MscMatmul(p, a, b, y); });
    vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
    vkt::ExpectNoValidationMessages(ctx);
  }
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::BatchMatmul(p, ar.Alloc("a", {2, 3, 4}), ar.Alloc("b", {2, 3, 5}),
                         ar.Alloc("bmm", {2, 4, 5}), false, false);
      },
      "nn.batch_matmul 'bmm': inner dims differ");
}

TEST_CASE("nn_ext: conv1d / conv1d_bias / max_pool1d / avg_pool1d / adaptive_avg_pool1d") {
  struct ConvCase {
    Shape x, w;
    int64_t stride;
    std::array<int64_t, 2> pad;
    int64_t dil, groups;
    bool bias;
  };
  for (const ConvCase& c : {ConvCase{{2, 4, 17}, {8, 4, 3}, 1, {1, 1}, 1, 1, false},
                            ConvCase{{1, 6, 20}, {9, 2, 5}, 2, {2, 0}, 2, 3, true},
                            ConvCase{{2, 5, 9}, {5, 1, 3}, 1, {1, 1}, 1, 5, true}}) {
    INFO("conv1d x " << msc_vk::ShapeToString(c.x) << " w " << msc_vk::ShapeToString(c.w));
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const Vec xd = vkt::Random(msc_vk::NumElements(c.x), 80),
              wd = vkt::Random(msc_vk::NumElements(c.w), 81);
    const Vec bd = c.bias ? vkt::Random(c.w[0], 82) : Vec{};
    Shape ys4;
    const Vec expect =
        ref::Conv2d(xd, {c.x[0], c.x[1], 1, c.x[2]}, wd, {c.w[0], c.w[1], 1, c.w[2]}, bd,
                    {1, c.stride}, {0, c.pad[0], 0, c.pad[1]}, {1, c.dil}, c.groups, &ys4);
    Tensor x = ar.Input("x", c.x, xd), w = ar.Input("w", c.w, wd);
    Tensor y = ar.Alloc("conv1d", {ys4[0], ys4[1], ys4[3]});
    const ops::Conv1dAttrs a{c.stride, c.pad, c.dil, c.groups};
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      if (c.bias)
        ops::Conv1dBias(p, x, w, ar.Input("b", {c.w[0]}, bd), y, a);
      else
        ops::Conv1d(p, x, w, y, a);
    });
    vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
  }
  struct PoolCase {
    int64_t W, k, s;
    std::array<int64_t, 2> pad;
    int64_t dil;
    bool ceil, cip;
  };
  for (const PoolCase& c :
       {PoolCase{16, 3, 2, {1, 1}, 1, false, true}, PoolCase{15, 3, 2, {1, 1}, 1, true, false},
        PoolCase{10, 2, 3, {0, 1}, 2, true, true}}) {
    for (int kind = 0; kind < 2; ++kind) {
      if (kind == 1 && c.dil != 1) continue;  // avg pooling has no dilation
      INFO("pool1d kind " << kind << " W " << c.W << " k " << c.k << " s " << c.s);
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      const Shape xs = {2, 3, c.W};
      const Vec xd = vkt::Random(msc_vk::NumElements(xs), 90);
      Shape ys4;
      const Vec expect = ref::Pool2d(xd, {2, 3, 1, c.W}, kind, {1, c.k}, {1, c.s},
                                     {0, c.pad[0], 0, c.pad[1]}, {1, c.dil}, c.ceil, c.cip, &ys4);
      Tensor x = ar.Input("x", xs, xd), y = ar.Alloc("pool1d", {2, 3, ys4[3]});
      const ops::Pool1dAttrs a{c.k, c.s, c.pad, c.dil, c.ceil, c.cip};
      RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
        if (kind == 0)
          ops::MaxPool1d(p, x, y, a);
        else
          ops::AvgPool1d(p, x, y, a);
      });
      vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
    }
  }
  for (int64_t ow : {1, 4, 7}) {
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const Vec xd = vkt::Random(2 * 3 * 10, 95);
    const Vec expect = ref::AdaptiveAvgPool2d(xd, {2, 3, 1, 10}, 1, ow);
    Tensor x = ar.Input("x", {2, 3, 10}, xd), y = ar.Alloc("apool1d", {2, 3, ow});
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::AdaptiveAvgPool1d(p, x, y); });
    vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Conv1d(p, ar.Alloc("x", {1, 4, 10}), ar.Alloc("w", {8, 4, 3}),
                    ar.Alloc("c1", {1, 8, 10}), ops::Conv1dAttrs{});
      },
      "nn.conv1d 'c1': output 'c1' float32 [1, 8, 10] does not match the computed shape [1, 8, 8]");
  vkt::ExpectError(
      [&] {
        ops::MaxPool1d(p, ar.Alloc("x2", {1, 4, 10, 1}), ar.Alloc("mp", {1, 4, 5}),
                       ops::Pool1dAttrs{});
      },
      "nn.max_pool1d 'mp': input 'x2' float32 [1, 4, 10, 1] must have 3 dims");
}

TEST_CASE("nn_ext: conv2d_transpose / conv1d_transpose match a scatter reference") {
  struct Case {
    Shape x, w;  // w: [C, O/groups, KH, KW]
    std::array<int64_t, 2> s;
    std::array<int64_t, 4> pad;
    std::array<int64_t, 2> opad, dil;
    int64_t groups;
  };
  for (const Case& c :
       {Case{{1, 3, 5, 5}, {3, 4, 3, 3}, {1, 1}, {0, 0, 0, 0}, {0, 0}, {1, 1}, 1},
        Case{{2, 4, 4, 6}, {4, 3, 3, 2}, {2, 3}, {1, 0, 1, 1}, {1, 2}, {1, 1}, 2},
        Case{{1, 2, 5, 4}, {2, 2, 3, 3}, {2, 2}, {2, 1, 0, 1}, {1, 0}, {2, 1}, 1},
        Case{{1, 1, 6, 7}, {1, 1, 4, 4}, {3, 3}, {1, 1, 1, 1}, {2, 0}, {1, 2}, 1}}) {
    INFO("conv2d_transpose x " << msc_vk::ShapeToString(c.x) << " w "
                               << msc_vk::ShapeToString(c.w));
    const int64_t N = c.x[0], C = c.x[1], H = c.x[2], W = c.x[3], KH = c.w[2], KW = c.w[3];
    const int64_t Og = c.w[1], O = Og * c.groups, Cg = C / c.groups;
    const int64_t OH = (H - 1) * c.s[0] - c.pad[0] - c.pad[2] + c.dil[0] * (KH - 1) + c.opad[0] + 1;
    const int64_t OW = (W - 1) * c.s[1] - c.pad[1] - c.pad[3] + c.dil[1] * (KW - 1) + c.opad[1] + 1;
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const Vec xd = vkt::Random(msc_vk::NumElements(c.x), 110),
              wd = vkt::Random(msc_vk::NumElements(c.w), 111);
    std::vector<double> acc(N * O * OH * OW, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw)
            for (int64_t og = 0; og < Og; ++og)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  const int64_t oh = ih * c.s[0] - c.pad[0] + kh * c.dil[0];
                  const int64_t ow = iw * c.s[1] - c.pad[1] + kw * c.dil[1];
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                  const int64_t o = (ch / Cg) * Og + og;
                  acc[((n * O + o) * OH + oh) * OW + ow] +=
                      xd[((n * C + ch) * H + ih) * W + iw] *
                      wd[((ch * Og + og) * KH + kh) * KW + kw];
                }
    const Vec expect(acc.begin(), acc.end());
    Tensor x = ar.Input("x", c.x, xd), w = ar.Input("w", c.w, wd);
    Tensor y = ar.Alloc("convT", {N, O, OH, OW});
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      ops::Conv2dTranspose(p, x, w, y,
                           ops::ConvTranspose2dAttrs{c.s, c.pad, c.opad, c.dil, c.groups});
    });
    vkt::ExpectClose(ar.Read(y), expect, 1e-4, 1e-4);
  }
  // conv1d_transpose: the same scatter with H = 1.
  {
    vkt::Arena ar(vkt::Ctx(), 1 << 20);
    const int64_t N = 2, C = 4, W = 7, Og = 3, G = 2, KW = 3, s = 2, pl = 1, pr = 2, op = 1, d = 2;
    const int64_t O = Og * G, Cg = C / G;
    const int64_t OW = (W - 1) * s - pl - pr + d * (KW - 1) + op + 1;
    const Vec xd = vkt::Random(N * C * W, 120), wd = vkt::Random(C * Og * KW, 121);
    std::vector<double> acc(N * O * OW, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t iw = 0; iw < W; ++iw)
          for (int64_t og = 0; og < Og; ++og)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t ow = iw * s - pl + kw * d;
              if (ow < 0 || ow >= OW) continue;
              acc[(n * O + (ch / Cg) * Og + og) * OW + ow] +=
                  xd[(n * C + ch) * W + iw] * wd[(ch * Og + og) * KW + kw];
            }
    Tensor x = ar.Input("x", {N, C, W}, xd), w = ar.Input("w", {C, Og, KW}, wd);
    Tensor y = ar.Alloc("convT1d", {N, O, OW});
    RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) {
      ops::Conv1dTranspose(p, x, w, y, ops::ConvTranspose1dAttrs{s, {pl, pr}, op, d, G});
    });
    vkt::ExpectClose(ar.Read(y), Vec(acc.begin(), acc.end()), 1e-4, 1e-4);
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  vkt::ExpectError(
      [&] {
        ops::Conv1dTranspose(p, ar.Alloc("x", {1, 4, 5}), ar.Alloc("w", {4, 2, 3}),
                             ar.Alloc("ct", {1, 2, 9}), ops::ConvTranspose1dAttrs{2});
      },
      "nn.conv1d_transpose 'ct': output 'ct' float32 [1, 2, 9] does not match the computed shape "
      "[1, 2, 11]");
  vkt::ExpectError(
      [&] {
        ops::Conv2dTranspose(p, ar.Alloc("x2", {1, 4, 5, 5}), ar.Alloc("w2", {3, 2, 3, 3}),
                             ar.Alloc("ct2", {1, 2, 7, 7}), ops::ConvTranspose2dAttrs{});
      },
      "IOHW: weight dim 0 must be the input channels");
}

namespace {

// TOPI _resize_2d in float32 coordinates (see shaders/image/resize2d.comp), double values.
Vec RefResize(const Vec& x, int64_t NC, int64_t H, int64_t W, int64_t OH, int64_t OW,
              const ops::Resize2dAttrs& a) {
  const std::string& m = a.coordinate_transformation_mode;
  auto in_coord = [&](int64_t o, int64_t in, int64_t out) -> float {
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    const float xo = static_cast<float>(o);
    if (m == "half_pixel") return (xo + 0.5f) * scale - 0.5f;
    if (m == "align_corners")
      return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) * xo : 0.0f;
    if (m == "asymmetric") return scale * xo;
    if (m == "pytorch_half_pixel") return out > 1 ? (xo + 0.5f) * scale - 0.5f : 0.0f;
    return (xo + 0.5f) * scale;  // tf_half_pixel_for_nn
  };
  std::string rounding = a.rounding_method;
  if (rounding.empty()) rounding = m == "align_corners" ? "round" : "floor";
  auto nearest = [&](int64_t o, int64_t in, int64_t out) -> int64_t {
    if (m == "asymmetric" && out % in == 0) return o / (out / in);  // TOPI integer path
    const float v = in_coord(o, in, out);
    if (rounding == "round") return static_cast<int64_t>(std::round(v));  // half away from zero
    if (rounding == "floor") return static_cast<int64_t>(std::floor(v + 1e-5f));
    if (rounding == "ceil") return static_cast<int64_t>(std::ceil(v - 1e-5f));
    if (rounding == "round_prefer_floor") return static_cast<int64_t>(std::ceil(v - 0.5f));
    return static_cast<int64_t>(std::floor(v + 0.5f));
  };
  auto px = [&](int64_t nc, int64_t yy, int64_t xx) -> double {
    yy = std::min(std::max<int64_t>(yy, 0), H - 1);
    xx = std::min(std::max<int64_t>(xx, 0), W - 1);
    return x[(nc * H + yy) * W + xx];
  };
  auto cubic_w = [&](double t, int64_t first, int64_t size) {
    const double al = a.cubic_alpha, t2 = t * t, t3 = t2 * t;
    std::array<double, 4> w = {al * (t3 - 2 * t2 + t), (al + 2) * t3 - (3 + al) * t2 + 1,
                               -(al + 2) * t3 + (3 + 2 * al) * t2 - al * t, -al * t3 + al * t2};
    if (a.cubic_exclude) {
      double s = 0;
      for (int k = 0; k < 4; ++k) {
        if (first + k < 0 || first + k >= size) w[k] = 0;
        s += w[k];
      }
      for (double& v : w) v /= s;
    }
    return w;
  };
  Vec y(NC * OH * OW);
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        double v;
        if (a.method == "nearest_neighbor") {
          v = px(nc, nearest(oy, H, OH), nearest(ox, W, OW));
        } else {
          const float iy = in_coord(oy, H, OH), ix = in_coord(ox, W, OW);
          const int64_t y0 = static_cast<int64_t>(std::floor(iy)),
                        x0 = static_cast<int64_t>(std::floor(ix));
          const double ty = iy - std::floor(iy), tx = ix - std::floor(ix);
          if (a.method == "linear") {
            const double top = px(nc, y0, x0) * (1 - tx) + px(nc, y0, x0 + 1) * tx;
            const double bot = px(nc, y0 + 1, x0) * (1 - tx) + px(nc, y0 + 1, x0 + 1) * tx;
            v = top * (1 - ty) + bot * ty;
          } else {
            const auto wy = cubic_w(ty, y0 - 1, H), wx = cubic_w(tx, x0 - 1, W);
            v = 0;
            for (int j = 0; j < 4; ++j) {
              double row = 0;
              for (int k = 0; k < 4; ++k) row += px(nc, y0 - 1 + j, x0 - 1 + k) * wx[k];
              v += row * wy[j];
            }
          }
        }
        y[(nc * OH + oy) * OW + ox] = static_cast<float>(v);
      }
  return y;
}

}  // namespace

TEST_CASE("nn_ext: image.resize2d (TOPI formulas)") {
  const char* modes[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                         "tf_half_pixel_for_nn"};
  struct Size {
    int64_t H, W, OH, OW;
  };
  int checked = 0;
  for (const Size& sz :
       {Size{5, 6, 10, 12}, Size{8, 7, 3, 5}, Size{4, 4, 1, 9}, Size{3, 5, 7, 5}}) {
    for (const char* method : {"nearest_neighbor", "linear", "cubic"}) {
      for (const char* mode : modes) {
        for (const char* rounding :
             {"", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}) {
          if (std::string(method) != "nearest_neighbor" && std::string(rounding) != "") continue;
          for (bool exclude : {false, true}) {
            if (exclude && std::string(method) != "cubic") continue;
            INFO(std::string(method)
                 << " " << mode << " rounding '" << std::string(rounding) << "' exclude " << exclude
                 << " " << sz.H << "x" << sz.W << " -> " << sz.OH << "x" << sz.OW);
            vkt::Arena ar(vkt::Ctx(), 1 << 20);
            const Vec xd = vkt::Random(2 * 3 * sz.H * sz.W, 130);
            ops::Resize2dAttrs a{method, mode, rounding, -0.75f, exclude};
            const Vec expect = RefResize(xd, 6, sz.H, sz.W, sz.OH, sz.OW, a);
            Tensor x = ar.Input("x", {2, 3, sz.H, sz.W}, xd),
                   y = ar.Alloc("rs", {2, 3, sz.OH, sz.OW});
            RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Resize2d(p, x, y, a); });
            vkt::ExpectClose(ar.Read(y), expect, 1e-5, 1e-5);
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked == 4 * 5 * (6 + 1 + 2));
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  ops::Resize2dAttrs a;
  a.method = "area";
  vkt::ExpectError(
      [&] {
        ops::Resize2d(p, ar.Alloc("x", {1, 1, 2, 2}), ar.Alloc("r", {1, 1, 4, 4}), a);
      },
      "image.resize2d 'r': method 'area' is not supported (one of: nearest_neighbor, linear, "
      "cubic)");
}

TEST_CASE("nn_ext: nn.pad constant / edge / reflect") {
  struct Case {
    Shape x;
    std::vector<int64_t> pw;
  };
  for (const Case& c : {Case{{2, 3, 4, 5}, {0, 0, 0, 0, 1, 2, 2, 1}}, Case{{7}, {3, 2}},
                        Case{{2, 3, 4, 5, 6}, {1, 0, 0, 0, 2, 1, 0, 0, 1, 3}},
                        Case{{3, 4, 5}, {0, 0, 2, 3, 0, 0}}}) {
    for (const char* mode : {"constant", "edge", "reflect"}) {
      INFO("pad " << std::string(mode) << " " << msc_vk::ShapeToString(c.x));
      vkt::Arena ar(vkt::Ctx(), 1 << 20);
      const Vec xd = vkt::Random(msc_vk::NumElements(c.x), 140);
      Shape ys;
      for (size_t d = 0; d < c.x.size(); ++d) ys.push_back(c.x[d] + c.pw[2 * d] + c.pw[2 * d + 1]);
      Vec expect(msc_vk::NumElements(ys));
      for (int64_t i = 0; i < static_cast<int64_t>(expect.size()); ++i) {
        std::vector<int64_t> oc = Unravel(i, ys);
        bool inside = true;
        for (size_t d = 0; d < oc.size(); ++d) {
          int64_t s = oc[d] - c.pw[2 * d];
          const int64_t n = c.x[d];
          if (s < 0 || s >= n) {
            inside = false;
            if (std::string(mode) == "edge") s = std::min(std::max<int64_t>(s, 0), n - 1);
            if (std::string(mode) == "reflect") s = s < 0 ? -s : 2 * (n - 1) - s;
          }
          oc[d] = s;
        }
        expect[i] = (inside || std::string(mode) != "constant") ? xd[Ravel(oc, c.x)] : 1.5f;
      }
      Tensor x = ar.Input("x", c.x, xd), y = ar.Alloc("pad", ys);
      RunProgram(vkt::Ctx(), 1, [&](msc_vk::Program& p) { ops::Pad(p, x, y, c.pw, mode, 1.5f); });
      vkt::ExpectClose(ar.Read(y), expect, 0, 0);
    }
  }
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor x = ar.Alloc("x", {2, 3});
  vkt::ExpectError(
      [&] {
        ops::Pad(p, x, ar.Alloc("p1", {2, 7}), {0, 0, 3, 1}, "reflect");
      },
      "nn.pad 'p1': reflect padding needs pads < the dim size: dim 1");
  vkt::ExpectError(
      [&] {
        ops::Pad(p, x, ar.Alloc("p2", {2, 5}), {0, 0, 1, 1}, "circular");
      },
      "pad_mode 'circular' is not one of constant, edge, reflect");
  vkt::ExpectError(
      [&] {
        ops::Pad(p, x, ar.Alloc("p3", {2, 5}), {1, 1});
      },
      "pad_width has 2 values; input 'x' float32 [2, 3] needs 4");
}
