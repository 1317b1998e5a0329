// Graph passes (generator/passes): BatchNorm folding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "generator/common/error.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"
#include "generator/passes/passes.h"

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
