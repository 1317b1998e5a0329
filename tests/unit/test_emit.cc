// Emitter pieces: identifiers and literals for hostile names, backend spec, memory plan, writer.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/emit/context.h"
#include "generator/emit/naming.h"
#include "generator/emit/writer.h"
#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"

namespace fs = boost::filesystem;
using msc::emit::Json;

TEST_CASE("identifiers from hostile names are valid, unique and deterministic") {
  msc::emit::IdentifierPool pool({"class", "def", "return", "self"});
  CHECK(pool.Make("conv2d") == "conv2d");
  CHECK(pool.Make("conv2d") == "conv2d_1");
  CHECK(pool.Make("class") == "class_");
  CHECK(pool.Make("a \"quoted\"\nname") == "a_quoted_name");
  CHECK(pool.Make("../../etc/passwd") == "etc_passwd");
  CHECK(pool.Make("3d") == "n_3d");
  CHECK(pool.Make("__init__") == "n__init__");
  CHECK(pool.Make("卷积") == "v");
  CHECK(pool.Make("卷积") == "v_1");
  CHECK(pool.Make("nœud") == "n_ud");
  CHECK(pool.Make("layer.0:1") == "layer_0_1");
  CHECK(pool.Make("", "weight") == "weight");
  msc::emit::IdentifierPool again({"class", "def", "return", "self"});
  CHECK(again.Make("conv2d") == "conv2d");
}

TEST_CASE("string literals escape everything that could break out") {
  CHECK(msc::emit::PyStringLiteral("a\"b\\c\nd") == "\"a\\\"b\\\\c\\nd\"");
  CHECK(msc::emit::PyStringLiteral("卷积") == "\"卷积\"");
  CHECK(msc::emit::PyStringLiteral(std::string("\x01", 1)) == "\"\\x01\"");
  CHECK(msc::emit::CStringLiteral("a\"b\\c\nd?") == "\"a\\\"b\\\\c\\nd\\?\"");
  CHECK(msc::emit::CStringLiteral("é") == "\"\\303\\251\"");
}

TEST_CASE("Python float repr and literals") {
  CHECK(msc::emit::PyFloatRepr(1e-5) == "1e-05");
  CHECK(msc::emit::PyFloatRepr(0.1) == "0.1");
  CHECK(msc::emit::PyFloatRepr(1.0) == "1.0");
  CHECK(msc::emit::PyFloatRepr(1e16) == "1e+16");
  CHECK(msc::emit::PyFloatRepr(123456.5) == "123456.5");
  CHECK(msc::emit::PyFloatRepr(-0.0001) == "-0.0001");
  CHECK(msc::emit::PyFloatRepr(1e22) == "1e+22");
  CHECK(msc::emit::PyLiteral(Json::parse("[1, 2.5, \"x\", null, true]")) ==
        "[1, 2.5, \"x\", None, True]");
  CHECK(msc::emit::PyLiteral(Json(HUGE_VAL)) == "float(\"inf\")");
  CHECK(msc::emit::CLiteral(Json(-HUGE_VAL)) == "-INFINITY");
}

namespace {

/// A straight-line graph context n0 -> n1 -> ... with the given optypes and output sizes.
Json Chain(const std::vector<std::pair<std::string, long long>>& ops) {
  Json nodes = Json::array();
  for (size_t i = 0; i < ops.size(); ++i) {
    Json out = {{"name", "n" + std::to_string(i) + ":0"},
                {"nbytes", ops[i].second},
                {"is_graph_input", i == 0},
                {"is_graph_output", i + 1 == ops.size()},
                {"consumers",
                 i + 1 < ops.size() ? Json::array({"n" + std::to_string(i + 1)}) : Json::array()}};
    Json ins = Json::array();
    if (i > 0) ins.push_back(nodes[i - 1]["outputs"][0]);
    nodes.push_back({{"name", "n" + std::to_string(i)},
                     {"ident", "n" + std::to_string(i)},
                     {"optype", ops[i].first},
                     {"attrs", Json::object()},
                     {"inputs", ins},
                     {"outputs", Json::array({out})},
                     {"fused_epilogue", nullptr},
                     {"fused_into", ""}});
  }
  return {{"nodes", nodes},
          {"inputs", Json::array({nodes[0]["outputs"][0]})},
          {"outputs", Json::array({nodes.back()["outputs"][0]})}};
}

long long Offset(const Json& g, int node) {
  return g["nodes"][node]["outputs"][0]["offset"].get<long long>();
}

}  // namespace

TEST_CASE("memory plan reuses dead tensors") {
  Json g = Chain({{"input", 100}, {"a", 1000}, {"a", 1000}, {"a", 1000}, {"a", 1000}, {"a", 100}});
  msc::emit::PlanMemory(g, 256, {});
  // Every tensor lives from its producer to its one consumer, so at most two are live at once.
  CHECK(g["memory"]["naive_bytes"] == 4 * 1024 + 2 * 256);
  CHECK(g["memory"]["peak_bytes"] == 2 * 1024);
  CHECK(g["memory"]["lower_bound_bytes"] == 2 * 1024);  // n_i and n_i+1 live at step i+1
  for (int i = 1; i < 6; ++i)
    CHECK(Offset(g, i) != Offset(g, i - 1));  // producer and consumer never overlap
  CHECK(g["nodes"][2]["inputs"][0]["offset"] == Offset(g, 1));
  CHECK(g["inputs"][0]["offset"] == Offset(g, 0));
  CHECK(g["outputs"][0]["offset"] == Offset(g, 5));
}

TEST_CASE("memory plan on a long graph with skip connections: valid, and above the lower bound") {
  // 3000 nodes; node i reads n(i-1) and, every 7th node, n(i-k) for k up to 400: lifetimes span
  // many of the planner's time buckets (64 steps), so every overlap query crosses buckets.
  const int n = 3000;
  std::mt19937 rng(7);
  Json nodes = Json::array();
  std::vector<long long> begin(n), end(n), bytes(n);
  for (int i = 0; i < n; ++i) {
    bytes[i] = 64 + static_cast<long long>(rng() % 5000);
    begin[i] = i == 0 ? -1 : i;
    end[i] = i == n - 1 ? n : i;
    Json ins = Json::array();
    std::vector<int> from;
    if (i > 0) from.push_back(i - 1);
    if (i % 7 == 0 && i > 1) from.push_back(std::max(0, i - 1 - static_cast<int>(rng() % 400)));
    for (int f : from) {
      ins.push_back({{"name", "n" + std::to_string(f) + ":0"}});
      end[f] = std::max(end[f], static_cast<long long>(i));
    }
    nodes.push_back({{"name", "n" + std::to_string(i)},
                     {"optype", i == 0 ? "input" : "a"},
                     {"attrs", Json::object()},
                     {"inputs", ins},
                     {"outputs", Json::array({{{"name", "n" + std::to_string(i) + ":0"},
                                               {"nbytes", bytes[i]},
                                               {"is_graph_input", i == 0},
                                               {"is_graph_output", i == n - 1}}})},
                     {"fused_into", ""}});
  }
  Json g = {{"nodes", nodes}, {"inputs", Json::array()}, {"outputs", Json::array()}};
  msc::emit::PlanMemory(g, 256, {});
  auto aligned = [](long long v) { return std::max(256LL, (v + 255) / 256 * 256); };
  long long lower = 0;
  for (long long t = -1; t <= n; ++t) {
    long long live = 0;
    for (int i = 0; i < n; ++i) live += begin[i] <= t && t <= end[i] ? aligned(bytes[i]) : 0;
    lower = std::max(lower, live);
  }
  CHECK(g["memory"]["lower_bound_bytes"] == lower);
  CHECK(g["memory"]["peak_bytes"].get<long long>() >= lower);
  int overlaps = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (!(begin[i] <= end[j] && begin[j] <= end[i])) continue;
      const long long oi = Offset(g, i), oj = Offset(g, j);
      overlaps += oi < oj + aligned(bytes[j]) && oj < oi + aligned(bytes[i]);
    }
  CHECK(overlaps == 0);
}

TEST_CASE("a graph input that appears late is live from the start") {
  // x -> a -> b (output), then y (input, node 3) -> c (output). The host writes y before the run,
  // so a and b (computed before node 3) must not share y's bytes.
  Json g = Chain({{"input", 1024}, {"a", 1024}, {"a", 1024}});
  Json y = Chain({{"input", 1024}, {"a", 1024}});
  for (auto& node : y["nodes"]) {
    node["name"] = "y" + node["name"].get<std::string>();
    for (auto& t : node["outputs"]) t["name"] = "y" + t["name"].get<std::string>();
    for (auto& t : node["inputs"]) t["name"] = "y" + t["name"].get<std::string>();
    g["nodes"].push_back(node);
  }
  msc::emit::PlanMemory(g, 256, {});
  const long long y_in = Offset(g, 3);
  CHECK(Offset(g, 1) != y_in);
  CHECK(Offset(g, 2) != y_in);
  CHECK(Offset(g, 0) != y_in);
}

TEST_CASE("alias ops share bytes and extend their source's lifetime") {
  // n1's bytes are read through the reshape n2 by n3: n1 must stay live until n3.
  Json g = Chain({{"input", 1024}, {"a", 1024}, {"reshape", 1024}, {"a", 1024}, {"a", 1024}});
  msc::emit::PlanMemory(g, 256, {"reshape"});
  CHECK(Offset(g, 2) == Offset(g, 1));
  CHECK(Offset(g, 3) != Offset(g, 1));
  CHECK(g["memory"]["naive_bytes"] == 4 * 1024);  // the alias has no block of its own
}

namespace {

/// A DAG context for the memory plan: {name, optype, input node names, output shape (float32)};
/// node 0 is the graph input, the last node the graph output. Concats get attrs.axis = `axis`.
struct PlanOp {
  std::string name, optype;
  std::vector<std::string> inputs;
  std::vector<long long> shape;
};
Json Dag(const std::vector<PlanOp>& ops, long long axis = 1) {
  Json nodes = Json::array();
  std::map<std::string, Json> outs;
  for (size_t i = 0; i < ops.size(); ++i) {
    long long numel = 1;
    for (long long d : ops[i].shape) numel *= d;
    Json out = {{"name", ops[i].name + ":0"},
                {"shape", ops[i].shape},
                {"nbytes", 4 * numel},
                {"is_graph_input", i == 0},
                {"is_graph_output", i + 1 == ops.size()}};
    outs[ops[i].name] = out;
    Json ins = Json::array();
    for (const auto& in : ops[i].inputs) ins.push_back(outs.at(in));
    Json attrs = Json::object();
    if (ops[i].optype == "concat") attrs["axis"] = axis;
    nodes.push_back({{"name", ops[i].name},
                     {"optype", ops[i].optype},
                     {"attrs", attrs},
                     {"inputs", ins},
                     {"outputs", Json::array({out})},
                     {"fused_into", ""}});
  }
  return {{"nodes", nodes},
          {"inputs", Json::array({nodes[0]["outputs"][0]})},
          {"outputs", Json::array({nodes.back()["outputs"][0]})}};
}

long long OffsetOf(const Json& g, const std::string& node) {
  for (const auto& n : g["nodes"])
    if (n["name"] == node) return n["outputs"][0]["offset"].get<long long>();
  FAIL("no node " << node);
  return -1;
}

bool InPlace(const Json& g, const std::string& node) {
  for (const auto& n : g["nodes"])
    if (n["name"] == node) return n["in_place"].get<bool>();
  FAIL("no node " << node);
  return false;
}

}  // namespace

TEST_CASE("in-place concat: inputs are planned as slices of the output") {
  // [1,4,4,4] float32 = 256 bytes: slice offsets are multiples of the alignment.
  const std::vector<long long> s4 = {1, 4, 4, 4}, s8 = {1, 8, 4, 4}, s12 = {1, 12, 4, 4};
  Json g = Dag({{"x", "input", {}, s4},
                {"a", "relu", {"x"}, s4},
                {"b", "relu", {"x"}, s4},
                {"c", "concat", {"a", "b"}, s8},
                {"y", "sum", {"c"}, {1, 1, 1, 1}}});
  Json plain = g;
  msc::emit::PlanMemory(g, 256, {}, {"concat"});
  CHECK(InPlace(g, "c"));
  CHECK_FALSE(InPlace(g, "a"));
  CHECK(OffsetOf(g, "a") == OffsetOf(g, "c"));
  CHECK(OffsetOf(g, "b") == OffsetOf(g, "c") + 256);
  CHECK(OffsetOf(g, "x") != OffsetOf(g, "c"));  // x is read while a and b are written
  CHECK(OffsetOf(g, "y") != OffsetOf(g, "c"));
  // the concat's inputs and output add up to one block: less than planning them apart
  msc::emit::PlanMemory(plain, 256, {});
  CHECK_FALSE(InPlace(plain, "c"));
  CHECK(g["memory"]["peak_bytes"] < plain["memory"]["peak_bytes"]);

  SUBCASE("nested concats nest slices; a group joins one concat only") {
    Json n = Dag({{"x", "input", {}, s4},
                  {"a", "relu", {"x"}, s4},
                  {"b", "relu", {"x"}, s4},
                  {"c", "concat", {"a", "b"}, s8},
                  {"d", "relu", {"x"}, s4},
                  {"e", "concat", {"d", "c"}, s12},
                  {"f", "concat", {"a", "d"}, s8},  // a and d are slices already
                  {"y", "add", {"e", "f"}, s12}});
    msc::emit::PlanMemory(n, 256, {}, {"concat"});
    CHECK(InPlace(n, "c"));
    CHECK(InPlace(n, "e"));
    CHECK_FALSE(InPlace(n, "f"));
    CHECK(OffsetOf(n, "d") == OffsetOf(n, "e"));
    CHECK(OffsetOf(n, "c") == OffsetOf(n, "e") + 256);
    CHECK(OffsetOf(n, "a") == OffsetOf(n, "e") + 256);
    CHECK(OffsetOf(n, "b") == OffsetOf(n, "e") + 512);
    CHECK(OffsetOf(n, "f") != OffsetOf(n, "e"));
  }
  SUBCASE("left alone: misaligned slices, a repeated input, dims before the axis, axis -3") {
    const std::vector<long long> s3 = {1, 3, 4, 4}, s6 = {1, 6, 4, 4};  // 192-byte slices
    Json m = Dag({{"x", "input", {}, s3},
                  {"a", "relu", {"x"}, s3},
                  {"b", "relu", {"x"}, s3},
                  {"c", "concat", {"a", "b"}, s6},
                  {"y", "relu", {"c"}, s6}});
    msc::emit::PlanMemory(m, 256, {}, {"concat"});
    CHECK_FALSE(InPlace(m, "c"));
    CHECK(OffsetOf(m, "a") != OffsetOf(m, "c"));
    Json r = Dag({{"x", "input", {}, s4},
                  {"a", "relu", {"x"}, s4},
                  {"c", "concat", {"a", "a"}, s8},
                  {"y", "relu", {"c"}, s8}});
    msc::emit::PlanMemory(r, 256, {}, {"concat"});
    CHECK_FALSE(InPlace(r, "c"));
    const std::vector<long long> w4 = {2, 4, 4, 4}, w8 = {2, 8, 4, 4};  // batch 2: strided
    Json b = Dag({{"x", "input", {}, w4},
                  {"a", "relu", {"x"}, w4},
                  {"bb", "relu", {"x"}, w4},
                  {"c", "concat", {"a", "bb"}, w8},
                  {"y", "relu", {"c"}, w8}});
    msc::emit::PlanMemory(b, 256, {}, {"concat"});
    CHECK_FALSE(InPlace(b, "c"));
    Json neg = Dag({{"x", "input", {}, s4},
                    {"a", "relu", {"x"}, s4},
                    {"b", "relu", {"x"}, s4},
                    {"c", "concat", {"a", "b"}, s8},
                    {"y", "relu", {"c"}, s8}},
                   /*axis=*/-3);
    msc::emit::PlanMemory(neg, 256, {}, {"concat"});
    CHECK(InPlace(neg, "c"));
    CHECK(OffsetOf(neg, "b") == OffsetOf(neg, "c") + 256);
  }
  SUBCASE("a graph input can be a slice: the host writes it into the concat's output") {
    Json gi = Dag({{"x", "input", {}, s4},
                   {"a", "relu", {"x"}, s4},
                   {"c", "concat", {"x", "a"}, s8},
                   {"y", "relu", {"c"}, s8}});
    msc::emit::PlanMemory(gi, 256, {}, {"concat"});
    CHECK(InPlace(gi, "c"));
    CHECK(OffsetOf(gi, "x") == OffsetOf(gi, "c"));
    CHECK(gi["inputs"][0]["offset"] == OffsetOf(gi, "c"));
  }
}

TEST_CASE("epilogue fusion marks producer and consumer, and they share bytes") {
  Json g = Chain({{"input", 1024}, {"conv", 1024}, {"relu", 1024}, {"conv", 1024}, {"relu", 1024}});
  g["nodes"][3]["outputs"][0]["is_graph_output"] = true;  // a graph output must stay materialized
  msc::emit::FuseEpilogues(g, {"conv"}, {"relu"});
  CHECK(g["nodes"][1]["fused_epilogue"]["name"] == "n2");
  CHECK(g["nodes"][2]["fused_into"] == "n1");
  CHECK(g["nodes"][3]["fused_epilogue"].is_null());
  CHECK(g["nodes"][4]["fused_into"] == "");
  msc::emit::PlanMemory(g, 256, {});
  CHECK(Offset(g, 2) == Offset(g, 1));
  CHECK(Offset(g, 4) != Offset(g, 3));
}

TEST_CASE("writer refuses foreign folders and leaves no partial output") {
  fs::path root = fs::temp_directory_path() / fs::unique_path("msc-writer-%%%%%%");
  fs::create_directories(root / "foreign");
  { std::ofstream(root / "foreign" / "keep.txt") << "mine"; }
  msc::emit::OutputTree tree;
  tree.AddText("a.txt", "A");
  tree.AddText("sub/b.txt", "B");
  CHECK_THROWS_WITH(tree.AddText("../evil.txt", "x"),
                    "output path '../evil.txt' must be relative and stay inside the output folder");
  CHECK_THROWS_WITH(tree.AddText("a.txt", "again"),
                    "output file 'a.txt' is produced twice (check backend.yaml files/copy)");
  const std::string refused =
      (root / "foreign").string() +
      ": not empty and not generated by msc-codegen (no .msc-codegen); use --force to replace it";
  CHECK_THROWS_WITH(tree.Commit((root / "foreign").string(), false), refused.c_str());
  CHECK(fs::exists(root / "foreign" / "keep.txt"));
  tree.Commit((root / "out").string(), false);
  CHECK(fs::exists(root / "out" / "sub" / "b.txt"));
  CHECK(fs::exists(root / "out" / ".msc-codegen"));
  // Regenerating over our own output replaces it whole.
  msc::emit::OutputTree second;
  second.AddText("c.txt", "C");
  second.Commit((root / "out").string(), false);
  CHECK_FALSE(fs::exists(root / "out" / "a.txt"));
  CHECK(fs::exists(root / "out" / "c.txt"));
  // A failing writer leaves nothing behind, not even the temporary sibling.
  msc::emit::OutputTree failing;
  failing.AddText("x.txt", "X");
  failing.AddWriter("w.bin", [](const std::string&) { throw msc::Error("disk full"); });
  CHECK_THROWS_WITH(failing.Commit((root / "new").string(), false), "disk full");
  CHECK_FALSE(fs::exists(root / "new"));
  size_t entries = 0;
  for (fs::directory_iterator it(root), end; it != end; ++it) ++entries;
  CHECK(entries == 2);  // foreign, out
  fs::remove_all(root);
}

TEST_CASE("backend specs: the repo's backends load; unknown ones are listed") {
  const std::string root = std::string(MSC_SOURCE_DIR) + "/templates";
  auto spec = msc::emit::LoadBackendSpec(root, "torch");
  CHECK(spec.OpTemplateFor("nn.conv2d") == "ops/nn/conv2d.py.j2");
  CHECK(spec.OpTemplateFor("add") == "ops/add.py.j2");
  try {
    msc::emit::LoadBackendSpec(root, "nope");
    FAIL("expected an error");
  } catch (const msc::Error& e) {
    CHECK(std::string(e.what()).find("unknown backend 'nope'") == 0);
    CHECK(std::string(e.what()).find("torch") != std::string::npos);
  }
  CHECK_THROWS(msc::emit::LoadBackendSpec(root, "../templates/torch"));
}

TEST_CASE("multi-output tensor identifiers never collide with node identifiers") {
  msc::ir::MSCGraph g;
  g.name = "main";
  auto tensor = [](const std::string& name) {
    msc::ir::MSCTensor t;
    t.name = name;
    t.dtype = "float32";
    t.shape = {1};
    return t;
  };
  msc::ir::MSCJoint in;
  in.name = "x";
  in.optype = "input";
  in.outputs = {tensor("x:0")};
  msc::ir::MSCJoint tup;
  tup.index = 1;
  tup.name = "t";
  tup.optype = "tuple";
  tup.parents = {"x"};
  tup.inputs = {"x:0", "x:0"};
  tup.outputs = {tensor("t:0"), tensor("t:1")};
  msc::ir::MSCJoint late;  // literally named like the tuple's first field
  late.index = 2;
  late.name = "t_0";
  late.optype = "nn.relu";
  late.parents = {"t"};
  late.inputs = {"t:0"};
  late.outputs = {tensor("t_0:0")};
  g.nodes = {in, tup, late};
  g.inputs = {"x:0"};
  g.outputs = {"t_0:0"};
  g.BuildIndex();
  auto opdefs = msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
  auto spec = msc::emit::LoadBackendSpec(std::string(MSC_SOURCE_DIR) + "/templates", "torch");
  Json ctx = msc::emit::BuildContext(g, opdefs, spec);
  std::set<std::string> seen;
  for (const auto& node : ctx["graph"]["nodes"])
    for (const auto& t : node["outputs"])
      CHECK_MESSAGE(seen.insert(t["ident"].get<std::string>()).second, t["ident"]);
  CHECK(ctx["graph"]["nodes"][1]["outputs"][0]["ident"] == "t_0");
  CHECK(ctx["graph"]["nodes"][2]["ident"] == "t_0_1");
}

TEST_CASE("backend.yaml is read strictly, with file:line:col") {
  fs::path root = fs::temp_directory_path() / fs::unique_path("msc-spec-%%%%%%");
  fs::create_directories(root / "b");
  const std::string file = (root / "b" / "backend.yaml").string();
  auto error_for = [&](const std::string& yaml) -> std::string {
    std::ofstream(file) << yaml;
    try {
      msc::emit::LoadBackendSpec(root.string(), "b");
    } catch (const msc::Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string ok =
      "op_template: ops/{path}.j2\nop_sections: [run]\nfiles: [{template: t.j2, output: t}]\n";
  CHECK(error_for(ok) == "");
  CHECK(error_for(ok + "colour: red\n")
            .rfind(file + ":4:1: unknown key 'colour' in backend.yaml (valid keys: ", 0) == 0);
  CHECK(error_for(ok + "summary: a\nsummary: b\n") ==
        file + ":5:1: duplicate key 'summary' in backend.yaml");
  CHECK(error_for(ok + "weights: ../w.safetensors\n") ==
        file + ":4:10: '../w.safetensors' must be a relative path inside the output folder");
  CHECK(error_for(ok + "memory_plan: {alignment: 100}\n") ==
        file + ":4:26: memory_plan.alignment must be a power of two");
  CHECK(error_for(ok + "copy: [{from: x}]\n") == file + ":4:8: copy entry needs 'from' and 'to'");
  CHECK(error_for(ok + "copy: [{from: x, to: y, filter: {match: '*.c'}}]\n") ==
        file + ":4:33: copy filter needs 'match' (a glob) and 'keep' (a template)");
  CHECK(error_for(ok + "copy: [{from: x, to: y, filter: {match: '*.c', keep: k.j2, x: 1}}]\n")
            .rfind(file + ":4:", 0) == 0);
  CHECK(error_for("op_template: [\n").rfind(file + ":", 0) == 0);
  // precision: only fp16, all three keys, tolerances numbers >= 0 and not both 0.
  const std::string fp16 = "precision: {fp16: {weights: {nn.conv2d: [weight]}, ";
  CHECK(error_for(ok + fp16 + "atol: 0.01, rtol: 0}}\n") == "");
  CHECK(error_for(ok + "precision: {bf16: {}}\n")
            .rfind(file + ":4:13: unknown key 'bf16' in precision (valid keys: fp16)", 0) == 0);
  CHECK(error_for(ok + fp16 + "atol: 0.01}}\n") ==
        file + ":4:19: precision.fp16 needs 'weights', 'atol' and 'rtol'");
  CHECK(error_for(ok + fp16 + "atol: -1, rtol: 0.1}}\n") ==
        file + ":4:58: precision.fp16.atol must be a finite number >= 0");
  CHECK(error_for(ok + fp16 + "atol: 0, rtol: 0}}\n") ==
        file + ":4:19: precision.fp16: atol and rtol cannot both be 0");
  CHECK(error_for(ok + "precision: {fp16: {weights: {nn.conv2d: weight}, atol: 1, rtol: 1}}\n") ==
        file + ":4:41: precision.fp16.weights.nn.conv2d must be a list of strings");
  // activations: optional; only mixed / same, each a list of optypes.
  CHECK(error_for(ok + fp16 +
                  "atol: 1, rtol: 1, activations: {mixed: [add], same: [reshape]}}}\n") == "");
  CHECK(error_for(ok + fp16 + "atol: 1, rtol: 1, activations: {any: [add]}}}\n")
            .rfind(file + ":4:84: unknown key 'any' in precision.fp16.activations (valid keys: "
                          "mixed, same)",
                   0) == 0);
  CHECK(error_for(ok + fp16 + "atol: 1, rtol: 1, activations: {same: add}}}\n") ==
        file + ":4:90: precision.fp16.activations.same must be a list of strings");
  // test: run is required; `python` in it and test.python go together; env values are strings.
  CHECK(
      error_for(ok + "test: {run: [python, t.py], python: debian, merge: true, env: {A: '1'}}\n") ==
      "");
  CHECK(error_for(ok + "test: {run: [bash, run.sh]}\n") == "");
  CHECK(error_for(ok + "test: {merge: true}\n") ==
        file + ":4:7: test needs 'run' (the command that runs a project's golden test)");
  CHECK(error_for(ok + "test: {run: []}\n") == file + ":4:13: test.run must name a command");
  CHECK(error_for(ok + "test: {run: [python, t.py]}\n") ==
        file + ":4:7: test.run uses python: say which with test.python (debian or tvm)");
  CHECK(error_for(ok + "test: {run: [bash, r.sh], python: tvm}\n") ==
        file + ":4:7: test.python is set but test.run does not use python");
  CHECK(error_for(ok + "test: {run: [python], python: conda}\n") ==
        file + ":4:31: test.python must be debian or tvm, got 'conda'");
  CHECK(error_for(ok + "test: {run: [x], dynamic_shapes: false}\n")
            .rfind(file + ":4:18: unknown key 'dynamic_shapes' in test (valid keys: ", 0) == 0);
  CHECK(error_for(ok + "test: {run: [x], env: {A: [1]}}\n") ==
        file + ":4:27: test.env.A must be a string");
  fs::remove_all(root);
}

TEST_CASE("backend specs: every backend of the repository says how the tests run it") {
  const std::string root = std::string(MSC_SOURCE_DIR) + "/templates";
  for (const auto& b : msc::emit::ListBackends(root)) {
    const auto spec = msc::emit::LoadBackendSpec(root, b);
    CHECK_MESSAGE(spec.has_test, b);
    CHECK_MESSAGE(!spec.test.run.empty(), b);
  }
}

TEST_CASE("backend precisions: vulkan offers fp16 for its conv / linear weights") {
  const std::string root = std::string(MSC_SOURCE_DIR) + "/templates";
  const auto vk = msc::emit::LoadBackendSpec(root, "vulkan");
  REQUIRE(vk.precisions.count("fp16") == 1);
  const auto& p = vk.precisions.at("fp16");
  CHECK(p.weights.at("nn.conv2d") == std::vector<std::string>{"weight"});
  CHECK(p.weights.at("msc.linear_bias") == std::vector<std::string>{"weight"});
  CHECK(p.atol > 0);
  // Activations between the float kernels and data movement are stored as float16 too.
  auto has = [](const std::vector<std::string>& v, const char* x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  CHECK(has(p.activations_mixed, "msc.conv2d_bias"));
  CHECK(has(p.activations_mixed, "msc.attention"));
  CHECK(has(p.activations_same, "reshape"));
  CHECK_FALSE(has(p.activations_mixed, "nn.pad"));  // its kernel writes float32 only
  for (const char* b : {"torch", "relax", "numpy"})
    CHECK(msc::emit::LoadBackendSpec(root, b).precisions.empty());
}
