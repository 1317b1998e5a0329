// Graph passes (generator/passes): BatchNorm folding, constant folding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "generator/common/error.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/passes/passes.h"
#include "generator/weights/values.h"

using msc::ir::Json;

namespace {

Json T(const std::string& name, std::vector<int64_t> shape, const std::string& layout = "") {
  return {{"name", name},     {"alias", ""},    {"dtype", "float32"},
          {"layout", layout}, {"shape", shape}, {"prims", Json::array()}};
}

Json Node(int64_t index, const std::string& name, const std::string& optype,
          std::vector<std::string> inputs, Json outputs, Json attrs = Json::object(),
          Json weights = Json::object()) {
  std::vector<std::string> parents;
  for (const auto& in : inputs) {
    const std::string p = in.substr(0, in.rfind(':'));
    if (std::find(parents.begin(), parents.end(), p) == parents.end()) parents.push_back(p);
  }
  return {{"index", index},     {"name", name},       {"shared_ref", ""},
          {"optype", optype},   {"parents", parents}, {"inputs", inputs},
          {"outputs", outputs}, {"attrs", attrs},     {"weights", weights}};
}

msc::weights::Tensor F32(std::vector<int64_t> shape, const std::vector<float>& v) {
  std::vector<uint8_t> b(4 * v.size());
  std::memcpy(b.data(), v.data(), b.size());
  return {"float32", shape, std::move(b)};
}

std::vector<float> Values(const msc::weights::Tensor& t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

/// x [1,2,3,3] -> conv (2 out channels, 1x1, weight w) -> batch_norm -> get_item 0 -> relu, plus
/// a second reader of the batch_norm result when `bn_is_output`: the batch_norm output is a graph
/// output.
msc::ir::MSCGraph ConvBn(bool bn_is_output = false) {
  const Json conv_attrs = {{"strides", "1,1"},      {"padding", "0,0,0,0"},
                           {"dilation", "1,1"},     {"groups", "1"},
                           {"data_layout", "NCHW"}, {"kernel_layout", "OIHW"},
                           {"out_layout", "NCHW"},  {"out_dtype", "float32"}};
  const Json bn_attrs = {{"axis", "1"},  {"epsilon", "0.500000"}, {"center", "1"},
                         {"scale", "1"}, {"momentum", "0.1"},     {"training", "1"}};
  Json nodes = Json::array();
  nodes.push_back(Node(0, "x", "input", {}, Json::array({T("x:0", {1, 2, 3, 3}, "NCHW")})));
  nodes.push_back(Node(1, "conv", "nn.conv2d", {"x:0"}, Json::array({T("conv:0", {1, 2, 3, 3})}),
                       conv_attrs, {{"weight", T("w", {2, 2, 1, 1}, "OIHW")}}));
  nodes.push_back(Node(2, "bn", "nn.batch_norm", {"conv:0"}, Json::array({T("bn:0", {1, 2, 3, 3})}),
                       bn_attrs,
                       {{"gamma", T("g", {2})},
                        {"beta", T("b", {2})},
                        {"mean", T("m", {2})},
                        {"var", T("v", {2})}}));
  nodes.push_back(Node(3, "bn.0", "get_item", {"bn:0"}, Json::array({T("bn.0:0", {1, 2, 3, 3})}),
                       {{"index", "0"}}));
  nodes.push_back(Node(4, "relu", "nn.relu", {"bn.0:0"}, Json::array({T("relu:0", {1, 2, 3, 3})})));
  Json g = {{"name", "main"},
            {"inputs", {"x:0"}},
            {"outputs", bn_is_output ? Json({"relu:0", "bn.0:0"}) : Json({"relu:0"})},
            {"nodes", nodes}};
  return msc::ir::ParseGraph(g.dump(), "g.json");
}

msc::weights::TensorMap Weights() {
  return {{"w", F32({2, 2, 1, 1}, {1, 2, 3, 4})},
          {"g", F32({2}, {2, 3})},
          {"b", F32({2}, {0.5f, -1})},
          {"m", F32({2}, {1, 2})},
          {"v", F32({2}, {3.5f, 8.5f})}};
}

}  // namespace

TEST_SUITE("passes") {
  TEST_CASE("fold_batch_norm: weights, bias, removed nodes, rewired readers") {
    auto g = ConvBn();
    auto w = Weights();
    auto done = msc::passes::FoldBatchNorm(g, w);
    REQUIRE(done.size() == 2);
    CHECK(done[0].node == "bn");
    CHECK(done[0].into == "conv");
    CHECK(done[1].node == "bn.0");
    REQUIRE(g.nodes.size() == 3);
    const auto& conv = g.nodes[1];
    CHECK(conv.optype == "msc.conv2d_bias");
    CHECK(g.nodes[2].name == "relu");
    CHECK(g.nodes[2].index == 2);
    CHECK(g.nodes[2].inputs == std::vector<std::string>{"conv:0"});
    CHECK(g.nodes[2].parents == std::vector<std::string>{"conv"});
    // var + eps = {4, 9}, so s = gamma / sqrt(var + eps) = {2/2, 3/3} = {1, 1}: W' = W and
    // b' = (0 - mean) * s + beta = {-1 + 0.5, -2 - 1} = {-0.5, -3}.
    const std::string wname = conv.FindWeight("weight")->name;
    const std::string bname = conv.FindWeight("bias")->name;
    CHECK(wname == "w.folded");
    CHECK(bname == "conv.bias.folded");
    CHECK(Values(w.at(wname)) == std::vector<float>{1, 2, 3, 4});
    CHECK(Values(w.at(bname)) == std::vector<float>{-0.5f, -3});
    // The batch_norm's weights are gone from the project's weights; the graph still validates.
    CHECK(w.count("g") == 0);
    CHECK(w.count("w") == 0);
    auto opdefs = msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
    CHECK_NOTHROW(msc::ir::Validate(g, &opdefs));
  }

  TEST_CASE("fold_batch_norm: scale per channel, existing bias, center/scale off") {
    auto g = ConvBn();
    auto w = Weights();
    w["v"] = F32({2}, {0.5f, 3.5f});  // var + eps = {1, 4}: s = {2, 1.5}
    auto done = msc::passes::FoldBatchNorm(g, w);
    REQUIRE(done.size() == 2);
    CHECK(Values(w.at("w.folded")) == std::vector<float>{2, 4, 4.5f, 6});
    CHECK(Values(w.at("conv.bias.folded")) == std::vector<float>{-1.5f, -4});  // -m*s + beta
    // center="0", scale="0": gamma = 1, beta = 0.
    g = ConvBn();
    w = Weights();
    for (auto& [k, v] : g.nodes[2].attrs)
      if (k == "center" || k == "scale") v = "0";
    REQUIRE(msc::passes::FoldBatchNorm(g, w).size() == 2);
    const float s0 = 1 / std::sqrt(4.0f), s1 = 1 / std::sqrt(9.0f);
    const auto bias = Values(w.at("conv.bias.folded"));
    CHECK(bias[0] == doctest::Approx(-1 * s0));
    CHECK(bias[1] == doctest::Approx(-2 * s1));
  }

  TEST_CASE("fold_batch_norm leaves alone what it cannot fold") {
    auto w = Weights();
    auto g = ConvBn(/*bn_is_output=*/true);  // the get_item's output is a graph output
    CHECK(msc::passes::FoldBatchNorm(g, w).empty());
    CHECK(g.nodes.size() == 5);
    g = ConvBn();
    for (auto& [k, v] : g.nodes[2].attrs)
      if (k == "axis") v = "2";  // not the channel axis
    CHECK(msc::passes::FoldBatchNorm(g, w).empty());
    g = ConvBn();
    w.erase("v");  // a weight not bound: nothing to fold with
    CHECK(msc::passes::FoldBatchNorm(g, w).empty());
  }

  TEST_CASE("RunPasses rejects unknown pass names") {
    auto g = ConvBn();
    auto w = Weights();
    CHECK_THROWS_WITH(msc::passes::RunPasses({"fold_everything"}, g, w),
                      doctest::Contains("unknown graph pass 'fold_everything'"));
  }
}

// ---- fold_constant ------------------------------------------------------------------------------

namespace {

using msc::weights::TensorDoubles;

const msc::opdef::OpDefRegistry& Opdefs() {
  static const auto reg =
      msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
  return reg;
}

/// A graph under construction for fold_constant: constants get a weight "<node>.w".
struct FoldGraph {
  Json nodes = Json::array();
  std::vector<std::string> inputs;
  msc::weights::TensorMap weights;

  static Json Tensor(const std::string& name, const std::string& dtype,
                     std::vector<int64_t> shape) {
    return {{"name", name}, {"alias", ""},    {"dtype", dtype},
            {"layout", ""}, {"shape", shape}, {"prims", Json::array()}};
  }
  std::string Add(const std::string& name, const std::string& optype, std::vector<std::string> ins,
                  Json outputs, Json attrs = Json::object(), Json w = Json::object()) {
    nodes.push_back(Node(static_cast<int64_t>(nodes.size()), name, optype, std::move(ins),
                         std::move(outputs), std::move(attrs), std::move(w)));
    return name + ":0";
  }
  std::string Input(const std::string& name, const std::string& dtype, std::vector<int64_t> shape) {
    inputs.push_back(Add(name, "input", {}, Json::array({Tensor(name + ":0", dtype, shape)})));
    return inputs.back();
  }
  std::string Const(const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
                    const std::vector<double>& values, const std::string& weight = "") {
    const std::string w = weight.empty() ? name + ".w" : weight;
    weights[w] = msc::weights::MakeTensor(dtype, shape, values);
    return Add(name, "constant", {}, Json::array({Tensor(name + ":0", dtype, shape)}),
               Json::object(), {{"const", Tensor(w, dtype, shape)}});
  }
  /// A one-output node.
  std::string Op(const std::string& name, const std::string& optype, std::vector<std::string> ins,
                 const std::string& dtype, std::vector<int64_t> shape,
                 Json attrs = Json::object()) {
    return Add(name, optype, std::move(ins), Json::array({Tensor(name + ":0", dtype, shape)}),
               std::move(attrs));
  }
  /// Parses the graph, runs `pass` (fold_constant), checks the result validates against the
  /// opdefs.
  std::vector<msc::passes::Folded> Fold(msc::ir::MSCGraph& g, std::vector<std::string> outputs,
                                        std::vector<msc::passes::Folded> (*pass)(
                                            msc::ir::MSCGraph&,
                                            msc::weights::TensorMap&) = msc::passes::FoldConstant) {
    Json j = {{"name", "main"}, {"inputs", inputs}, {"outputs", outputs}, {"nodes", nodes}};
    g = msc::ir::ParseGraph(j.dump(), "fold.json");
    REQUIRE_NOTHROW(msc::ir::Validate(g, &Opdefs()));
    auto done = pass(g, weights);
    REQUIRE_NOTHROW(msc::ir::Validate(g, &Opdefs()));
    return done;
  }
  /// The values of the constant node `name` (it must be one) after folding.
  std::vector<double> Folded(const msc::ir::MSCGraph& g, const std::string& name) {
    const msc::ir::MSCJoint* n = g.FindNode(name);
    REQUIRE(n != nullptr);
    REQUIRE(n->optype == "constant");
    const auto& t = weights.at(n->FindWeight("const")->name);
    CHECK(t.dtype == n->outputs[0].dtype);
    CHECK(t.shape == n->outputs[0].shape);
    return TensorDoubles(t);
  }
};

std::vector<double> D(std::initializer_list<double> v) { return v; }

bool IsConstant(const msc::ir::MSCGraph& g, const std::string& name) {
  const msc::ir::MSCJoint* n = g.FindNode(name);
  return n && n->optype == "constant";
}

}  // namespace

TEST_SUITE("passes") {
  TEST_CASE("fold_constant: a chain folds into one constant; records and removed nodes") {
    FoldGraph f;
    const auto x = f.Input("x", "float32", {2, 3});
    const auto w = f.Const("w", "float32", {3, 2}, {0.1, 1, 2, 3, 4, 5});
    const auto p = f.Op("p", "permute_dims", {w}, "float32", {2, 3}, {{"axes", "1,0"}});
    const auto h = f.Op("h", "astype", {p}, "float16", {2, 3}, {{"dtype", "float16"}});
    const auto h32 = f.Op("h32", "astype", {h}, "float32", {2, 3}, {{"dtype", "float32"}});
    const auto y = f.Op("y", "multiply", {x, h32}, "float32", {2, 3});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {y});
    // w, p and h are gone; h32 is the constant; x and y untouched.
    REQUIRE(g.nodes.size() == 3);
    CHECK(g.nodes[0].name == "x");
    CHECK(g.nodes[1].name == "h32");
    CHECK(g.nodes[1].index == 1);
    CHECK(g.nodes[1].optype == "constant");
    CHECK(g.nodes[1].inputs.empty());
    CHECK(g.nodes[1].parents.empty());
    CHECK(g.nodes[1].outputs[0].name == "h32:0");
    CHECK(g.nodes[1].FindWeight("const")->name == "h32.folded");
    CHECK(g.nodes[2].inputs == std::vector<std::string>{"x:0", "h32:0"});
    CHECK(g.nodes[2].index == 2);
    // transposed, through float16: 0.1 -> 0.0999755859375 (half 0x2E66), the integers exact
    CHECK(f.Folded(g, "h32") == D({0.0999755859375, 2, 4, 1, 3, 5}));
    // only the weight the graph still reads is left
    CHECK(f.weights.size() == 1);
    CHECK(f.weights.count("h32.folded") == 1);
    REQUIRE(done.size() == 4);
    const std::vector<std::string> folded = {done[0].node, done[1].node, done[2].node,
                                             done[3].node};
    CHECK(folded == std::vector<std::string>{"w", "p", "h", "h32"});
    for (const auto& d : done) {
      CHECK(d.pass == "fold_constant");
      CHECK(d.into == "h32");
    }
    // RunPasses knows the pass by name.
    CHECK(msc::passes::RunPasses({"fold_constant"}, g, f.weights).empty());
  }

  TEST_CASE("fold_constant: float32 binary ops with numpy broadcasting, rounded as float") {
    FoldGraph f;
    const auto a = f.Const("a", "float32", {3}, {1, 2, 3});
    const auto b = f.Const("b", "float32", {2, 1}, {10, 20});
    const auto two = f.Const("two", "float32", {}, {2});
    const auto c = f.Const("c", "float32", {3}, {2, NAN, 0});
    std::vector<std::string> outs;
    for (const char* op : {"add", "subtract", "multiply", "divide"})
      outs.push_back(f.Op(op, op, {a, b}, "float32", {2, 3}));
    outs.push_back(f.Op("power", "power", {a, two}, "float32", {3}));
    outs.push_back(f.Op("maximum", "maximum", {a, c}, "float32", {3}));
    outs.push_back(f.Op("minimum", "minimum", {a, c}, "float32", {3}));
    msc::ir::MSCGraph g;
    f.Fold(g, outs);
    CHECK(g.nodes.size() == 7);  // a, b, two and c are read by nothing any more
    CHECK(f.Folded(g, "add") == D({11, 12, 13, 21, 22, 23}));
    CHECK(f.Folded(g, "subtract") == D({-9, -8, -7, -19, -18, -17}));
    CHECK(f.Folded(g, "multiply") == D({10, 20, 30, 20, 40, 60}));
    // float32 quotients: 1/10 is 0.100000001490116..., not the double 0.1
    CHECK(f.Folded(g, "divide") ==
          D({1.0f / 10, 2.0f / 10, 3.0f / 10, 1.0f / 20, 2.0f / 20, 3.0f / 20}));
    CHECK(f.Folded(g, "divide")[0] == 0.100000001490116119384765625);
    CHECK(f.Folded(g, "power") == D({1, 4, 9}));
    const auto mx = f.Folded(g, "maximum"), mn = f.Folded(g, "minimum");
    CHECK(mx[0] == 2);
    CHECK(std::isnan(mx[1]));  // NaN propagates
    CHECK(mx[2] == 3);
    CHECK(mn[0] == 1);
    CHECK(std::isnan(mn[1]));
    CHECK(mn[2] == 0);
  }

  TEST_CASE("fold_constant: integer ops wrap, divide truncates, floor ops; division by zero") {
    FoldGraph f;
    const auto a = f.Const("a", "int32", {4}, {2147483647, -7, 7, -7});
    const auto b = f.Const("b", "int32", {4}, {1, 2, -2, 3});
    const auto z = f.Const("z", "int32", {4}, {1, 1, 1, 0});
    std::vector<std::string> outs;
    for (const char* op :
         {"add", "subtract", "divide", "floor_divide", "floor_mod", "maximum", "bitwise_and"})
      outs.push_back(f.Op(op, op, {a, b}, "int32", {4}));
    outs.push_back(f.Op("by_zero", "divide", {a, z}, "int32", {4}));
    outs.push_back(f.Op("neg", "negative", {a}, "int32", {4}));
    msc::ir::MSCGraph g;
    f.Fold(g, outs);
    CHECK(f.Folded(g, "add") == D({-2147483648.0, -5, 5, -4}));  // int32 wraps
    CHECK(f.Folded(g, "subtract") == D({2147483646, -9, 9, -10}));
    CHECK(f.Folded(g, "divide") == D({2147483647, -3, -3, -2}));  // toward zero
    CHECK(f.Folded(g, "floor_divide") == D({2147483647, -4, -4, -3}));
    CHECK(f.Folded(g, "floor_mod") == D({0, 1, -1, 2}));  // sign of the divisor
    CHECK(f.Folded(g, "maximum") == D({2147483647, 2, 7, 3}));
    CHECK(f.Folded(g, "bitwise_and") == D({1, 0, 6, 1}));
    CHECK(f.Folded(g, "neg") == D({-2147483647, 7, -7, 7}));
    // an integer division by zero is undefined: left alone, with the constants it reads
    CHECK(g.FindNode("by_zero")->optype == "divide");
    CHECK(IsConstant(g, "a"));
    CHECK(IsConstant(g, "z"));
    CHECK(g.FindNode("b") == nullptr);
  }

  TEST_CASE("fold_constant: arange, a comparison mask, where") {
    FoldGraph f;
    const auto r = f.Op(
        "r", "arange", {}, "int64", {4},
        {{"start", "0.000000"}, {"end", "4.000000"}, {"step", "1.000000"}, {"dtype", "int64"}});
    const auto two = f.Const("two", "int64", {}, {2});
    const auto m = f.Op("m", "less", {r, two}, "bool", {4});
    const auto ge = f.Op("ge", "greater_equal", {r, two}, "bool", {4});
    const auto x = f.Const("x", "float32", {4}, {1, 2, 3, 4});
    const auto y = f.Const("y", "float32", {}, {-1});
    const auto s = f.Op("s", "where", {m, x, y}, "float32", {4});
    const auto fr = f.Op(
        "fr", "arange", {}, "float32", {4},
        {{"start", "1.000000"}, {"end", "3.000000"}, {"step", "0.500000"}, {"dtype", "float32"}});
    const auto down = f.Op(
        "down", "arange", {}, "int32", {3},
        {{"start", "10.000000"}, {"end", "1.000000"}, {"step", "-3.000000"}, {"dtype", "int32"}});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {s, ge, fr, down});
    CHECK(f.Folded(g, "ge") == D({0, 0, 1, 1}));
    CHECK(f.Folded(g, "s") == D({1, 2, -1, -1}));
    CHECK(f.Folded(g, "fr") == D({1, 1.5, 2, 2.5}));
    CHECK(f.Folded(g, "down") == D({10, 7, 4}));
    CHECK(g.FindNode("m") == nullptr);
    CHECK(g.FindNode("r") == nullptr);
    CHECK(g.FindNode("s")->FindWeight("const")->dtype == "float32");
    // the mask's records point at the where that took it
    bool m_into_s = false;
    for (const auto& d : done) m_into_s = m_into_s || (d.node == "m" && d.into == "s");
    CHECK(m_into_s);
  }

  TEST_CASE("fold_constant: astype, unary ops") {
    FoldGraph f;
    const auto v = f.Const("v", "float32", {4}, {-2.7, 2.7, 0, 0.1});
    const auto big = f.Const("big", "int64", {2}, {16777217, -3});
    const auto w = f.Const("w", "int32", {2}, {300, -1});
    const auto nan = f.Const("nan", "float32", {1}, {NAN});
    const auto u = f.Const("u", "float32", {4}, {0, 1, 4, 0.25});
    const auto h = f.Const("h", "float32", {4}, {2.5, -0.5, 1.5, -3});
    std::vector<std::string> outs = {
        f.Op("i", "astype", {v}, "int32", {4}, {{"dtype", "int32"}}),
        f.Op("bo", "astype", {v}, "bool", {4}, {{"dtype", "bool"}}),
        f.Op("half", "cast", {v}, "float16", {4}, {{"dtype", "float16"}}),
        f.Op("f", "astype", {big}, "float32", {2}, {{"dtype", "float32"}}),
        f.Op("u8", "astype", {w}, "uint8", {2}, {{"dtype", "uint8"}}),
        f.Op("nan_int", "astype", {nan}, "int32", {1}, {{"dtype", "int32"}}),
        f.Op("exp", "exp", {u}, "float32", {4}),
        f.Op("log", "log", {u}, "float32", {4}),
        f.Op("sqrt", "sqrt", {u}, "float32", {4}),
        f.Op("rsqrt", "rsqrt", {u}, "float32", {4}),
        f.Op("abs", "abs", {h}, "float32", {4}),
        f.Op("negative", "negative", {h}, "float32", {4}),
        f.Op("round", "round", {h}, "float32", {4}),
        f.Op("floor", "floor", {h}, "float32", {4}),
        f.Op("isnan", "isnan", {nan}, "bool", {1}),
        f.Op("int_exp", "exp", {w}, "int32", {2}),
    };
    msc::ir::MSCGraph g;
    f.Fold(g, outs);
    CHECK(f.Folded(g, "i") == D({-2, 2, 0, 0}));  // truncated toward zero
    CHECK(f.Folded(g, "bo") == D({1, 1, 0, 1}));
    // nearest halves: 2.7 -> 2.69921875 (mantissa 358/1024), 0.1 -> 0.0999755859375
    CHECK(f.Folded(g, "half") == D({-2.69921875, 2.69921875, 0, 0.0999755859375}));
    CHECK(f.Folded(g, "f") == D({16777216, -3}));      // 2^24 + 1 rounds to even in float32
    CHECK(f.Folded(g, "u8") == D({44, 255}));          // wraps modulo 256
    CHECK(g.FindNode("nan_int")->optype == "astype");  // undefined: not folded
    const auto e = f.Folded(g, "exp");
    CHECK(e[0] == 1);
    CHECK(e[1] == doctest::Approx(2.718281828));
    CHECK(e[2] == doctest::Approx(54.59815));
    const auto l = f.Folded(g, "log");
    CHECK(std::isinf(l[0]));
    CHECK(l[0] < 0);
    CHECK(l[1] == 0);
    CHECK(l[3] == doctest::Approx(-1.3862944));
    CHECK(f.Folded(g, "sqrt") == D({0, 1, 2, 0.5}));
    const auto rs = f.Folded(g, "rsqrt");
    CHECK(std::isinf(rs[0]));
    CHECK(D({rs[1], rs[2], rs[3]}) == D({1, 0.5, 2}));
    CHECK(f.Folded(g, "abs") == D({2.5, 0.5, 1.5, 3}));
    CHECK(f.Folded(g, "negative") == D({-2.5, 0.5, -1.5, 3}));
    CHECK(f.Folded(g, "round") == D({2, -0.0, 2, -3}));  // half to even
    CHECK(f.Folded(g, "floor") == D({2, -1, 1, -3}));
    CHECK(f.Folded(g, "isnan") == D({1}));
    CHECK(g.FindNode("int_exp")->optype == "exp");  // exp of integers: not folded
  }

  TEST_CASE("fold_constant: permute, reshape, broadcast_to, concat, strided_slice, take") {
    FoldGraph f;
    const auto x = f.Const("x", "float32", {2, 3}, {0, 1, 2, 3, 4, 5});
    const auto col = f.Const("col", "float32", {3, 1}, {1, 2, 3});
    const auto y = f.Const("y", "float32", {2, 1}, {9, 8});
    const auto idx = f.Const("idx", "int64", {2}, {-1, 0});
    const auto clip = f.Const("clip", "int32", {2}, {5, -1});
    const auto wrap = f.Const("wrap", "int64", {2}, {4, -1});
    const auto five = f.Const("five", "int64", {1}, {5});
    const auto three = f.Const("three", "int64", {1}, {3});
    std::vector<std::string> outs = {
        f.Op("t", "permute_dims", {x}, "float32", {3, 2}, {{"axes", "1,0"}}),
        f.Op("t_rev", "permute_dims", {x}, "float32", {3, 2}, {{"axes", ""}}),
        f.Op("re", "reshape", {x}, "float32", {3, 2}, {{"shape", "3,2"}}),
        f.Op("ex", "expand_dims", {x}, "float32", {2, 1, 3}, {{"axis", "1,"}}),
        f.Op("bc", "broadcast_to", {col}, "float32", {2, 3, 2}, {{"shape", "2,3,2"}}),
        f.Op("cat", "concat", {x, y}, "float32", {2, 4}, {{"axis", "-1"}}),
        f.Op("rev", "strided_slice", {x}, "float32", {2, 3},
             {{"axes", "1,"}, {"begin", "2,"}, {"end", "-4,"}, {"strides", "-1,"}}),
        f.Op(
            "row", "strided_slice", {x}, "float32", {1, 3},
            {{"axes", "0,1"}, {"begin", "1,0"}, {"end", "2,9223372036854775807"}, {"strides", ""}}),
        f.Op("take", "take", {x, idx}, "float32", {2, 2}, {{"axis", "1"}, {"mode", "fast"}}),
        f.Op("take_clip", "take", {x, clip}, "float32", {2, 2}, {{"axis", "1"}, {"mode", "clip"}}),
        f.Op("take_wrap", "take", {x, wrap}, "float32", {2, 2}, {{"axis", "1"}, {"mode", "wrap"}}),
        f.Op("take_flat", "take", {x, five}, "float32", {1}, {{"axis", ""}, {"mode", "fast"}}),
        f.Op("take_out", "take", {x, three}, "float32", {2, 1}, {{"axis", "1"}, {"mode", "fast"}}),
    };
    msc::ir::MSCGraph g;
    f.Fold(g, outs);
    CHECK(f.Folded(g, "t") == D({0, 3, 1, 4, 2, 5}));
    CHECK(f.Folded(g, "t_rev") == D({0, 3, 1, 4, 2, 5}));
    CHECK(f.Folded(g, "re") == D({0, 1, 2, 3, 4, 5}));
    CHECK(g.FindNode("re")->outputs[0].shape == std::vector<int64_t>{3, 2});
    CHECK(f.Folded(g, "ex") == D({0, 1, 2, 3, 4, 5}));
    CHECK(f.Folded(g, "bc") == D({1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
    CHECK(f.Folded(g, "cat") == D({0, 1, 2, 9, 3, 4, 5, 8}));
    // begin 2, end -4 -> -1 (clamped to -1 for a negative stride): columns 2, 1, 0
    CHECK(f.Folded(g, "rev") == D({2, 1, 0, 5, 4, 3}));
    CHECK(f.Folded(g, "row") == D({3, 4, 5}));
    CHECK(f.Folded(g, "take") == D({2, 0, 5, 3}));       // -1 is the last column
    CHECK(f.Folded(g, "take_clip") == D({2, 0, 5, 3}));  // 5 -> 2, -1 -> 0
    CHECK(f.Folded(g, "take_wrap") == D({1, 2, 4, 5}));  // 4 -> 1, -1 -> 2
    CHECK(f.Folded(g, "take_flat") == D({5}));
    CHECK(g.FindNode("take_out")->optype == "take");  // index 3 of 3 columns: not folded
  }

  TEST_CASE("fold_constant: split + get_item, tril / triu, full, ones, zeros, ones_like") {
    FoldGraph f;
    const auto x = f.Const("x", "float32", {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    Json three = Json::array();
    for (int k = 0; k < 3; ++k)
      three.push_back(FoldGraph::Tensor("s:" + std::to_string(k), "float32", {2, 2}));
    f.Add("s", "split", {x}, three, {{"indices_or_sections", "3"}, {"axis", "1"}});
    const std::vector<std::string> parts = {"s:0", "s:1", "s:2"};
    const auto g1 = f.Op("s.1", "get_item", parts, "float32", {2, 2}, {{"index", "1"}});
    Json pieces = Json::array({FoldGraph::Tensor("si:0", "float32", {2, 1}),
                               FoldGraph::Tensor("si:1", "float32", {2, 3}),
                               FoldGraph::Tensor("si:2", "float32", {2, 2})});
    f.Add("si", "split", {x}, pieces, {{"indices_or_sections", "1,4,"}, {"axis", "-1"}});
    const auto x2 = f.Input("in", "float32", {2, 3});
    const auto mid = f.Op("mid", "add", {x2, "si:1"}, "float32", {2, 3});
    const auto ones =
        f.Op("ones", "ones", {}, "float32", {3, 3}, {{"shape", "3,3"}, {"dtype", "float32"}});
    const auto lo = f.Op("lo", "tril", {ones}, "float32", {3, 3}, {{"k", "0"}});
    const auto up = f.Op("up", "triu", {ones}, "float32", {3, 3}, {{"k", "1"}});
    const auto tl = f.Op("tl", "trilu", {ones}, "float32", {3, 3}, {{"k", "-1"}, {"upper", "0"}});
    const auto fill = f.Const("fill", "float32", {}, {2.5});
    const auto full =
        f.Op("full", "full", {fill}, "float32", {2, 2}, {{"shape", "2,2"}, {"dtype", ""}});
    const auto fi = f.Op("fi", "full", {fill}, "int32", {2}, {{"shape", "2,"}, {"dtype", "int32"}});
    const auto z = f.Op("z", "zeros", {}, "float16", {3}, {{"shape", "3,"}, {"dtype", "float16"}});
    const auto ol = f.Op("ol", "ones_like", {fill}, "int64", {}, {{"dtype", "int64"}});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {g1, mid, "si:2", lo, up, tl, full, fi, z, ol});
    CHECK(f.Folded(g, "s.1") == D({2, 3, 8, 9}));
    // s's three constants were read only by s.1: gone; x is still read by si
    CHECK(g.FindNode("s") == nullptr);
    CHECK(g.FindNode("s.out1") == nullptr);
    CHECK(IsConstant(g, "x"));
    // si has a graph output ("si:2"), whose name a constant could not keep: not folded
    CHECK(g.FindNode("si")->optype == "split");
    CHECK(f.Folded(g, "lo") == D({1, 0, 0, 1, 1, 0, 1, 1, 1}));
    CHECK(f.Folded(g, "up") == D({0, 1, 1, 0, 0, 1, 0, 0, 0}));
    CHECK(f.Folded(g, "tl") == D({0, 0, 0, 1, 0, 0, 1, 1, 0}));
    CHECK(f.Folded(g, "full") == D({2.5, 2.5, 2.5, 2.5}));
    CHECK(f.Folded(g, "fi") == D({2, 2}));
    CHECK(f.Folded(g, "z") == D({0, 0, 0}));
    CHECK(f.Folded(g, "ol") == D({1}));
    CHECK(g.FindNode("ones") == nullptr);
    // the split's record points at the get_item that took its field
    bool s_into = false;
    for (const auto& d : done) s_into = s_into || (d.node == "s" && d.into == "s.1");
    CHECK(s_into);
  }

  TEST_CASE("fold_constant: a multi-output node read by other nodes becomes one constant each") {
    FoldGraph f;
    const auto x = f.Const("x", "float32", {4}, {1, 2, 3, 4});
    Json two = Json::array(
        {FoldGraph::Tensor("s:0", "float32", {2}), FoldGraph::Tensor("s:1", "float32", {2})});
    f.Add("s", "split", {x}, two, {{"indices_or_sections", "2"}, {"axis", "0"}});
    const auto in = f.Input("in", "float32", {2});
    const auto a = f.Op("a", "add", {in, "s:1"}, "float32", {2});
    const auto b = f.Op("b", "subtract", {in, "s:0"}, "float32", {2});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {a, b});
    CHECK(f.Folded(g, "s.out0") == D({1, 2}));
    CHECK(f.Folded(g, "s.out1") == D({3, 4}));
    CHECK(g.FindNode("a")->inputs == std::vector<std::string>{"in:0", "s.out1:0"});
    CHECK(g.FindNode("a")->parents == std::vector<std::string>{"in", "s.out1"});
    CHECK(g.FindNode("b")->inputs == std::vector<std::string>{"in:0", "s.out0:0"});
    REQUIRE(done.size() == 3);
    CHECK(done[0].node == "x");
    CHECK(done[0].into == "s.out0");
    CHECK(done[1].node == "s");
    CHECK(done[1].into == "s.out0");
    CHECK(done[2].into == "s.out1");
  }

  TEST_CASE("fold_constant: the size guard") {
    FoldGraph f;
    // 256 x 1024 float32 = 1 MiB: folded; 512 x 1024 = 2 MiB from no inputs: not folded
    const auto ok = f.Op("ok", "ones", {}, "float32", {256, 1024},
                         {{"shape", "256,1024"}, {"dtype", "float32"}});
    const auto big = f.Op("big", "ones", {}, "float32", {512, 1024},
                          {{"shape", "512,1024"}, {"dtype", "float32"}});
    // broadcast 4 KiB to 2 MiB: not folded; permute 2 MiB -> 2 MiB (<= 2 x its input): folded
    const auto row = f.Const("row", "float32", {1024}, std::vector<double>(1024, 1.5));
    const auto bc =
        f.Op("bc", "broadcast_to", {row}, "float32", {512, 1024}, {{"shape", "512,1024"}});
    const auto m = f.Const("m", "float32", {1024, 512}, std::vector<double>(512 * 1024, 0.5));
    const auto t = f.Op("t", "permute_dims", {m}, "float32", {512, 1024}, {{"axes", "1,0"}});
    msc::ir::MSCGraph g;
    f.Fold(g, {ok, big, bc, t});
    CHECK(IsConstant(g, "ok"));
    CHECK(g.FindNode("big")->optype == "ones");
    CHECK(g.FindNode("bc")->optype == "broadcast_to");
    CHECK(IsConstant(g, "row"));
    CHECK(IsConstant(g, "t"));
    CHECK(g.FindNode("m") == nullptr);
    CHECK(f.weights.at("ok.folded").data.size() == 1 << 20);
  }

  TEST_CASE("fold_constant leaves alone what it does not fold; shared weights are kept") {
    FoldGraph f;
    const auto x = f.Input("x", "float32", {2, 2});
    const auto a = f.Const("a", "float32", {2, 2}, {1, 2, 3, 4}, "shared");
    const auto b = f.Const("b", "float32", {2, 2}, {1, 2, 3, 4}, "shared");
    const auto i64 = f.Const("i64", "int64", {2, 2}, {1, 2, 3, 4});
    const auto i32 = f.Const("i32", "int32", {2, 2}, {1, 2, 3, 4});
    const auto bf = f.Const("bf", "bfloat16", {2}, {1, 2});
    std::vector<std::string> outs = {
        f.Op("mm", "matmul", {a, b}, "float32", {2, 2}, {{"out_dtype", ""}}),  // not evaluated
        f.Op("dyn", "negative", {a}, "float32", {-1, 2}),                      // dynamic shape
        f.Op("mixed", "add", {i64, i32}, "int64", {2, 2}),                     // dtypes differ
        f.Op("bfn", "negative", {bf}, "bfloat16", {2}),                        // bfloat16
        f.Op("lie", "add", {a, b}, "float32", {4}),  // declared shape wrong
        f.Op("bad", "permute_dims", {a}, "float32", {2, 2}, {{"axes", "x,y"}}),  // malformed
        f.Op("xin", "add", {x, a}, "float32", {2, 2}),                           // reads an input
        f.Op("t", "permute_dims", {b}, "float32", {2, 2}, {{"axes", "1,0"}}),
        f.Op("keep", "negative", {i64}, "int64", {2, 2}),
        f.Op("empty", "zeros", {}, "float32", {0, 3}, {{"shape", "0,3"}, {"dtype", "float32"}}),
        f.Op("sec", "split", {b}, "float32", {1, 2}, {{"indices_or_sections", "2"}}),  // 2 != 1 out
    };
    msc::ir::MSCGraph g;
    Json j = {{"name", "main"}, {"inputs", f.inputs}, {"outputs", outs}, {"nodes", f.nodes}};
    g = msc::ir::ParseGraph(j.dump(), "fold.json");
    auto done = msc::passes::FoldConstant(g, f.weights);
    for (const char* name : {"mm", "dyn", "mixed", "bfn", "lie", "bad", "xin", "empty", "sec"})
      CHECK_MESSAGE(!IsConstant(g, name), name);
    CHECK(f.Folded(g, "t") == D({1, 3, 2, 4}));
    CHECK(f.Folded(g, "keep") == D({-1, -2, -3, -4}));
    // b is still read by mm and lie: kept with the weight it shares with a
    CHECK(IsConstant(g, "b"));
    CHECK(f.weights.count("shared") == 1);
    CHECK(IsConstant(g, "i64"));  // read by mixed
    REQUIRE(done.size() == 2);
    CHECK(done[0].node == "t");
    CHECK(done[1].node == "keep");
  }

  TEST_CASE("fold_constant: a graph output of a folded node keeps its name; nothing to fold") {
    FoldGraph f;
    const auto w = f.Const("w", "float32", {2}, {1, -2});
    const auto n = f.Op("n", "negative", {w}, "float32", {2});
    msc::ir::MSCGraph g;
    f.Fold(g, {n, w});  // w is a graph output too: kept
    CHECK(g.outputs == std::vector<std::string>{"n:0", "w:0"});
    CHECK(f.Folded(g, "n") == D({-1, 2}));
    CHECK(IsConstant(g, "w"));
    CHECK(f.weights.size() == 2);
    // Nothing foldable: the graph and weights are untouched and nothing is recorded.
    FoldGraph e;
    const auto x = e.Input("x", "float32", {2});
    const auto r = e.Op("r", "nn.relu", {x}, "float32", {2});
    auto done = e.Fold(g, {r});
    CHECK(done.empty());
    CHECK(g.nodes.size() == 2);
  }
}

// ---- fold_transpose -----------------------------------------------------------------------------

namespace {

/// permute_dims(x, axes) of `shape`: the permuted shape.
std::vector<int64_t> Permuted(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(shape[static_cast<size_t>(a)]);
  return out;
}

std::vector<int64_t> AxesOf(const msc::ir::MSCJoint& n, const std::string& key) {
  const std::string* v = n.FindAttr(key);
  REQUIRE(v != nullptr);
  std::vector<int64_t> out;
  std::stringstream ss(*v);
  for (std::string part; std::getline(ss, part, ',');) out.push_back(std::stoll(part));
  return out;
}

}  // namespace

TEST_SUITE("passes") {
  TEST_CASE("fold_transpose: permutes around msc.attention fold into its axes") {
    // q, k, v [B, S, N, H] = [2, 3, 5, 7] (distinct sizes: a wrong composition changes shapes),
    // permuted to [B, N, S, H] for the attention (default axes), the result [B, N, S, H] permuted
    // back to [B, S, N, H] by a permute read only there.
    FoldGraph f;
    const std::vector<int64_t> bsnh = {2, 3, 5, 7}, bnsh = {2, 5, 3, 7};
    const Json to_bnsh = {{"axes", "0,2,1,3"}};
    const auto q = f.Input("q", "float32", bsnh);
    const auto k = f.Input("k", "float32", bsnh);
    const auto v = f.Input("v", "float32", {2, 7, 5, 3});  // [B, H, N, S]: reversed below
    const auto pq = f.Op("pq", "permute_dims", {q}, "float32", bnsh, to_bnsh);
    const auto pk = f.Op("pk", "permute_dims", {k}, "float32", bnsh, to_bnsh);
    const auto pv = f.Op("pv", "permute_dims", {v}, "float32", {2, 5, 3, 7}, {{"axes", "0,2,3,1"}});
    const auto a = f.Op("att", "msc.attention", {pq, pk, pv}, "float32", bnsh);
    const auto po = f.Op("po", "permute_dims", {a}, "float32", bsnh, to_bnsh);
    const auto r = f.Op("r", "nn.relu", {po}, "float32", bsnh);
    const auto other = f.Op("other", "nn.relu", {pk}, "float32", bnsh);  // pk read here too
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {r, other}, msc::passes::FoldTranspose);
    const msc::ir::MSCJoint* att = g.FindNode("att");
    REQUIRE(att != nullptr);
    CHECK(att->inputs == std::vector<std::string>{"q:0", "k:0", "v:0"});
    CHECK(AxesOf(*att, "axes") == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(AxesOf(*att, "axes_1") == std::vector<int64_t>{0, 1, 2, 3});
    // the attention permutes v [B, H, N, S] by axes_2 to relax's [B, S, N, H]
    CHECK(Permuted({2, 7, 5, 3}, AxesOf(*att, "axes_2")) == std::vector<int64_t>{2, 3, 5, 7});
    CHECK(AxesOf(*att, "axes_3") == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(att->outputs[0].shape == bsnh);
    CHECK(g.FindNode("r")->inputs == std::vector<std::string>{"att:0"});
    CHECK(g.FindNode("pq") == nullptr);
    CHECK(g.FindNode("pv") == nullptr);
    CHECK(g.FindNode("po") == nullptr);
    CHECK(g.FindNode("pk") != nullptr);  // still read by `other`
    CHECK(att->parents == std::vector<std::string>{"q", "k", "v"});
    REQUIRE(done.size() == 3);
    for (const auto& d : done) CHECK(d.into == "att");
    for (size_t i = 0; i < g.nodes.size(); ++i) CHECK(g.nodes[i].index == static_cast<int64_t>(i));
  }

  TEST_CASE("fold_transpose leaves graph outputs, other layouts and shared results alone") {
    FoldGraph f;
    const Json to_bnsh = {{"axes", "0,2,1,3"}};
    const auto q = f.Input("q", "float32", {1, 4, 2, 8});
    const auto a = f.Op("att", "msc.attention", {q, q, q}, "float32", {1, 2, 4, 8});
    const auto po = f.Op("po", "permute_dims", {a}, "float32", {1, 4, 2, 8}, to_bnsh);
    msc::ir::MSCGraph g;
    CHECK(f.Fold(g, {po}, msc::passes::FoldTranspose).empty());  // po is a graph output
    CHECK(g.FindNode("po") != nullptr);
    CHECK(g.FindNode("att")->FindAttr("axes_3") == nullptr);  // untouched
    FoldGraph h;  // the attention result read twice: its permute stays
    const auto x = h.Input("x", "float32", {1, 4, 2, 8});
    const auto b = h.Op("att", "msc.attention", {x, x, x}, "float32", {1, 2, 4, 8});
    const auto p1 = h.Op("p1", "permute_dims", {b}, "float32", {1, 4, 2, 8}, to_bnsh);
    const auto r1 = h.Op("r1", "nn.relu", {p1}, "float32", {1, 4, 2, 8});
    const auto r2 = h.Op("r2", "nn.relu", {b}, "float32", {1, 2, 4, 8});
    CHECK(h.Fold(g, {r1, r2}, msc::passes::FoldTranspose).empty());
    CHECK(g.FindNode("p1") != nullptr);
  }

  TEST_CASE("fold_transpose: a permute between two attentions is composed once") {
    // a1's result goes through p (read only there) into a2's query: a1 absorbs p (its output fold),
    // and a2 then reads a1's output as it is (composing p into a2 too applied it twice).
    FoldGraph f;
    const Json to_bnsh = {{"axes", "0,2,1,3"}};
    const auto x = f.Input("x", "float32", {1, 4, 2, 8});
    const auto a1 = f.Op("a1", "msc.attention", {x, x, x}, "float32", {1, 2, 4, 8});
    const auto p = f.Op("p", "permute_dims", {a1}, "float32", {1, 4, 2, 8}, to_bnsh);
    const auto a2 = f.Op("a2", "msc.attention", {p, x, x}, "float32", {1, 2, 4, 8});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {a2}, msc::passes::FoldTranspose);
    REQUIRE(done.size() == 1);
    CHECK(done[0].node == "p");
    CHECK(done[0].into == "a1");
    CHECK(AxesOf(*g.FindNode("a1"), "axes_3") == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(g.FindNode("a1")->outputs[0].shape == std::vector<int64_t>{1, 4, 2, 8});
    CHECK(g.FindNode("a2")->inputs == std::vector<std::string>{"a1:0", "x:0", "x:0"});
    CHECK(g.FindNode("a2")->FindAttr("axes") == nullptr);  // untouched: [0, 2, 1, 3]
  }

  TEST_CASE("eliminate_common_subexpr: equal constants, then the nodes reading them, go once") {
    // The mask of a transformer's two layers: where(equal(x, 0), -inf, 0) built twice from its
    // own constants; a third where with another fill value, and a graph output, stay.
    FoldGraph f;
    const auto x = f.Input("x", "int64", {1, 4});
    const auto z = f.Const("zero", "int64", {}, {0});
    const auto eq = f.Op("eq", "equal", {x, z}, "bool", {1, 4});
    std::vector<std::string> outs;
    for (const char* k : {"a", "b", "c"}) {
      const std::string s = k;
      const auto ninf = f.Const("ninf_" + s, "float32", {}, {s == "c" ? -1.0 : -INFINITY});
      const auto zero = f.Const("fzero_" + s, "float32", {}, {0.0});
      const auto w = f.Op("where_" + s, "where", {eq, ninf, zero}, "float32", {1, 4});
      outs.push_back(f.Op("relu_" + s, "nn.relu", {w}, "float32", {1, 4}));
    }
    const auto dup_out = f.Op("relu_a2", "nn.relu", {"where_a:0"}, "float32", {1, 4});
    outs.push_back(dup_out);
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, outs, msc::passes::EliminateCommonSubexpr);
    CHECK(g.FindNode("where_b") == nullptr);
    CHECK(g.FindNode("ninf_b") == nullptr);
    CHECK(g.FindNode("fzero_b") == nullptr);
    CHECK(g.FindNode("fzero_c") == nullptr);  // the same 0 as fzero_a
    CHECK(g.FindNode("relu_b")->inputs == std::vector<std::string>{"where_a:0"});
    CHECK(g.FindNode("where_c") != nullptr);  // -1 is no -inf
    CHECK(g.FindNode("where_c")->inputs ==
          std::vector<std::string>{"eq:0", "ninf_c:0", "fzero_a:0"});
    CHECK(g.FindNode("relu_a2") != nullptr);  // a graph output: read by name
    CHECK(g.FindNode("relu_b") != nullptr);   // a graph output too
    CHECK(f.weights.count("ninf_b.w") == 0);  // dropped with its constant
    REQUIRE(done.size() == 4);
    CHECK(done[0].node == "ninf_b");
    CHECK(done[0].into == "ninf_a");
  }

  TEST_CASE("fold_transpose: a chain of permutes composes into one axes attr") {
    // k [B, S, N, H] -> [B, N, S, H] -> [B, N, H, S]: the attention reads k^T with axes_1
    // [0, 3, 1, 2] (as fuse_attention writes it); both permutes fold, k read directly.
    FoldGraph f;
    const auto k = f.Input("k", "float32", {1, 3, 2, 4});
    const auto p1 = f.Op("p1", "permute_dims", {k}, "float32", {1, 2, 3, 4}, {{"axes", "0,2,1,3"}});
    const auto p2 =
        f.Op("p2", "permute_dims", {p1}, "float32", {1, 2, 4, 3}, {{"axes", "0,1,3,2"}});
    const auto q = f.Input("q", "float32", {1, 2, 3, 4});
    const auto a =
        f.Op("att", "msc.attention", {q, p2, q}, "float32", {1, 2, 3, 4}, {{"axes_1", "0,3,1,2"}});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {a}, msc::passes::FoldTranspose);
    CHECK(g.FindNode("p1") == nullptr);
    CHECK(g.FindNode("p2") == nullptr);
    CHECK(g.FindNode("att")->inputs[1] == "k:0");
    CHECK(AxesOf(*g.FindNode("att"), "axes_1") == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(done.size() == 2);
  }

  TEST_CASE("fuse_attention: GPT-2's matmul, scale, causal where, softmax, matmul") {
    FoldGraph f;
    const std::vector<int64_t> bnsh = {1, 2, 4, 8}, scores = {1, 2, 4, 4};
    const auto q = f.Input("q", "float32", bnsh);
    const auto kt = f.Input("kt", "float32", {1, 2, 8, 4});
    const auto v = f.Input("v", "float32", {1, 2, 4, 6});
    const auto s = f.Op("s", "matmul", {q, kt}, "float32", scores, {{"out_dtype", "float32"}});
    const auto c = f.Const("c", "float32", {}, {0.25});
    const auto sc = f.Op("sc", "multiply", {c, s}, "float32", scores);  // scalar first
    std::vector<double> upper;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) upper.push_back(j > i);
    const auto cond = f.Const("cond", "bool", {4, 4}, upper);
    const auto fill = f.Const("fill", "float32", {}, {-INFINITY});
    const auto m = f.Op("m", "where", {cond, fill, sc}, "float32", scores);
    const auto p = f.Op("p", "nn.softmax", {m}, "float32", scores, {{"axis", "-1"}});
    const auto o = f.Op("o", "matmul", {p, v}, "float32", {1, 2, 4, 6}, {{"out_dtype", "float32"}});
    msc::ir::MSCGraph g;
    auto done = f.Fold(g, {o}, msc::passes::FuseAttention);
    const msc::ir::MSCJoint* att = g.FindNode("o");
    REQUIRE(att != nullptr);
    CHECK(att->optype == "msc.attention");
    CHECK(att->inputs == std::vector<std::string>{"q:0", "kt:0", "v:0"});
    CHECK(*att->FindAttr("causal_mask") == "TopLeft");
    CHECK(std::stod(*att->FindAttr("scale")) == 0.25);
    CHECK(AxesOf(*att, "axes_1") == std::vector<int64_t>{0, 3, 1, 2});
    CHECK(att->outputs[0].shape == std::vector<int64_t>{1, 2, 4, 6});
    CHECK(g.nodes.size() == 4);  // the inputs and the attention: constants gone, weights too
    CHECK(f.weights.empty());
    CHECK(done.size() == 7);
    for (const auto& d : done) CHECK(d.into == "o");
  }

  TEST_CASE("fuse_attention: any other mask becomes a constant or the attention's mask input") {
    FoldGraph f;
    const std::vector<int64_t> scores = {1, 1, 2, 3};
    const auto q = f.Input("q", "float32", {1, 1, 2, 4});
    const auto kt = f.Input("kt", "float32", {1, 1, 4, 3});
    const auto v = f.Input("v", "float32", {1, 1, 3, 4});
    const auto s = f.Op("s", "matmul", {q, kt}, "float32", scores);
    const auto two = f.Const("two", "float32", {}, {2.0});
    const auto sc = f.Op("sc", "divide", {s, two}, "float32", scores);
    const auto keep = f.Const("keep", "bool", {2, 3}, {1, 0, 1, 1, 1, 0});  // true keeps
    const auto low = f.Const("low", "float32", {}, {-3.4028234663852886e38});
    const auto m = f.Op("m", "where", {keep, sc, low}, "float32", scores);
    const auto p = f.Op("p", "nn.softmax", {m}, "float32", scores, {{"axis", "3"}});
    const auto o = f.Op("o", "matmul", {p, v}, "float32", {1, 1, 2, 4});
    // the same with an additive mask input and no scale
    const auto bias = f.Input("bias", "float32", {1, 1, 1, 3});
    const auto s2 = f.Op("s2", "matmul", {q, kt}, "float32", scores);
    const auto m2 = f.Op("m2", "add", {bias, s2}, "float32", scores);
    const auto p2 = f.Op("p2", "nn.softmax", {m2}, "float32", scores, {{"axis", "-1"}});
    const auto o2 = f.Op("o2", "matmul", {p2, v}, "float32", {1, 1, 2, 4});
    msc::ir::MSCGraph g;
    f.Fold(g, {o, o2}, msc::passes::FuseAttention);
    const msc::ir::MSCJoint* att = g.FindNode("o");
    REQUIRE(att->optype == "msc.attention");
    CHECK(std::stod(*att->FindAttr("scale")) == 0.5);
    CHECK(att->FindAttr("causal_mask")->empty());
    REQUIRE(att->inputs.size() == 4);
    CHECK(att->inputs[3] == "m.mask:0");
    const double lowest = -3.4028234663852886e38;
    CHECK(f.Folded(g, "m.mask") == D({0, lowest, 0, 0, 0, lowest}));
    const msc::ir::MSCJoint* att2 = g.FindNode("o2");
    REQUIRE(att2->optype == "msc.attention");
    CHECK(att2->inputs == std::vector<std::string>{"q:0", "kt:0", "v:0", "bias:0"});
    CHECK(std::stod(*att2->FindAttr("scale")) == 1.0);
  }

  TEST_CASE("fuse_attention leaves what is not exactly attention alone") {
    // Each variant breaks one condition; nothing may fuse.
    auto build = [](FoldGraph& f, const std::string& variant) {
      const std::vector<int64_t> scores = {1, 2, 3, 3};
      const auto q = f.Input("q", "float32", {1, 2, 3, 4});
      const auto kt = f.Input(
          "kt", "float32", {variant == "broadcast" ? 1 : 1, variant == "broadcast" ? 1 : 2, 4, 3});
      const auto v = f.Input("v", "float32", {1, 2, 3, 4});
      const auto s = f.Op("s", "matmul", {q, kt}, "float32", scores);
      std::string t = s;
      if (variant == "fill") {  // -100 is no removed key: replacing is not adding
        const auto cond = f.Const("cond", "bool", {3, 3}, {0, 1, 1, 0, 0, 1, 0, 0, 0});
        t = f.Op("m", "where", {cond, f.Const("fill", "float32", {}, {-100}), t}, "float32",
                 scores);
      }
      if (variant == "mask_then_scale") {
        t = f.Op("m", "add", {t, f.Input("bias", "float32", {3, 3})}, "float32", scores);
        t = f.Op("sc", "multiply", {t, f.Const("c", "float32", {}, {0.5})}, "float32", scores);
      }
      if (variant == "scale_tensor")  // a per-element scale is no scalar
        t = f.Op("sc", "multiply", {t, f.Const("c", "float32", {3}, {1, 2, 3})}, "float32", scores);
      const auto p = f.Op("p", "nn.softmax", {t}, "float32", scores,
                          {{"axis", variant == "axis" ? "2" : "-1"}});
      const auto o = f.Op("o", "matmul", {p, v}, "float32", {1, 2, 3, 4});
      return variant == "shared" ? std::vector<std::string>{o, p} : std::vector<std::string>{o};
    };
    for (const char* variant :
         {"broadcast", "fill", "mask_then_scale", "scale_tensor", "axis", "shared"}) {
      INFO(variant);
      FoldGraph f;
      auto outs = build(f, variant);
      msc::ir::MSCGraph g;
      CHECK(f.Fold(g, outs, msc::passes::FuseAttention).empty());
      CHECK(g.FindNode("o")->optype == "matmul");
    }
  }

  TEST_CASE("StoreWeightsAsFloat16: listed roles only, shared and out-of-range tensors kept") {
    auto g = ConvBn();
    auto w = Weights();
    w["w"] = F32({2, 2, 1, 1}, {1, -2, 0.1f, 65504});
    const std::map<std::string, std::vector<std::string>> roles = {
        {"nn.conv2d", {"weight"}}, {"nn.batch_norm", {"gamma", "var"}}};
    auto done = msc::passes::StoreWeightsAsFloat16(g, w, roles);
    CHECK(done == std::vector<std::string>{"g", "v", "w"});
    // binary16 bits, little-endian: 1 = 0x3c00, -2 = 0xc000, 0.1 -> 0x2e66 (nearest even),
    // 65504 = 0x7bff (the largest finite half).
    REQUIRE(w.at("w").dtype == "float16");
    CHECK(w.at("w").data.size() == 8);
    const std::vector<uint8_t> expect = {0x00, 0x3c, 0x00, 0xc0, 0x66, 0x2e, 0xff, 0x7b};
    CHECK(std::equal(expect.begin(), expect.end(), w.at("w").data.data()));
    CHECK(g.FindNode("conv")->FindWeight("weight")->dtype == "float16");
    CHECK(g.FindNode("bn")->FindWeight("gamma")->dtype == "float16");
    CHECK(g.FindNode("bn")->FindWeight("beta")->dtype == "float32");  // role not listed
    CHECK(w.at("b").dtype == "float32");
    auto opdefs = msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
    CHECK_NOTHROW(msc::ir::Validate(g, &opdefs));

    // A tensor also read through a role not listed stays float32 everywhere: bn's beta reads "g".
    auto g2 = ConvBn();
    for (auto& n : g2.nodes)
      for (auto& [role, t] : n.weights)
        if (role == "beta") t.name = "g";
    auto w2 = Weights();
    w2.erase("b");
    // ... and a value past float16's range (it would become inf) keeps the conv weight float32.
    w2["w"] = F32({2, 2, 1, 1}, {1, 2, 3, 65520});
    done = msc::passes::StoreWeightsAsFloat16(g2, w2, roles);
    CHECK(done == std::vector<std::string>{"v"});
    CHECK(w2.at("g").dtype == "float32");
    CHECK(w2.at("w").dtype == "float32");
    CHECK(g2.FindNode("bn")->FindWeight("gamma")->dtype == "float32");
    // Nothing listed: nothing changes.
    auto w3 = Weights();
    auto g3 = ConvBn();
    CHECK(msc::passes::StoreWeightsAsFloat16(g3, w3, {}).empty());
    CHECK(w3.at("w").dtype == "float32");
  }

  TEST_CASE("StoreActivationsAsFloat16: listed producers and readers, same-dtype groups") {
    // x -> conv -> relu -> pool -> pad (not listed) -> add(pad, pool) -> concat(add, x) -> softmax
    auto graph = [](bool second_reader) {
      Json nodes = Json::array();
      auto t = [](const std::string& n) { return Json::array({T(n, {1, 2, 3, 3})}); };
      nodes.push_back(Node(0, "x", "input", {}, t("x:0")));
      nodes.push_back(Node(1, "conv", "nn.conv2d", {"x:0"}, t("conv:0")));
      nodes.push_back(Node(2, "relu", "nn.relu", {"conv:0"}, t("relu:0")));
      nodes.push_back(Node(3, "pool", "nn.max_pool2d", {"relu:0"}, t("pool:0")));
      nodes.push_back(Node(4, "pad", "nn.pad", {"pool:0"}, t("pad:0")));
      nodes.push_back(Node(5, "add", "add", {"pad:0", "pool:0"}, t("add:0")));
      nodes.push_back(Node(6, "cat", "concat", {"add:0", "x:0"}, t("cat:0")));
      nodes.push_back(Node(7, "sm", "nn.softmax", {"cat:0"}, t("sm:0")));
      Json outputs = {"sm:0"};
      if (second_reader) {  // a `same` reader of conv:0 whose output is a graph output
        nodes.push_back(Node(8, "neg", "negative", {"conv:0"}, t("neg:0")));
        outputs.push_back("neg:0");
      }
      Json g = {{"name", "main"}, {"inputs", {"x:0"}}, {"outputs", outputs}, {"nodes", nodes}};
      return msc::ir::ParseGraph(g.dump(), "g.json");
    };
    const std::vector<std::string> mixed = {"nn.conv2d", "nn.max_pool2d", "add", "nn.softmax"},
                                   same = {"nn.relu", "concat", "negative"};
    auto g = graph(false);
    // pool:0 is read by pad (not listed); add:0 is concatenated with the graph input (float32),
    // so concat's group stays float32; sm:0 is a graph output.
    CHECK(msc::passes::StoreActivationsAsFloat16(g, mixed, same) ==
          std::vector<std::string>{"conv:0", "relu:0"});
    CHECK(g.FindNode("conv")->outputs[0].dtype == "float16");
    CHECK(g.FindNode("relu")->outputs[0].dtype == "float16");
    for (const char* n : {"x", "pool", "pad", "add", "cat", "sm"})
      CHECK(g.FindNode(n)->outputs[0].dtype == "float32");
    // neg:0 must stay float32 (a graph output), so its input conv:0 must too (negative writes its
    // input's dtype), and then relu:0 (relu's group): the groups settle transitively.
    g = graph(true);
    CHECK(msc::passes::StoreActivationsAsFloat16(g, mixed, same).empty());
    // Nothing listed: nothing changes.
    g = graph(false);
    CHECK(msc::passes::StoreActivationsAsFloat16(g, {}, {}).empty());
  }
}
