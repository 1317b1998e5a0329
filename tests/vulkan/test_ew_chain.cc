// Fused elementwise chains (ops::ElementwiseChain, shaders/ew_chain.comp; issue 9): each chain
// against the same steps run unfused (one Unary / Binary / Where dispatch per step, the
// intermediates stored), on random data with broadcasting, special values, both kernel modes
// (one element / four per invocation), every op parameter, where with a bool condition, the
// multi-dispatch fallback, the pipeline cache (chains differing only in their program), and the
// errors; plus a CPU reference for one chain. Run under validation (tests/vulkan.cmake).
#include <cmath>
#include <cstring>
#include <limits>

#include "ops_internal.h"
#include "test_util.h"

namespace ops = msc_vk::ops;
using msc_vk::DType;
using msc_vk::Shape;
using msc_vk::Tensor;
using ops::ChainBinary;
using ops::ChainInput;
using ops::ChainResult;
using ops::ChainUnary;
using ops::ChainWhere;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Random data with a few special values mixed in (NaN, +-inf, +-0) when `special`.
std::vector<float> Data(const Shape& s, uint32_t seed, bool special = false, float lo = -2.0f,
                        float hi = 2.0f) {
  std::vector<float> v = vkt::Random(static_cast<size_t>(msc_vk::NumElements(s)), seed, lo, hi);
  if (special) {
    const float sv[] = {kNaN, kInf, -kInf, 0.0f, -0.0f};
    for (size_t i = 0; i < v.size(); i += 7) v[i] = sv[(i / 7) % 5];
  }
  return v;
}

// A tensor of dtype `d` in the arena with the raw little-endian element bytes `bytes`.
Tensor TypedInput(vkt::Arena& ar, const std::string& name, DType d, const Shape& s,
                  const void* bytes) {
  const int64_t n = msc_vk::NumElements(s) * static_cast<int64_t>(msc_vk::DTypeSize(d));
  Tensor t = ar.Alloc(name, {std::max<int64_t>(1, (n + 3) / 4)});
  t.dtype = d;
  t.shape = s;
  ar.buffer().Upload(t.offset, bytes, static_cast<size_t>(n));
  return t;
}

Tensor BoolInput(vkt::Arena& ar, const std::string& name, const Shape& s,
                 const std::vector<uint8_t>& v) {
  REQUIRE(static_cast<int64_t>(v.size()) == msc_vk::NumElements(s));
  return TypedInput(ar, name, DType::kBool, s, v.data());
}

// The steps as the unfused graph runs them: one dispatch per step into its own arena tensor of
// the step's (broadcast) shape. Returns the last step's tensor.
Tensor RecordUnfused(msc_vk::Program& p, vkt::Arena& ar, const std::vector<Tensor>& inputs,
                     const std::vector<ops::ChainStep>& steps) {
  std::vector<Tensor> results;
  for (size_t s = 0; s < steps.size(); ++s) {
    std::vector<Tensor> args;
    for (const ops::ChainRef& r : steps[s].operands)
      args.push_back(r.step ? results.at(r.index) : inputs.at(r.index));
    Shape shape = args[0].shape;
    for (size_t k = 1; k < args.size(); ++k) {
      Shape out;
      REQUIRE(msc_vk::ops::detail::BroadcastShapes(shape, args[k].shape, &out));
      shape = out;
    }
    const Tensor y = ar.Alloc("unfused" + std::to_string(s), shape);
    const std::string& op = steps[s].optype;
    if (op == "where")
      ops::Where(p, args[0], args[1], args[2], y);
    else if (args.size() == 2)
      ops::Binary(p, op, args[0], args[1], y);
    else
      ops::Unary(p, op, args[0], y, steps[s].p0, steps[s].p1);
    results.push_back(y);
  }
  return results.back();
}

// Runs the chain (one program) and the unfused steps (another) and compares: the same float32
// functions, so equal up to the driver's fma contraction (~1 ulp), NaN where NaN. Returns the
// chain's output; `dispatches` = the chain program's dispatch count.
std::vector<float> ExpectChainMatchesUnfused(vkt::Arena& ar, const std::vector<Tensor>& inputs,
                                             const std::vector<ops::ChainStep>& steps,
                                             const Shape& y_shape, size_t* dispatches = nullptr,
                                             double tol = 2e-6) {
  const Tensor y = ar.Alloc("chain", y_shape);
  msc_vk::Program chain(vkt::Ctx());
  ops::ElementwiseChain(chain, inputs, steps, y);
  if (dispatches) *dispatches = chain.num_dispatches();
  chain.Run();
  msc_vk::Program unfused(vkt::Ctx());
  const Tensor ref = RecordUnfused(unfused, ar, inputs, steps);
  REQUIRE(ref.shape == y_shape);
  unfused.Run();
  const std::vector<float> got = ar.Read(y);
  vkt::ExpectClose(got, ar.Read(ref), tol, tol, "chain vs unfused");
  vkt::ExpectNoValidationMessages(vkt::Ctx());
  return got;
}

}  // namespace

TEST_CASE("elementwise chain: gelu + bias * scale in one dispatch, vs unfused and CPU") {
  vkt::Arena ar(vkt::Ctx());
  const Shape xs = {2, 16, 64};
  const auto xv = Data(xs, 1), bv = Data({64}, 2);
  const Tensor x = ar.Input("x", xs, xv), bias = ar.Input("bias", {64}, bv);
  const Tensor scale = ar.Input("scale", {}, {0.75f});
  const std::vector<ops::ChainStep> steps = {
      ChainUnary("nn.gelu", ChainInput(0)), ChainBinary("add", ChainResult(0), ChainInput(1)),
      ChainBinary("multiply", ChainResult(1), ChainInput(2))};
  size_t n = 0;
  const auto got = ExpectChainMatchesUnfused(ar, {x, bias, scale}, steps, xs, &n);
  CHECK(n == 1);
  std::vector<float> want(got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const double v = xv[i];
    want[i] =
        static_cast<float>((0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) + bv[i % 64]) * 0.75);
  }
  vkt::ExpectClose(got, want, 1e-5, 1e-5, "chain vs CPU");
}

TEST_CASE("elementwise chain: trees, broadcasting and both kernel modes") {
  vkt::Arena ar(vkt::Ctx());
  SUBCASE("a tree of same-shape inputs (four elements per invocation)") {
    const Shape s = {4, 8, 12};
    const Tensor a = ar.Input("a", s, Data(s, 3)), b = ar.Input("b", s, Data(s, 4));
    const Tensor c = ar.Input("c", s, Data(s, 5)), d = ar.Input("d", s, Data(s, 6, false, 0.5f));
    size_t n = 0;
    ExpectChainMatchesUnfused(
        ar, {a, b, c, d},
        {ChainBinary("multiply", ChainInput(0), ChainInput(1)),
         ChainBinary("subtract", ChainInput(2), ChainInput(3)),
         ChainBinary("divide", ChainResult(0), ChainResult(1)), ChainUnary("tanh", ChainResult(2)),
         ChainBinary("add", ChainResult(3), ChainInput(0))},
        s, &n);
    CHECK(n == 1);
  }
  SUBCASE("odd sizes, inputs broadcast along inner and outer dims (one element per invocation)") {
    const Shape s = {3, 5, 7};
    const Tensor x = ar.Input("x", s, Data(s, 7));
    const Tensor col = ar.Input("col", {5, 1}, Data({5, 1}, 8));
    const Tensor row = ar.Input("row", {7}, Data({7}, 9));
    const Tensor one = ar.Input("one", {1, 1, 1}, {1.5f});
    size_t n = 0;
    ExpectChainMatchesUnfused(
        ar, {x, col, row, one},
        {ChainBinary("add", ChainInput(1), ChainInput(0)),
         ChainBinary("maximum", ChainResult(0), ChainInput(2)),
         ChainBinary("power", ChainResult(1), ChainInput(3)), ChainUnary("sqrt", ChainResult(2)),
         ChainBinary("minimum", ChainInput(2), ChainResult(3))},
        s, &n);
    CHECK(n == 1);
  }
  SUBCASE("broadcast inputs in the vec4 mode: innermost stride 1 and 0") {
    const Shape s = {2, 3, 8};
    const Tensor x = ar.Input("x", s, Data(s, 10));
    const Tensor inner = ar.Input("inner", {3, 8}, Data({3, 8}, 11));        // stride 1
    const Tensor outer = ar.Input("outer", {2, 3, 1}, Data({2, 3, 1}, 12));  // stride 0
    size_t n = 0;
    ExpectChainMatchesUnfused(ar, {x, inner, outer},
                              {ChainBinary("multiply", ChainInput(0), ChainInput(1)),
                               ChainBinary("subtract", ChainResult(0), ChainInput(2)),
                               ChainUnary("sigmoid", ChainResult(1))},
                              s, &n);
    CHECK(n == 1);
  }
  SUBCASE("the output broadcasts two smaller inputs; a unary of a broadcast input") {
    const Shape s = {4, 6};
    const Tensor a = ar.Input("a", {4, 1}, Data({4, 1}, 13));
    const Tensor b = ar.Input("b", {1, 6}, Data({1, 6}, 14));
    ExpectChainMatchesUnfused(
        ar, {a, b},
        {ChainUnary("exp", ChainInput(0)), ChainBinary("floor_mod", ChainResult(0), ChainInput(1)),
         ChainBinary("floor_divide", ChainInput(1), ChainResult(1))},
        s);
  }
  SUBCASE("one element") {
    const Tensor a = ar.Input("a", {1}, {0.3f}), b = ar.Input("b", {}, {-2.0f});
    ExpectChainMatchesUnfused(
        ar, {a, b},
        {ChainBinary("multiply", ChainInput(0), ChainInput(1)), ChainUnary("abs", ChainResult(0))},
        {1});
  }
}

TEST_CASE("elementwise chain: special values and every parameterized op") {
  vkt::Arena ar(vkt::Ctx());
  for (const Shape& s : {Shape{2, 4, 8}, Shape{3, 3, 5}}) {
    CAPTURE(msc_vk::ShapeToString(s));
    const Tensor x = ar.Input("x", s, Data(s, 20, true, -6.0f, 6.0f));
    const Tensor y = ar.Input("y", s, Data(s, 21, true));
    // NaN propagation of maximum / minimum, clip, leakyrelu, softplus (both branches), selu.
    ExpectChainMatchesUnfused(
        ar, {x, y},
        {ChainBinary("maximum", ChainInput(0), ChainInput(1)),
         ChainUnary("clip", ChainResult(0), -1.5f, 4.0f),
         ChainUnary("nn.leakyrelu", ChainInput(1), 0.2f),
         ChainBinary("minimum", ChainResult(1), ChainResult(2)),
         ChainUnary("nn.softplus", ChainInput(0), 2.0f, 3.0f),
         ChainBinary("add", ChainResult(3), ChainResult(4)), ChainUnary("nn.selu", ChainResult(5)),
         ChainUnary("nn.gelu_tanh", ChainResult(6))},
        s);
    ExpectChainMatchesUnfused(
        ar, {x, y},
        {ChainUnary("rsqrt", ChainInput(0)), ChainUnary("negative", ChainInput(1)),
         ChainBinary("power", ChainResult(1), ChainInput(1)), ChainUnary("nn.silu", ChainResult(2)),
         ChainUnary("round", ChainResult(0)), ChainUnary("erf", ChainResult(3)),
         ChainUnary("sign", ChainResult(5)),
         ChainBinary("subtract", ChainResult(4), ChainResult(6))},
        s);
  }
}

TEST_CASE("elementwise chain: where with a bool condition (the attention mask pattern)") {
  vkt::Arena ar(vkt::Ctx());
  // gpt2_block: scores * 0.25, then where(causal mask [16, 16] bool, -inf, scaled).
  const Shape s = {1, 4, 16, 16};
  std::vector<uint8_t> mask(256);
  for (size_t i = 0; i < 16; ++i)
    for (size_t j = 0; j < 16; ++j) mask[i * 16 + j] = j > i ? 1 : 0;
  const Tensor scores = ar.Input("scores", s, Data(s, 30));
  const Tensor quarter = ar.Input("quarter", {}, {0.25f});
  const Tensor cond = BoolInput(ar, "mask", {16, 16}, mask);
  const Tensor ninf = ar.Input("ninf", {}, {-kInf});
  size_t n = 0;
  const auto got =
      ExpectChainMatchesUnfused(ar, {scores, quarter, cond, ninf},
                                {ChainBinary("multiply", ChainInput(0), ChainInput(1)),
                                 ChainWhere(ChainInput(2), ChainInput(3), ChainResult(0))},
                                s, &n);
  CHECK(n == 1);
  CHECK(std::isinf(got[1]));                                   // row 0, column 1: masked
  CHECK(got[16] == doctest::Approx(0.25f * Data(s, 30)[16]));  // row 1, column 0: kept
  // A float condition (a step result: nonzero and NaN are true), odd sizes.
  const Shape o = {3, 7};
  const Tensor c = ar.Input("c", o, Data(o, 31, true)), a = ar.Input("a", o, Data(o, 32));
  const Tensor b = ar.Input("b", {7}, Data({7}, 33));
  ExpectChainMatchesUnfused(ar, {c, a, b},
                            {ChainUnary("nn.relu", ChainInput(0)),
                             ChainWhere(ChainResult(0), ChainInput(1), ChainInput(2))},
                            o);
  // A bool condition read four at a time, not broadcast.
  std::vector<uint8_t> m2(24);
  for (size_t i = 0; i < m2.size(); ++i) m2[i] = (i * 7) % 3 == 0;
  const Tensor c2 = BoolInput(ar, "c2", {2, 12}, m2);
  const Tensor a2 = ar.Input("a2", {2, 12}, Data({2, 12}, 34));
  ExpectChainMatchesUnfused(
      ar, {c2, a2, quarter},
      {ChainWhere(ChainInput(0), ChainInput(1), ChainInput(2)), ChainUnary("exp", ChainResult(0))},
      {2, 12});
  // int64 / int32 / float16 conditions: true when the value is nonzero (int64 2^32 too, float16
  // -0.0 not), through the plain uint views.
  const std::vector<int64_t> i64 = {0, int64_t{1} << 32, -1, 0, 5, 0, int64_t{1} << 40, 0};
  const std::vector<int32_t> i32 = {0, 7, 0, -3, 0, 0, 1, 1};
  const std::vector<uint16_t> f16 = {0x0000, 0x8000, 0x3c00, 0x7e00, 0x0001, 0, 0xbc00, 0};
  for (const Tensor& cnd : {TypedInput(ar, "i64", DType::kInt64, {2, 4}, i64.data()),
                            TypedInput(ar, "i32", DType::kInt32, {2, 4}, i32.data()),
                            TypedInput(ar, "f16", DType::kFloat16, {2, 4}, f16.data())}) {
    CAPTURE(cnd.Describe());
    for (const Shape& cs : {Shape{2, 4}, Shape{1, 8}}) {
      Tensor c3 = cnd;
      c3.shape = cs;
      const Tensor a3 = ar.Input("a3", cs, Data(cs, 36));
      const auto got = ExpectChainMatchesUnfused(
          ar, {c3, a3, quarter}, {ChainWhere(ChainInput(0), ChainInput(1), ChainInput(2))}, cs);
      CHECK(got[1] == (cnd.dtype == DType::kFloat16 ? 0.25f : Data(cs, 36)[1]));
      CHECK(got[5] == 0.25f);
    }
  }
  // ... and read one at a time when the output is no multiple of 4.
  const Tensor c5 = TypedInput(ar, "i64x", DType::kInt64, {7}, i64.data());
  const Tensor a5 = ar.Input("a5", {7}, Data({7}, 37));
  const auto got5 = ExpectChainMatchesUnfused(
      ar, {c5, a5, quarter}, {ChainWhere(ChainInput(0), ChainInput(1), ChainInput(2))}, {7});
  CHECK(got5[1] == Data({7}, 37)[1]);
  CHECK(got5[0] == 0.25f);
}

TEST_CASE("elementwise chain: four broadcast inputs run step by step, three in one dispatch") {
  vkt::Arena ar(vkt::Ctx());
  // Four broadcast inputs (the kernel has stride slots for three) whose broadcast dims alternate:
  // no two of the 6 dims merge.
  const Shape s = {2, 3, 2, 3, 2, 4};
  const Shape sa = {2, 1, 2, 1, 2, 1}, sb = {1, 3, 1, 3, 1, 4}, sc = {2, 3, 1, 1, 2, 4},
              sd = {1, 3, 2, 1, 1, 4};
  const Tensor a = ar.Input("a", sa, Data(sa, 40)), b = ar.Input("b", sb, Data(sb, 41));
  const Tensor c = ar.Input("c", sc, Data(sc, 42)), d = ar.Input("d", sd, Data(sd, 43));
  size_t n = 0;
  ExpectChainMatchesUnfused(ar, {a, b, c, d},
                            {ChainBinary("add", ChainInput(0), ChainInput(1)),
                             ChainBinary("multiply", ChainResult(0), ChainInput(2)),
                             ChainBinary("subtract", ChainResult(1), ChainInput(3))},
                            s, &n, 0.0);
  CHECK(n == 3);
  // Three of them fit (6 dims, 3 stride slots): one dispatch.
  ExpectChainMatchesUnfused(ar, {a, b, c},
                            {ChainBinary("add", ChainInput(0), ChainInput(1)),
                             ChainBinary("multiply", ChainResult(0), ChainInput(2))},
                            s, &n);
  CHECK(n == 1);
}

TEST_CASE("elementwise chain: the pipeline is specialized per program") {
  // Two chains of the same shape and structure in one program, differing only in an op and a
  // parameter: each must compute its own program (the pipeline cache keys on the constants).
  vkt::Arena ar(vkt::Ctx());
  const Shape s = {8, 8};
  const auto xv = Data(s, 50);
  const Tensor x = ar.Input("x", s, xv), k = ar.Input("k", {}, {3.0f});
  const Tensor y1 = ar.Alloc("y1", s), y2 = ar.Alloc("y2", s), y3 = ar.Alloc("y3", s);
  msc_vk::Program p(vkt::Ctx());
  ops::ElementwiseChain(p, {x, k},
                        {ChainBinary("add", ChainInput(0), ChainInput(1)),
                         ChainUnary("clip", ChainResult(0), 0, 3.5f)},
                        y1);
  ops::ElementwiseChain(p, {x, k},
                        {ChainBinary("subtract", ChainInput(0), ChainInput(1)),
                         ChainUnary("clip", ChainResult(0), -3.5f, 0)},
                        y2);
  ops::ElementwiseChain(p, {x, k},
                        {ChainBinary("add", ChainInput(0), ChainInput(1)),
                         ChainUnary("clip", ChainResult(0), 0, 2.5f)},
                        y3);
  p.Run();
  std::vector<float> w1(xv.size()), w2(xv.size()), w3(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    w1[i] = std::min(std::max(xv[i] + 3.0f, 0.0f), 3.5f);
    w2[i] = std::min(std::max(xv[i] - 3.0f, -3.5f), 0.0f);
    w3[i] = std::min(std::max(xv[i] + 3.0f, 0.0f), 2.5f);
  }
  vkt::ExpectClose(ar.Read(y1), w1, 0, 0, "y1");
  vkt::ExpectClose(ar.Read(y2), w2, 0, 0, "y2");
  vkt::ExpectClose(ar.Read(y3), w3, 0, 0, "y3");
  vkt::ExpectNoValidationMessages(vkt::Ctx());
}

TEST_CASE("elementwise chain: errors name the chain and the step") {
  vkt::Arena ar(vkt::Ctx());
  const Tensor x = ar.Input("x", {2, 4}, Data({2, 4}, 60)), y = ar.Alloc("out", {2, 4});
  const Tensor z = ar.Input("z", {3}, Data({3}, 61));
  msc_vk::Program p(vkt::Ctx());
  const auto run = [&](std::vector<Tensor> in, std::vector<ops::ChainStep> st, const Tensor& out) {
    return [&p, in, st, out] { ops::ElementwiseChain(p, in, st, out); };
  };
  vkt::ExpectError(run({x}, {}, y), "elementwise chain 'out': has 0 steps; 1 to 8");
  vkt::ExpectError(run({x}, std::vector<ops::ChainStep>(9, ChainUnary("exp", ChainInput(0))), y),
                   "has 9 steps");
  vkt::ExpectError(run({x, x, x, x, x}, {ChainUnary("exp", ChainInput(0))}, y),
                   "has 5 inputs; at most 4");
  vkt::ExpectError(run({x}, {ChainBinary("equal", ChainInput(0), ChainInput(0))}, y),
                   "step 0 ('equal') is not a float-valued elementwise op");
  vkt::ExpectError(run({x}, {ChainUnary("astype", ChainInput(0))}, y),
                   "step 0 ('astype') is not a float-valued");
  vkt::ExpectError(run({x}, {ChainBinary("add", ChainInput(0), ChainResult(0))}, y),
                   "step 0 ('add') reads the result of step 0, which is not an earlier step");
  vkt::ExpectError(run({x}, {ChainUnary("exp", ChainInput(1))}, y),
                   "step 0 ('exp') reads input 1 of 1");
  vkt::ExpectError(run({x}, {ops::ChainStep{"add", {ChainInput(0)}}}, y),
                   "step 0 ('add') takes 2 operands, got 1");
  vkt::ExpectError(run({x, z}, {ChainBinary("add", ChainInput(0), ChainInput(1))}, y),
                   "step 0 ('add'): operand shapes [2, 4] and [3] do not broadcast");
  vkt::ExpectError(run({z}, {ChainUnary("exp", ChainInput(0))}, y),
                   "the last step computes shape [3], not the output's [2, 4]");
  vkt::ExpectError(run({x}, {ChainUnary("exp", ChainInput(0))}, x), "shares bytes with the output");
  Tensor b = BoolInput(ar, "b", {2, 4}, std::vector<uint8_t>(8, 1));
  vkt::ExpectError(run({b, x}, {ChainBinary("add", ChainInput(0), ChainInput(1))}, y),
                   "input 0 'b' bool [2, 4] must be float32 or float16 (only a where condition");
  Tensor yb = y;
  yb.dtype = DType::kInt32;
  vkt::ExpectError(run({x}, {ChainUnary("exp", ChainInput(0))}, yb), "must be float32 or float16");
  CHECK(p.num_dispatches() == 0);
}
