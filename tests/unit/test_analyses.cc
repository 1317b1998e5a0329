// The analyses on an MSCGraph (generator/analyses): the use-def index, the memory plan (lifetimes,
// reuse, alias ops, late graph inputs, in-place concats, the lower bound) and epilogue fusion with
// the bytes it shares. The fusion rules in depth, and what the context writes of them, are in
// test_fusion.cc.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "generator/analyses/analyses.h"
#include "generator/common/error.h"
#include "generator/opdef/opdef.h"
#include "tests/unit/test_graph.h"

namespace {

using msc::test::Build;
using msc::test::N;

const msc::opdef::OpDefRegistry& Opdefs() {
  static const auto reg =
      msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
  return reg;
}

/// A straight line n0 (graph input) -> n1 -> ... -> last (graph output): optype and bytes per
/// node (uint8 tensors of that many elements).
msc::ir::MSCGraph Line(const std::vector<std::pair<std::string, int64_t>>& ops,
                       const std::string& prefix = "n") {
  std::vector<N> nodes;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string name = prefix + std::to_string(i);
    std::vector<std::string> in;
    if (i > 0) in.push_back(prefix + std::to_string(i - 1));
    nodes.push_back({name, ops[i].first, in, {ops[i].second}, "uint8"});
  }
  return Build(nodes, {prefix + std::to_string(ops.size() - 1)});
}

/// The memory plan without fusion.
msc::analyses::MemoryPlan Plan(const msc::ir::MSCGraph& g, std::vector<std::string> alias = {},
                               std::vector<std::string> concat = {}) {
  const msc::analyses::Dataflow d(g);
  return msc::analyses::PlanMemory(d, msc::analyses::PlanFusion(d, {}), Opdefs(),
                                   {256, std::move(alias), std::move(concat)});
}

long long At(const msc::analyses::MemoryPlan& p, const std::string& node) {
  auto it = p.offset.find(node + ":0");
  REQUIRE_MESSAGE(it != p.offset.end(), "no planned tensor " << node << ":0");
  return it->second;
}

const std::vector<int64_t> s4 = {1, 4, 4, 4}, s8 = {1, 8, 4, 4}, s12 = {1, 12, 4, 4};

/// node `name`'s index in g.
size_t Index(const msc::ir::MSCGraph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == name) return i;
  FAIL("no node " << name);
  return 0;
}

}  // namespace

TEST_CASE("dataflow: producers, distinct consumers in node order, graph inputs and outputs") {
  const auto g = Build({{"x", "input", {}, s4},
                        {"a", "nn.relu", {"x"}, s4},
                        {"b", "add", {"x", "x"}, s4},
                        {"c", "add", {"a", "b"}, s4}},
                       {"c"});
  const msc::analyses::Dataflow d(g);
  REQUIRE(d.inputs(2).size() == 2);
  CHECK(d.inputs(2)[1].node == 0);
  CHECK(&d.input(3, 1) == &g.nodes[2].outputs[0]);
  std::vector<std::string> readers;
  for (const std::string* s : d.consumers(0, 0)) readers.push_back(*s);
  CHECK(readers == std::vector<std::string>{"a", "b"});  // b reads x twice: listed once
  CHECK(d.consumers(3, 0).empty());
  CHECK(d.is_graph_input("x:0"));
  CHECK(d.is_graph_output("c:0"));
  CHECK_FALSE(d.is_graph_output("a:0"));
  CHECK(*d.FindNode("b") == 2);
  CHECK(d.Find("nope:0") == nullptr);
  // A node reading a tensor no earlier node produces (Validate rejects it first).
  auto bad = g;
  bad.nodes[1].inputs = {"c:0"};
  CHECK_THROWS_AS(msc::analyses::Dataflow{bad}, msc::Error);
}

TEST_CASE("memory plan reuses dead tensors") {
  const auto g =
      Line({{"input", 100}, {"a", 1000}, {"a", 1000}, {"a", 1000}, {"a", 1000}, {"a", 100}});
  const auto p = Plan(g);
  // Every tensor lives from its producer to its one consumer, so at most two are live at once.
  CHECK(p.naive == 4 * 1024 + 2 * 256);
  CHECK(p.peak == 2 * 1024);
  CHECK(p.lower_bound == 2 * 1024);  // n_i and n_i+1 live at step i+1
  for (int i = 1; i < 6; ++i)        // producer and consumer never overlap
    CHECK(At(p, "n" + std::to_string(i)) != At(p, "n" + std::to_string(i - 1)));
  REQUIRE(p.tensors.size() == 6);
  CHECK(*p.tensors[0].name == "n0:0");
  CHECK(p.tensors[1].nbytes == 1000);
}

TEST_CASE("memory plan on a long graph with skip connections: valid, and above the lower bound") {
  // 3000 nodes; node i reads n(i-1) and, every 7th node, n(i-k) for k up to 400: lifetimes span
  // many of the planner's time buckets (64 steps), so every overlap query crosses buckets.
  const int n = 3000;
  std::mt19937 rng(7);
  std::vector<N> nodes;
  std::vector<long long> begin(n), end(n), bytes(n);
  for (int i = 0; i < n; ++i) {
    bytes[i] = 64 + static_cast<long long>(rng() % 5000);
    begin[i] = i == 0 ? -1 : i;
    end[i] = i == n - 1 ? n : i;
    std::vector<int> from;
    if (i > 0) from.push_back(i - 1);
    if (i % 7 == 0 && i > 1) from.push_back(std::max(0, i - 1 - static_cast<int>(rng() % 400)));
    std::vector<std::string> ins;
    for (int f : from) {
      ins.push_back("n" + std::to_string(f));
      end[f] = std::max(end[f], static_cast<long long>(i));
    }
    nodes.push_back({"n" + std::to_string(i), i == 0 ? "input" : "a", ins, {bytes[i]}, "uint8"});
  }
  const auto g = Build(nodes, {"n" + std::to_string(n - 1)});
  const auto p = Plan(g);
  auto aligned = [](long long v) { return std::max(256LL, (v + 255) / 256 * 256); };
  long long lower = 0;
  for (long long t = -1; t <= n; ++t) {
    long long live = 0;
    for (int i = 0; i < n; ++i) live += begin[i] <= t && t <= end[i] ? aligned(bytes[i]) : 0;
    lower = std::max(lower, live);
  }
  CHECK(p.lower_bound == lower);
  CHECK(p.peak >= lower);
  int overlaps = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      if (!(begin[i] <= end[j] && begin[j] <= end[i])) continue;
      const long long oi = At(p, "n" + std::to_string(i)), oj = At(p, "n" + std::to_string(j));
      overlaps += oi < oj + aligned(bytes[j]) && oj < oi + aligned(bytes[i]);
    }
  CHECK(overlaps == 0);
}

TEST_CASE("a graph input that appears late is live from the start") {
  // x -> a -> b (output), then y (input, node 3) -> c (output). The host writes y before the run,
  // so a and b (computed before node 3) must not share y's bytes.
  auto g = Line({{"input", 1024}, {"a", 1024}, {"a", 1024}});
  const auto y = Line({{"input", 1024}, {"a", 1024}}, "y");
  for (const auto& node : y.nodes) g.nodes.push_back(node);
  g.inputs.push_back("y0:0");
  g.outputs.push_back("y1:0");
  g.BuildIndex();
  const auto p = Plan(g);
  for (const char* early : {"n0", "n1", "n2"}) CHECK(At(p, early) != At(p, "y0"));
}

TEST_CASE("alias ops share bytes and extend their source's lifetime") {
  // n1's bytes are read through the reshape n2 by n3: n1 must stay live until n3.
  const auto g = Line({{"input", 1024}, {"a", 1024}, {"reshape", 1024}, {"a", 1024}, {"a", 1024}});
  const auto p = Plan(g, {"reshape"});
  CHECK(At(p, "n2") == At(p, "n1"));
  CHECK(At(p, "n3") != At(p, "n1"));
  CHECK(p.naive == 4 * 1024);  // the alias has no block of its own
}

TEST_CASE("memory plan: get_item aliases input[index]; a dynamic shape is refused by name") {
  auto g = Build({{"x", "input", {}, {64}},
                  {"t", "tuple", {"x", "x"}, {64}},
                  {"g", "get_item", {"t"}, {64}, "float32", {{"index", "0"}}},
                  {"y", "nn.relu", {"g"}, {64}}},
                 {"y"});
  const auto p = Plan(g, {"get_item"});
  CHECK(At(p, "g") == At(p, "t"));
  g.nodes[2].attrs = {{"index", "a"}};
  CHECK_THROWS_WITH_AS(Plan(g, {"get_item"}),
                       "<memory>: node \"g\": get_item needs an integer attr 'index'", msc::Error);
  g.nodes[2].attrs = {{"index", "0"}};
  g.nodes[3].outputs[0].shape = {-1};
  g.nodes[3].outputs[0].prims = {"batch"};
  CHECK_THROWS_WITH_AS(Plan(g),
                       doctest::Contains("tensor \"y:0\" (node \"y\") has a dynamic shape "
                                         "(axis 0 = prim \"batch\")"),
                       msc::Error);
}

TEST_CASE("in-place concat: inputs are planned as slices of the output") {
  // [1,4,4,4] float32 = 256 bytes: slice offsets are multiples of the alignment.
  auto concat = [](const std::string& name, std::vector<std::string> in, std::vector<int64_t> s,
                   const std::string& axis = "1") {
    return N{name, "concat", std::move(in), std::move(s), "float32", {{"axis", axis}}};
  };
  const auto g = Build({{"x", "input", {}, s4},
                        {"a", "nn.relu", {"x"}, s4},
                        {"b", "nn.relu", {"x"}, s4},
                        concat("c", {"a", "b"}, s8),
                        {"y", "sum", {"c"}, {1, 1, 1, 1}}},
                       {"y"});
  const auto p = Plan(g, {}, {"concat"});
  CHECK(p.in_place[Index(g, "c")]);
  CHECK_FALSE(p.in_place[Index(g, "a")]);
  CHECK(At(p, "a") == At(p, "c"));
  CHECK(At(p, "b") == At(p, "c") + 256);
  CHECK(At(p, "x") != At(p, "c"));  // x is read while a and b are written
  CHECK(At(p, "y") != At(p, "c"));
  // the concat's inputs and output add up to one block: less than planning them apart
  const auto plain = Plan(g);
  CHECK_FALSE(plain.in_place[Index(g, "c")]);
  CHECK(p.peak < plain.peak);

  SUBCASE("nested concats nest slices; a group joins one concat only") {
    const auto n = Build({{"x", "input", {}, s4},
                          {"a", "nn.relu", {"x"}, s4},
                          {"b", "nn.relu", {"x"}, s4},
                          concat("c", {"a", "b"}, s8),
                          {"d", "nn.relu", {"x"}, s4},
                          concat("e", {"d", "c"}, s12),
                          concat("f", {"a", "d"}, s8),  // a and d are slices already
                          {"y", "add", {"e", "f"}, s12}},
                         {"y"});
    const auto q = Plan(n, {}, {"concat"});
    CHECK(q.in_place[Index(n, "c")]);
    CHECK(q.in_place[Index(n, "e")]);
    CHECK_FALSE(q.in_place[Index(n, "f")]);
    CHECK(At(q, "d") == At(q, "e"));
    CHECK(At(q, "c") == At(q, "e") + 256);
    CHECK(At(q, "a") == At(q, "e") + 256);
    CHECK(At(q, "b") == At(q, "e") + 512);
    CHECK(At(q, "f") != At(q, "e"));
  }
  SUBCASE("left alone: misaligned slices, a repeated input, dims before the axis; axis -3 works") {
    const std::vector<int64_t> s3 = {1, 3, 4, 4}, s6 = {1, 6, 4, 4};  // 192-byte slices
    const auto m = Build({{"x", "input", {}, s3},
                          {"a", "nn.relu", {"x"}, s3},
                          {"b", "nn.relu", {"x"}, s3},
                          concat("c", {"a", "b"}, s6),
                          {"y", "nn.relu", {"c"}, s6}},
                         {"y"});
    const auto pm = Plan(m, {}, {"concat"});
    CHECK_FALSE(pm.in_place[Index(m, "c")]);
    CHECK(At(pm, "a") != At(pm, "c"));
    const auto r = Build({{"x", "input", {}, s4},
                          {"a", "nn.relu", {"x"}, s4},
                          concat("c", {"a", "a"}, s8),
                          {"y", "nn.relu", {"c"}, s8}},
                         {"y"});
    CHECK_FALSE(Plan(r, {}, {"concat"}).in_place[Index(r, "c")]);
    const std::vector<int64_t> w4 = {2, 4, 4, 4}, w8 = {2, 8, 4, 4};  // batch 2: strided
    const auto b = Build({{"x", "input", {}, w4},
                          {"a", "nn.relu", {"x"}, w4},
                          {"bb", "nn.relu", {"x"}, w4},
                          concat("c", {"a", "bb"}, w8),
                          {"y", "nn.relu", {"c"}, w8}},
                         {"y"});
    CHECK_FALSE(Plan(b, {}, {"concat"}).in_place[Index(b, "c")]);
    const auto neg = Build({{"x", "input", {}, s4},
                            {"a", "nn.relu", {"x"}, s4},
                            {"b", "nn.relu", {"x"}, s4},
                            concat("c", {"a", "b"}, s8, "-3"),
                            {"y", "nn.relu", {"c"}, s8}},
                           {"y"});
    const auto pn = Plan(neg, {}, {"concat"});
    CHECK(pn.in_place[Index(neg, "c")]);
    CHECK(At(pn, "b") == At(pn, "c") + 256);
  }
  SUBCASE("a graph input can be a slice: the host writes it into the concat's output") {
    const auto gi = Build({{"x", "input", {}, s4},
                           {"a", "nn.relu", {"x"}, s4},
                           concat("c", {"x", "a"}, s8),
                           {"y", "nn.relu", {"c"}, s8}},
                          {"y"});
    const auto pg = Plan(gi, {}, {"concat"});
    CHECK(pg.in_place[Index(gi, "c")]);
    CHECK(At(pg, "x") == At(pg, "c"));
  }
}

TEST_CASE("memory plan: a split's pieces dying together lie side by side") {
  // x [1,12,4,4] float32 split into three [1,4,4,4] (256 bytes each), each read by one relu: one
  // block, piece k at piece 0 + k * 256 (the runtime's split then writes them in one dispatch).
  // Pieces of different sizes are planned apart.
  auto split = [](const std::vector<std::vector<int64_t>>& shapes, bool late) {
    std::vector<N> nodes = {{"x", "input", {}, s12}, {"s", "split", {"x"}, shapes[0]}};
    for (size_t k = 0; k < 3; ++k)
      nodes.push_back({"r" + std::to_string(k), "nn.relu", {"s"}, shapes[k]});
    nodes.push_back({"y", "concat", {"r0", "r1", "r2"}, s12, "float32", {{"axis", "1"}}});
    nodes.push_back({"z", "nn.relu", {"s"}, shapes[2]});  // reads piece 2 last when `late`
    auto g =
        Build(nodes, late ? std::vector<std::string>{"y", "z"} : std::vector<std::string>{"y"});
    auto& sp = g.nodes[1];
    for (size_t k = 1; k < 3; ++k) {
      msc::ir::MSCTensor t = sp.outputs[0];
      t.name = "s:" + std::to_string(k);
      t.shape = shapes[k];
      sp.outputs.push_back(t);
    }
    for (size_t k = 0; k < 3; ++k) g.nodes[2 + k].inputs = {"s:" + std::to_string(k)};
    g.nodes[6].inputs = {late ? "s:2" : "y:0"};
    g.BuildIndex();
    return g;
  };
  auto side_by_side = [](const msc::analyses::MemoryPlan& p) {
    const long long s0 = p.offset.at("s:0");
    return p.offset.at("s:1") == s0 + 256 && p.offset.at("s:2") == s0 + 512;
  };
  const auto g = split({s4, s4, s4}, false);
  const auto p = Plan(g);
  CHECK(side_by_side(p));
  CHECK_FALSE(side_by_side(Plan(split({s4, s8, s4}, false))));  // unequal pieces
  // piece 2 outliving the others: planned on its own (greedy placement may still put it there)
  CHECK(Plan(split({s4, s4, s4}, true)).peak >= p.peak);
}

namespace {

/// x [1, 4, 24] -> lin -> split s (3 x [1, 4, 8], axis 2) -> get_item g<k> -> reshape r<k>
/// [1, 4, 2, 4] -> consumer `a` (optype "att", inputs r0 r1 r2) -> out. `extra` nodes are
/// appended (before out).
msc::ir::MSCGraph QkvGraph(std::vector<N> extra = {}, std::vector<std::string> outputs = {"out"},
                           std::vector<int64_t> piece = {1, 4, 8}) {
  const std::vector<int64_t> heads = {1, 4, 2, 4};
  std::vector<N> nodes = {{"x", "input", {}, {1, 4, 24}},
                          {"lin", "nn.relu", {"x"}, {1, 4, 24}},
                          {"s", "split", {"lin"}, piece, "float32", {{"axis", "2"}}}};
  for (int k = 0; k < 3; ++k) {
    const std::string i = std::to_string(k);
    nodes.push_back({"g" + i, "get_item", {"s"}, piece, "float32", {{"index", i}}});
    nodes.push_back({"r" + i, "reshape", {"g" + i}, heads});
  }
  nodes.push_back({"a", "att", {"r0", "r1", "r2"}, heads});
  for (const N& n : extra) nodes.push_back(n);
  nodes.push_back({"out", "nn.relu", {"a"}, heads});
  auto g = Build(nodes, std::move(outputs));
  // The split has three outputs, each get_item reads all of them.
  auto& sp = g.nodes[2];
  for (int k = 1; k < 3; ++k) {
    msc::ir::MSCTensor t = sp.outputs[0];
    t.name = "s:" + std::to_string(k);
    sp.outputs.push_back(t);
  }
  for (auto& n : g.nodes)
    if (n.optype == "get_item") n.inputs = {"s:0", "s:1", "s:2"};
  g.BuildIndex();
  return g;
}

msc::analyses::FusionOptions ViewOptions() {
  msc::analyses::FusionOptions o;
  o.view_splits = {"split"};
  o.view_through = {"get_item", "reshape"};
  o.view_consumers = {{"att", {0, 1, 2}}};
  return o;
}

}  // namespace

TEST_CASE("split views: a qkv split read in place by its consumer, never computed or stored") {
  const auto g = QkvGraph();
  const msc::analyses::GraphAnalyses a(g, Opdefs(), ViewOptions(), {256, {"reshape"}, {}});
  const size_t att = Index(g, "a");
  for (const char* name : {"s", "g0", "g1", "g2", "r0", "r1", "r2"}) {
    INFO(name);
    CHECK(a.fusion.nodes[Index(g, name)].view);
    CHECK(a.fusion.nodes[Index(g, name)].into == static_cast<long long>(att));
    CHECK(a.memory->offset.count(std::string(name) + ":0") == 0);  // no bytes
  }
  const auto& views = a.fusion.nodes[att].input_views;
  REQUIRE(views.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    CHECK(views[k].base == "lin:0");
    CHECK(views[k].offset == static_cast<int64_t>(8 * k));
    // [1, 4, 8] pieces of [1, 4, 24] (strides [96, 24, 1]) as [1, 4, 2, 4]
    CHECK(views[k].strides == std::vector<int64_t>{96, 24, 4, 1});
  }
  // lin is read at the attention's position: its bytes are not the attention's output's.
  CHECK(At(*a.memory, "lin") != At(*a.memory, "a"));
  CHECK_FALSE(a.fusion.nodes[Index(g, "lin")].view);
}

TEST_CASE("split views: not when a piece is read otherwise, is an output, or needs a copy") {
  // A piece also read by a relu.
  auto g = QkvGraph({{"other", "nn.relu", {"r1"}, {1, 4, 2, 4}}}, {"out", "other"});
  msc::analyses::GraphAnalyses a(g, Opdefs(), ViewOptions(), {256, {"reshape"}, {}});
  CHECK_FALSE(a.fusion.nodes[Index(g, "s")].view);
  CHECK(a.fusion.nodes[Index(g, "a")].input_views.empty());
  // A view that is a graph output.
  g = QkvGraph({}, {"out", "r2"});
  CHECK_FALSE(msc::analyses::PlanFusion(msc::analyses::Dataflow(g), ViewOptions()).nodes[2].view);
  // An input index the consumer does not read as a view.
  auto o = ViewOptions();
  o.view_consumers = {{"att", {0, 1}}};
  g = QkvGraph();
  CHECK_FALSE(msc::analyses::PlanFusion(msc::analyses::Dataflow(g), o).nodes[2].view);
  // A reshape that needs a copy: a [1, 4, 8] piece (strides [96, 24, 1]) as [1, 2, 16, 1] merges
  // rows 24 elements apart into one dim.
  auto bad = QkvGraph();
  for (auto& n : bad.nodes)
    if (n.optype == "reshape") n.outputs[0].shape = {1, 2, 16, 1};
  bad.BuildIndex();
  CHECK_FALSE(msc::analyses::PlanFusion(msc::analyses::Dataflow(bad), ViewOptions()).nodes[2].view);
}

TEST_CASE("epilogue fusion marks producer and consumer, and they share bytes") {
  const auto g = Build({{"n0", "input", {}, {256}},
                        {"n1", "conv", {"n0"}, {256}},
                        {"n2", "relu", {"n1"}, {256}},
                        {"n3", "conv", {"n2"}, {256}},
                        {"n4", "relu", {"n3"}, {256}}},
                       {"n4", "n3"});  // a graph output must stay materialized
  msc::analyses::FusionOptions options;
  options.producers = {"conv"};
  options.epilogues = {"relu"};
  const msc::analyses::GraphAnalyses a(g, Opdefs(), options, {256, {}, {}});
  CHECK(a.fusion.nodes[1].epilogue == 2);
  CHECK(a.fusion.nodes[2].into == 1);
  CHECK(a.fusion.nodes[3].epilogue == -1);
  CHECK(a.fusion.nodes[4].into == -1);
  REQUIRE(a.memory);
  CHECK(At(*a.memory, "n2") == At(*a.memory, "n1"));
  CHECK(At(*a.memory, "n4") != At(*a.memory, "n3"));
  CHECK_THROWS_WITH_AS(msc::analyses::PlanMemory(a.dataflow, a.fusion, Opdefs(), {0, {}, {}}),
                       "memory plan: alignment 0 must be a positive number of bytes", msc::Error);
  // Without a memory plan (alignment 0) there is none.
  CHECK_FALSE(msc::analyses::GraphAnalyses(g, Opdefs(), options, {0, {}, {}}).memory);
}
