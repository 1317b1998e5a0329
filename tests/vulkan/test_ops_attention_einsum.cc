// Numerical tests of msc.attention (runtime ops_attention.cc) and einsum (ops_einsum.cc) against
// CPU references written here (double accumulation, straight from the formulas in ops.h / TOPI).
// Every test runs under the validated contexts of test_util.h and checks the dispatch count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "reference.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::Shape;
using msc_vk::Tensor;
using vkt::RunProgram;
using Vec = std::vector<float>;

namespace {

using vkt::Ravel;
using vkt::Unravel;

const float kInf = std::numeric_limits<float>::infinity();

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

}  // namespace

TEST_CASE("msc.attention (fused) matches the reference") {
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

TEST_CASE("msc.attention reads q, k, v as strided views of one packed tensor") {
  // A transformer's qkv projection [B, S, 3 E] (E = N H) read in place: q, k, v are the views
  // [B, S, N, H] with strides [3 E S, 3 E, H, 1] from elements 0, E + pad, 2 E + pad (relax
  // layout, identity axes). pad shifts k and v off a vec4 texel boundary in one case.
  struct Case {
    const char* name;
    int64_t B, S, N, H, pad;
  };
  for (const Case& c :
       {Case{"vec4 (H % 4 == 0, aligned)", 2, 5, 3, 8, 0}, Case{"scalar (H odd)", 1, 7, 2, 5, 0},
        Case{"scalar (k, v off a texel boundary)", 1, 6, 2, 4, 2}}) {
    INFO(c.name);
    for (msc_vk::Context* ctx : {&vkt::Ctx(), &vkt::StagingCtx()}) {
      vkt::Arena ar(*ctx);
      const int64_t E = c.N * c.H, row = 3 * E + 2 * c.pad;
      const Vec packed = vkt::Random(c.B * c.S * row, 7, -2, 2);
      const Shape bsnh = {c.B, c.S, c.N, c.H};
      // The pieces, extracted on the host, for the reference.
      Vec pieces[3];
      for (int t = 0; t < 3; ++t)
        for (int64_t b = 0; b < c.B; ++b)
          for (int64_t s = 0; s < c.S; ++s)
            for (int64_t e = 0; e < E; ++e)
              pieces[t].push_back(packed[(b * c.S + s) * row + t * (E + c.pad) + e]);
      const std::array<int64_t, 4> id = {0, 1, 2, 3};
      const AttnCase ref{c.name,    c.B,  c.N,  c.S, c.S, c.H, c.H, {},
                         "TopLeft", true, 0.5f, id,  id,  id,  id,  false};
      Shape ys;
      const Vec expect = RefAttention(ref, pieces[0], pieces[1], pieces[2], {}, &ys);
      Tensor base = ar.Input("qkv", {c.B, c.S, row}, packed);
      Tensor y = ar.Alloc("attn", ys);
      const std::vector<int64_t> strides = {c.S * row, row, c.H, 1};
      ops::AttentionAttrs a;
      a.q_axes = a.k_axes = a.v_axes = a.out_axes = id;
      a.has_scale = true;
      a.scale = 0.5f;
      a.causal_mask = "TopLeft";
      RunProgram(*ctx, 1, [&](msc_vk::Program& p) {
        ops::Attention(p, ops::StridedView(base, bsnh, strides, 0),
                       ops::StridedView(base, bsnh, strides, E + c.pad),
                       ops::StridedView(base, bsnh, strides, 2 * (E + c.pad)), nullptr, y, a);
      });
      vkt::ExpectClose(ar.Read(y), expect, 2e-5, 1e-4, c.name);
      vkt::ExpectNoValidationMessages(*ctx);
    }
  }
  // A view reaching past its tensor is refused before anything is recorded.
  vkt::Arena ar(vkt::Ctx(), 1 << 20);
  msc_vk::Program p(vkt::Ctx());
  Tensor base = ar.Alloc("qkv", {1, 4, 24}), y = ar.Alloc("out", {1, 4, 2, 4});
  const ops::StridedView q(base, {1, 4, 2, 4}, {96, 24, 4, 1}, 0);
  const ops::StridedView far(base, {1, 4, 2, 4}, {96, 24, 4, 1}, 17);
  vkt::ExpectError([&] { ops::Attention(p, q, far, q, nullptr, y); },
                   "key 'qkv' float32 [1, 4, 24] viewed as [1, 4, 2, 4] strides [96, 24, 4, 1] "
                   "from element 17 reaches outside its tensor");
  CHECK(p.num_dispatches() == 0);
}

TEST_CASE("msc.attention rejects bad shapes and attrs") {
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

TEST_CASE("einsum matches the reference") {
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
