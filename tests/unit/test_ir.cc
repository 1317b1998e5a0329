// MSCGraph load/save/validate/inspect.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "generator/common/error.h"
#include "generator/ir/graph.h"
#include "generator/ir/inspect.h"
#include "generator/ir/specialize.h"
#include "generator/ir/validate.h"
#include "generator/opdef/opdef.h"

using msc::ir::Json;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kRef = MSC_SHARED_REFERENCE_DIR;

msc::opdef::OpDefRegistry OpDefs() {
  return msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
}

/// conv_relu graph text with one substitution applied.
std::string ConvRelu(const std::string& from = "", const std::string& to = "") {
  std::string s = Slurp(kRef + "/msc-real/conv_relu/graph.json");
  if (!from.empty()) {
    auto pos = s.find(from);
    REQUIRE(pos != std::string::npos);
    s.replace(pos, from.size(), to);
  }
  return s;
}

std::string ValidateError(const std::string& text) {
  auto opdefs = OpDefs();
  try {
    msc::ir::Validate(msc::ir::ParseGraph(text, "g.json"), &opdefs);
  } catch (const msc::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("real MSC graphs load, validate and round-trip key for key") {
  auto opdefs = OpDefs();
  for (const char* model : {"conv_relu", "mlp"}) {
    const std::string path = kRef + "/msc-real/" + model + "/graph.json";
    auto g = msc::ir::LoadGraph(path);
    CHECK_NOTHROW(msc::ir::Validate(g, &opdefs));
    Json original = Json::parse(Slurp(path));
    Json saved = Json::parse(msc::ir::SaveGraphString(g));
    CHECK(saved == original);  // ordered_json: same keys, same order, same values
    CHECK(saved.dump() == original.dump());
  }
  auto g = msc::ir::LoadGraph(kRef + "/msc-real/mlp/graph.json");
  REQUIRE(g.nodes.size() == 4);
  CHECK(g.nodes[1].optype == "msc.linear_bias");
  CHECK(g.nodes[1].weights[0].first == "bias");           // MSC's order kept
  CHECK(g.FindTensor("matmul_1")->name == "matmul_1:0");  // by alias
}

TEST_CASE("tensor names split on the last colon") {
  auto s = msc::ir::SplitTensorName("a:b:3");
  REQUIRE(s);
  CHECK(s->first == "a:b");
  CHECK(s->second == 3);
  CHECK_FALSE(msc::ir::SplitTensorName("nocolon"));
  CHECK_FALSE(msc::ir::SplitTensorName("a:"));
  CHECK_FALSE(msc::ir::SplitTensorName("a:x"));
}

TEST_CASE("parents are the distinct producers of the inputs in first-use order") {
  using V = std::vector<std::string>;
  CHECK(msc::ir::ParentsOf({"b:1", "a:0", "b:0", "a:b:2", "a:0"}) == V{"b", "a", "a:b"});
  CHECK(msc::ir::ParentsOf({}).empty());
}

TEST_CASE("syntax errors name file, line and column") {
  try {
    msc::ir::ParseGraph("{\n  \"name\": \"main\",\n  \"inputs\": [,]\n}", "bad.json");
    FAIL("expected an error");
  } catch (const msc::Error& e) {
    CHECK(std::string(e.what()).rfind("bad.json:3:", 0) == 0);
    CHECK(std::string(e.what()).find("invalid JSON") != std::string::npos);
  }
}

TEST_CASE("schema errors name the JSON path and node") {
  std::string text = ConvRelu("\"optype\": \"nn.relu\", ", "");
  CHECK_THROWS_WITH(msc::ir::ParseGraph(text, "g.json"),
                    "g.json: nodes[2] (node 'relu'): missing required field 'optype'");
  text = ConvRelu(
      "\"shape\": [1, 6, 4, 4], \n          \"prims\": []\n        }\n      ], \n      \"attrs\": "
      "{}",
      "\"shape\": [1, \"6\", 4, 4], \n          \"prims\": []\n        }\n      ], \n      "
      "\"attrs\": {}");
  CHECK_THROWS_WITH(
      msc::ir::ParseGraph(text, "g.json"),
      "g.json: nodes[2].outputs[0].shape[1] (node 'relu'): expected an integer, got string \"6\"");
  CHECK_THROWS_WITH(msc::ir::ParseGraph("[]", "g.json"),
                    "g.json: (top level): expected an object, got array []");
  CHECK_THROWS_WITH(msc::ir::ParseGraph("{}", "g.json"), "g.json: missing required field 'name'");
}

TEST_CASE("Validate reports every problem with its place") {
  CHECK(ValidateError(ConvRelu()) == "");
  CHECK(ValidateError(ConvRelu("\"name\": \"relu\"", "\"name\": \"conv2d\""))
            .find("nodes[2] (node \"conv2d\"): duplicate node name (first defined at nodes[1])") !=
        std::string::npos);
  std::string e = ValidateError(
      ConvRelu("\"inputs\": [\n        \"conv2d:0\"", "\"inputs\": [\n        \"conv2d:5\""));
  CHECK(e.find("nodes[2].inputs[0] (node \"relu\"): \"conv2d:5\": node \"conv2d\" has only 1 "
               "output(s)") != std::string::npos);
  e = ValidateError(
      ConvRelu("\"inputs\": [\n        \"inp_0:0\"", "\"inputs\": [\n        \"relu:0\""));
  CHECK(e.find("nodes[1].inputs[0] (node \"conv2d\"): \"relu:0\" is produced by nodes[2], not an "
               "earlier node: the nodes are not "
               "topologically ordered or form a cycle") != std::string::npos);
  CHECK(e.find("nodes[1].parents (node \"conv2d\"): expected the distinct producers of inputs in "
               "first-use order [\"relu\"], got "
               "[\"inp_0\"]") != std::string::npos);
  e = ValidateError(ConvRelu("\"optype\": \"nn.relu\"", "\"optype\": \"nn.frobnicate\""));
  CHECK(e.find("nodes[2].optype (node \"relu\"): unknown optype \"nn.frobnicate\"") !=
        std::string::npos);
  e = ValidateError(ConvRelu("\"dtype\": \"float32\"", "\"dtype\": \"float31\""));
  CHECK(e.find("nodes[0].outputs[0] (node \"inp_0\"): unknown dtype \"float31\"") !=
        std::string::npos);
  e = ValidateError(ConvRelu("\"strides\": \"1,1\"", "\"strides\": \"1,x\""));
  CHECK(e.find("nodes[1].attrs.strides (node \"conv2d\"): expected an int list like \"1,1\" or "
               "\"1,\", got \"1,x\" (type int list)") != std::string::npos);
  e = ValidateError(ConvRelu("\"groups\": \"1\"", "\"groups\": \"0\""));
  CHECK(e.find("nodes[1].attrs.groups (node \"conv2d\"): values must be >= 1, got 0") !=
        std::string::npos);
  e = ValidateError(ConvRelu("\"weights\": {\"weight\"", "\"weights\": {\"wieght\""));
  CHECK(e.find("missing weight 'weight' required by optype 'nn.conv2d'") != std::string::npos);
  CHECK(e.find("nodes[1].weights.wieght (node \"conv2d\"): unknown weight role for optype "
               "'nn.conv2d' (expected weight)") != std::string::npos);
  e = ValidateError(ConvRelu("\"relu:0\"\n  ]", "\"nothere:0\"\n  ]"));
  CHECK(e.find("outputs[0]: \"nothere:0\" names no node output") != std::string::npos);
  e = ValidateError(ConvRelu("\"index\": 2", "\"index\": 7"));
  CHECK(e.find("nodes[2].index (node \"relu\"): expected 2 (the node's position), got 7") !=
        std::string::npos);
  // Several problems, one error, each on its own line with a count.
  e = ValidateError(ConvRelu("\"optype\": \"nn.relu\"", "\"optype\": \"nn.frobnicate\""));
  CHECK(e.rfind("g.json: invalid MSCGraph (1 problem):\n  nodes[2].optype", 0) == 0);
}

TEST_CASE("shapes whose element or byte count overflows int64 are rejected, not wrapped") {
  // 2^32 * 2^32 elements: the product overflows int64 (was signed-overflow UB in Numel()).
  std::string e = ValidateError(
      ConvRelu("\"shape\": [1, 3, 4, 4]", "\"shape\": [4294967296, 4294967296, 4, 4]"));
  CHECK_MESSAGE(
      e.find("nodes[0].outputs[0].shape (node \"inp_0\"): shape [4294967296,4294967296,"
             "4,4] has more elements or bytes than a 64-bit size can count") != std::string::npos,
      e);
  // 2^62 float32 elements fit int64, their 2^64 bytes do not.
  e = ValidateError(ConvRelu("\"shape\": [1, 3, 4, 4]", "\"shape\": [4611686018427387904]"));
  CHECK_MESSAGE(e.find("more elements or bytes than a 64-bit size can count") != std::string::npos,
                e);
  msc::ir::MSCTensor t;
  t.shape = {int64_t{1} << 40, int64_t{1} << 40};
  CHECK(t.Numel() == -2);
  t.shape = {2, -1};
  CHECK(t.Numel() == -1);
  // A dim of 0: no elements, wherever the 0 stands (fuzz_onnx long run of 2026-11-29: a Transpose
  // folded at import moved the 0 of an empty constant behind dims whose product overflows, and
  // Validate then rejected the imported graph its permutation-equal input passed).
  t.shape = {0, int64_t{1} << 40, int64_t{1} << 40};
  CHECK(t.Numel() == 0);
  t.shape = {int64_t{1} << 40, int64_t{1} << 40, 0};
  CHECK(t.Numel() == 0);
  t.shape = {int64_t{1} << 40, 0, -1};
  CHECK(t.Numel() == -1);
}

TEST_CASE("the node limit is enforced while parsing, counting only top-level nodes") {
  // conv_relu has 3 nodes, each with nested arrays (parents, inputs, outputs, shape).
  CHECK(msc::ir::ParseGraph(ConvRelu(), "g.json", 3).nodes.size() == 3);
  CHECK_THROWS_WITH(
      msc::ir::ParseGraph(ConvRelu(), "g.json", 2),
      doctest::Contains("g.json: nodes[2]: the graph has more than 2 nodes, the limit"));
  // Invalid JSON is still reported by the real parse, with its position.
  CHECK_THROWS_WITH(msc::ir::ParseGraph("{\"nodes\": [{}, {}, {} x", "g.json", 1),
                    doctest::Contains("g.json: nodes[1]"));
  CHECK_THROWS_WITH(msc::ir::ParseGraph("{\"nodes\": [ x", "g.json", 1),
                    doctest::Contains("g.json:1:13: invalid JSON"));
}

TEST_CASE("optional trailing inputs: min_inputs..inputs") {
  // msc.attention takes q, k, v and an optional mask: 3 or 4 inputs.
  std::string e =
      ValidateError(ConvRelu("\"optype\": \"nn.relu\"", "\"optype\": \"msc.attention\""));
  CHECK(e.find("nodes[2] (node \"relu\"): optype 'msc.attention' takes 3 to 4 tensor input(s), "
               "got 1") != std::string::npos);
  e = ValidateError(ConvRelu("\"optype\": \"nn.relu\"", "\"optype\": \"add\""));
  CHECK(e.find("optype 'add' takes 2 tensor input(s), got 1") != std::string::npos);
}

TEST_CASE("a node consuming its own output is rejected as a cycle") {
  std::string e = ValidateError(
      ConvRelu("\"inputs\": [\n        \"conv2d:0\"", "\"inputs\": [\n        \"relu:0\""));
  CHECK(e.find("a node cannot consume its own output") != std::string::npos);
}

TEST_CASE("inspect prints MSC's text form") {
  auto g = msc::ir::LoadGraph(kRef + "/msc-real/conv_relu/graph.json");
  std::string text = msc::ir::InspectGraph(g);
  CHECK(text.rfind("main <INPUTS: inp_0:0| OUTPUTS: relu:0>\n", 0) == 0);
  CHECK(text.find("ID_1 conv2d <PARENTS: inp_0| CHILDERN: relu>\n"
                  "  IN: inp_0:0(inp_0)<1,3,4,4|float32|NCHW>\n"
                  "  OUT: conv2d:0<1,6,4,4|float32|NCHW>\n"
                  "  OPTYPE: nn.conv2d\n"
                  "  ATTRS: out_layout=NCHW data_layout=NCHW padding=0,0,0,0 groups=1 "
                  "kernel_layout=OIHW strides=1,1 "
                  "dilation=1,1 out_dtype=float32 \n"
                  "  WEIGHTS: \n"
                  "    weight: const(conv2d.weight)<6,3,1,1|float32|OIHW>\n") != std::string::npos);
  CHECK(text.find("ID_2 relu <PARENTS: conv2d| CHILDERN: >\n") != std::string::npos);
}

TEST_CASE("SpecializeShapes binds input prims and evaluates derived ones") {
  // inp_0 [bz, 3] -> reshape [MUL_1] with MUL_1 = bz * 3 and FLOORDIV_2 = MUL_1 // 4.
  const std::string text = R"({"name": "g", "inputs": ["inp_0:0"], "outputs": ["reshape:0"],
    "nodes": [
      {"index": 0, "name": "inp_0", "optype": "input", "outputs": [
        {"name": "inp_0:0", "alias": "x", "dtype": "float32", "shape": [-1, 3],
         "prims": ["bz", "3"]}]},
      {"index": 1, "name": "reshape", "optype": "reshape", "parents": ["inp_0"],
       "inputs": ["inp_0:0"], "attrs": {"shape": "-1,"}, "outputs": [
        {"name": "reshape:0", "dtype": "float32", "shape": [-1], "prims": ["MUL_1"]}]}],
    "prims": [
      {"index": 0, "name": "bz", "optype": "shape",
       "attrs": {"producer": "inp_0", "out_idx": "0", "dim": "0"}},
      {"index": 1, "name": "Int_3", "optype": "Int", "attrs": {"value": "3"}},
      {"index": 2, "name": "MUL_1", "optype": "Mul", "parents": ["bz", "Int_3"]},
      {"index": 3, "name": "FLOORDIV_2", "optype": "FloorDiv", "parents": ["MUL_1", "4"]}]})";
  auto g = msc::ir::ParseGraph(text, "g.json");
  msc::ir::SpecializeShapes(g, {{"x", {5, 3}}});
  CHECK(g.nodes[0].outputs[0].shape == std::vector<int64_t>{5, 3});
  CHECK(g.nodes[1].outputs[0].shape == std::vector<int64_t>{15});
  CHECK(g.nodes[1].outputs[0].prims.empty());
  CHECK(g.prims.empty());

  auto fresh = [&] { return msc::ir::ParseGraph(text, "g.json"); };
  auto error = [&](const std::map<std::string, std::vector<int64_t>>& shapes) -> std::string {
    auto graph = fresh();
    try {
      msc::ir::SpecializeShapes(graph, shapes);
    } catch (const msc::Error& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error({{"inp_0:0", {5, 4}}}) ==
        "g.json: --shape \"inp_0:0\" [5, 4]: axis 1 of input \"inp_0:0\" is static 3");
  CHECK(error({{"inp_0", {5}}}) ==
        "g.json: --shape \"inp_0\" [5] has rank 1, input \"inp_0:0\" has rank 2");
  CHECK(error({{"y", {5, 3}}}).find("--shape \"y\" names no graph input") != std::string::npos);
  std::string e = error({});
  CHECK(e.find("2 dynamic dim(s) have no value (give --shape for input(s) \"inp_0:0\")") !=
        std::string::npos);
  CHECK(e.find("\"reshape:0\" (node \"reshape\") axis 0 = prim \"MUL_1\"") != std::string::npos);

  CHECK(msc::ir::ParseShapeArg("inp_0=1,3,224,224") ==
        std::make_pair(std::string("inp_0"), std::vector<int64_t>{1, 3, 224, 224}));
  CHECK(msc::ir::ParseShapeArg("a=b=2").first == "a=b");
  CHECK(msc::ir::ParseShapeArg("s=").second.empty());  // 0-d input
  CHECK_THROWS_WITH(msc::ir::ParseShapeArg("inp_0=1,x"),
                    "--shape \"inp_0=1,x\": expected NAME=D0,D1,... (e.g. inp_0=1,3,224,224), got "
                    "dim \"x\"");
  CHECK_THROWS_WITH(msc::ir::ParseShapeArg("1,2"),
                    "--shape \"1,2\": expected NAME=D0,D1,... (e.g. inp_0=1,3,224,224)");
}
