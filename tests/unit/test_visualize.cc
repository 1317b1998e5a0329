// visualize: DOT labels/edges/escaping, MSC's prototxt (vs. what TVM v0.20's MSC wrote), atomic
// writes, and the Graphviz `dot` lookup.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/ir/graph.h"
#include "generator/ir/validate.h"
#include "generator/ir/visualize.h"

namespace fs = boost::filesystem;

namespace {

const std::string kRef = MSC_SHARED_REFERENCE_DIR;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t Count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t pos = s.find(part); pos != std::string::npos; pos = s.find(part, pos + 1)) ++n;
  return n;
}

/// The DOT statement (one line) of node id `id` ("n1 [label=...").
std::string NodeLine(const std::string& dot, const std::string& id) {
  size_t pos = dot.find("\n  " + id + " [label=");
  REQUIRE(pos != std::string::npos);
  return dot.substr(pos + 3, dot.find('\n', pos + 1) - pos - 3);
}

/// Every edge "nA -> nB [label=<...>]" as "nA->nB:label".
std::vector<std::string> Edges(const std::string& dot) {
  std::vector<std::string> out;
  std::regex re(R"(\n  (n\d+) -> (n\d+) \[label=<([^>]*)>\];)");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1].str() + "->" + (*it)[2].str() + ":" + (*it)[3].str());
  return out;
}

/// Prototxt with the lines inside every layer_param block sorted (MSC printed that block from a
/// hash map, so its order is not part of the format).
std::string SortLayerParams(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] != "  layer_param {") continue;
    size_t end = i + 1;
    while (end < lines.size() && lines[end] != "  }") ++end;
    std::sort(lines.begin() + static_cast<long>(i) + 1, lines.begin() + static_cast<long>(end));
    i = end;
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

/// A graph: input x [1,3] -> node NAME (nn.relu, attrs) -> graph output.
msc::ir::MSCGraph TwoNodes(const std::string& name, const std::string& attr_value = "1") {
  msc::ir::MSCGraph g;
  g.name = "g";
  msc::ir::MSCJoint in;
  in.index = 0;
  in.name = "x";
  in.optype = "input";
  in.outputs.push_back({"x:0", "x", "float32", "NC", {1, 3}, {}, msc::ir::Json::object()});
  msc::ir::MSCJoint n;
  n.index = 1;
  n.name = name;
  n.optype = "nn.relu";
  n.parents = {"x"};
  n.inputs = {"x:0"};
  n.outputs.push_back({name + ":0", "", "float32", "NC", {1, 3}, {}, msc::ir::Json::object()});
  n.attrs = {{"note", attr_value}};
  g.nodes = {in, n};
  g.inputs = {"x:0"};
  g.outputs = {name + ":0"};
  g.BuildIndex();
  return g;
}

/// A fresh empty folder under the build's temp dir.
std::string TempDir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("msc-viz-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

/// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string key;
  std::optional<std::string> old;
  ScopedEnv(const std::string& k, const char* value) : key(k) {
    if (const char* v = std::getenv(k.c_str())) old = v;
    if (value)
      ::setenv(k.c_str(), value, 1);
    else
      ::unsetenv(k.c_str());
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(key.c_str(), old->c_str(), 1);
    else
      ::unsetenv(key.c_str());
  }
};

void WriteScript(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  ::chmod(path.c_str(), 0755);
}

}  // namespace

TEST_CASE("visualize: prototxt equals what TVM v0.20's MSC wrote (layer_param order aside)") {
  for (const char* model : {"conv_relu", "mlp"}) {
    CAPTURE(model);
    const std::string dir = kRef + "/msc-real/" + model;
    auto g = msc::ir::LoadGraph(dir + "/graph.json");
    const std::string ours = msc::ir::GraphToPrototxt(g);
    const std::string msc = Slurp(dir + "/visualize.prototxt");
    REQUIRE(!msc.empty());
    CHECK(ours.back() == '}');  // MSC writes no final newline
    CHECK(SortLayerParams(ours) == SortLayerParams(msc));
  }
}

TEST_CASE("visualize: prototxt layer_param order and escaping follow MSC's printer") {
  auto g = msc::ir::LoadGraph(kRef + "/msc-real/conv_relu/graph.json");
  const std::string p = msc::ir::GraphToPrototxt(g);
  // Our (stable) order: idx, inputs, outputs, weights, attrs in stored order (the graph.json's).
  REQUIRE(g.nodes[1].attrs[0].first == "out_layout");
  const auto idx = p.find(
      "    idx: 1\n    input_0: \"inp_0:0(inp_0)<1,3,4,4|float32|NCHW>\"\n"
      "    output_0: \"conv2d:0<1,6,4,4|float32|NCHW>\"\n"
      "    param_weight: \"const(conv2d.weight)<6,3,1,1|float32|OIHW>\"\n"
      "    out_layout: \"NCHW\"\n    data_layout: \"NCHW\"");
  CHECK(idx != std::string::npos);
  CHECK(p.find("  type: \"nn_conv2d\"\n  top: \"conv2d\"\n  bottom: \"inp_0\"\n") !=
        std::string::npos);

  // tvm::support::StrEscape: quotes and backslashes escaped, UTF-8 as \xHH bytes, keys raw.
  auto h = TwoNodes("a\"b\\c/ü:d.e", "x\ny\t");
  h.nodes[1].optype = "msc.linear.bias";
  h.nodes[1].attrs.push_back({"idx", "7"});  // tvm::Map::Set: first position, last value
  const std::string q = msc::ir::GraphToPrototxt(h);
  CHECK(q.find("  name: \"a\\\"b\\\\c/\\xC3\\xBC:d.e\"\n  type: \"msc_linear_bias\"") !=
        std::string::npos);
  CHECK(q.find("    note: \"x\\ny\\t\"") != std::string::npos);
  CHECK(q.find("    idx: \"7\"\n    input_0: \"x:0(x)<1,3|float32|NC>\"") != std::string::npos);
  CHECK(Count(q, "idx:") == 2);  // one per layer
}

TEST_CASE("visualize: MscTensorRepr is MSC's tensor text") {
  msc::ir::MSCTensor t{"a:0", "al", "float16", "", {2, -1}, {"2", "N"}, msc::ir::Json::object()};
  CHECK(msc::ir::MscTensorRepr(t) == "a:0(al)<2,N|float16>");
  msc::ir::MSCTensor s{"c", "", "int64", "", {}, {}, msc::ir::Json::object()};
  CHECK(msc::ir::MscTensorRepr(s) == "c<int64>");
}

TEST_CASE("visualize: DOT nodes carry name, optype, attrs, weights, outputs; edges carry shapes") {
  auto g = msc::ir::LoadGraph(kRef + "/msc-real/conv_relu/graph.json");
  const std::string dot = msc::ir::GraphToDot(g);
  CHECK(dot.rfind("// MSCGraph (3 nodes)", 0) == 0);
  CHECK(dot.find("digraph msc_graph {\n") != std::string::npos);
  CHECK(dot.substr(dot.size() - 2) == "}\n");

  const std::string conv = NodeLine(dot, "n1");
  CHECK(conv.find("<B>conv2d</B>") != std::string::npos);
  CHECK(conv.find(">nn.conv2d</FONT>") != std::string::npos);
  for (const auto& kv : g.nodes[1].attrs)  // no structured binding: CHECK_MESSAGE captures it
    CHECK_MESSAGE(conv.find(kv.first + " = " + kv.second) != std::string::npos, kv.first);
  CHECK(conv.find("weight: 6x3x1x1 float32") != std::string::npos);
  CHECK(conv.find("out: 1x6x4x4 float32") != std::string::npos);
  CHECK(conv.find("graph input") == std::string::npos);
  CHECK(conv.find("graph output") == std::string::npos);

  // Graph input and graph output stand out: own colours, thick border, a marker row.
  const std::string inp = NodeLine(dot, "n0");
  CHECK(inp.find("BORDER=\"3\"") != std::string::npos);
  CHECK(inp.find("#c8e6c9") != std::string::npos);
  CHECK(inp.find("<B>graph input</B> inp_0:0") != std::string::npos);
  const std::string relu = NodeLine(dot, "n2");
  CHECK(relu.find("BORDER=\"3\"") != std::string::npos);
  CHECK(relu.find("#ffe0b2") != std::string::npos);
  CHECK(relu.find("<B>graph output</B> relu:0") != std::string::npos);
  CHECK(conv.find("BORDER=\"1\"") != std::string::npos);

  CHECK(Edges(dot) == std::vector<std::string>{"n0->n1:1x3x4x4", "n1->n2:1x6x4x4"});
  CHECK(Count(dot, " -> ") == 2);
  CHECK(msc::ir::GraphToDot(g) == dot);  // deterministic
}

TEST_CASE("visualize: DOT edges: one per (tensor, consumer), [k] for multi-output producers") {
  auto g = TwoNodes("y");
  // y = add(x, x) consumes x:0 twice: one edge.
  g.nodes[1].optype = "add";
  g.nodes[1].inputs = {"x:0", "x:0"};
  // z: two outputs; w consumes z:1 and y:0.
  msc::ir::MSCJoint z;
  z.index = 2;
  z.name = "z";
  z.optype = "split";
  z.parents = {"y"};
  z.inputs = {"y:0"};
  z.outputs = {{"z:0", "", "float32", "", {1, 1}, {}, msc::ir::Json::object()},
               {"z:1", "", "float32", "", {1, -1}, {}, msc::ir::Json::object()}};
  msc::ir::MSCJoint w;
  w.index = 3;
  w.name = "w";
  w.optype = "concat";
  w.parents = {"z", "y"};
  w.inputs = {"z:1", "y:0"};
  w.outputs = {{"w:0", "", "float32", "", {}, {}, msc::ir::Json::object()}};
  g.nodes.push_back(z);
  g.nodes.push_back(w);
  g.outputs = {"w:0"};
  g.BuildIndex();
  CHECK_NOTHROW(msc::ir::Validate(g, nullptr));
  const std::string dot = msc::ir::GraphToDot(g);
  CHECK(Edges(dot) ==
        std::vector<std::string>{"n0->n1:1x3", "n1->n2:1x3", "n2->n3:[1] 1x?", "n1->n3:1x3"});
  CHECK(NodeLine(dot, "n2").find("out0: 1x1 float32<BR/>out1: 1x? float32") != std::string::npos);
  CHECK(NodeLine(dot, "n3").find("out: scalar float32") != std::string::npos);

  // An input that names nothing: a clear error naming node and tensor.
  g.nodes[3].inputs[0] = "nope:0";
  CHECK_THROWS_WITH_AS(msc::ir::GraphToDot(g),
                       "<memory>: node 'w': input 'nope:0' names no node output", msc::Error);
  CHECK_THROWS_AS(msc::ir::GraphToPrototxt(g), msc::Error);
}

TEST_CASE("visualize: DOT escapes hostile names and truncates long attrs") {
  const std::string name = "a\"b\\N<c>&d'e:f.g/h ü{|}\x01";
  auto g = TwoNodes(name, std::string(100, 'v'));
  const std::string dot = msc::ir::GraphToDot(g);
  const std::string line = NodeLine(dot, "n1");
  // HTML label: entities, doubled backslash (Graphviz would expand \N), \xHH for controls.
  CHECK(line.find("<B>a&quot;b\\\\N&lt;c&gt;&amp;d&#39;e:f.g/h ü{|}\\\\x01</B>") !=
        std::string::npos);
  // Tooltip (escString): four backslashes per backslash, \" for quotes, &amp; for '&'.
  CHECK(line.find("tooltip=\"a\\\"b\\\\\\\\N<c>&amp;d'e:f.g/h ü{|}\\\\\\\\x01\\nnn.relu\\nnote = " +
                  std::string(100, 'v') + "\"") != std::string::npos);
  // Newline, tab, CR: shown as their escapes, never raw.
  CHECK(
      NodeLine(msc::ir::GraphToDot(TwoNodes("r\nq\t\r")), "n1").find("<B>r\\\\nq\\\\t\\\\r</B>") !=
      std::string::npos);
  // Long values: 37 characters + "..." in the label.
  CHECK(line.find("note = " + std::string(37, 'v') + "...<") != std::string::npos);
  CHECK(line.find(std::string(38, 'v') + "<") == std::string::npos);
  CHECK(NodeLine(dot, "n1").find("graph output</B> " + std::string("a&quot;b")) !=
        std::string::npos);
  // No raw quote or newline can end a statement early: each statement is one line.
  CHECK(Count(dot, "\n") == 9);

  // UTF-8 truncation never splits a character.
  std::string wide;
  for (int i = 0; i < 50; ++i) wide += "\xC3\xBC";  // ü
  auto u = TwoNodes("u", wide);
  CHECK(NodeLine(msc::ir::GraphToDot(u, {10}), "n1").find("note = üüüüüüü...<") !=
        std::string::npos);
}

TEST_CASE("visualize: a 10,000-node graph is written quickly") {
  msc::ir::MSCGraph g = TwoNodes("n_0");
  for (int i = 1; i < 10000; ++i) {
    msc::ir::MSCJoint n = g.nodes.back();
    const std::string prev = n.name;
    n.index = i + 1;
    n.name = "n_" + std::to_string(i);
    n.parents = {prev};
    n.inputs = {prev + ":0"};
    n.outputs[0].name = n.name + ":0";
    g.nodes.push_back(n);
  }
  g.outputs = {g.nodes.back().name + ":0"};
  g.BuildIndex();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string dot = msc::ir::GraphToDot(g);
  const std::string proto = msc::ir::GraphToPrototxt(g);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(Edges(dot).size() == 10000);
  CHECK(Count(proto, "\nlayer {") == 10001);
  CHECK(s < 3.0);  // linear: ~20 ms here; quadratic would take minutes
}

TEST_CASE("visualize: format from --format or the extension; usage message names them") {
  std::string why;
  CHECK(msc::ir::ResolveVizFormat("a/b.SVG", "", &why) == msc::ir::VizFormat::kSvg);
  CHECK(msc::ir::ResolveVizFormat("b.dot", "", &why) == msc::ir::VizFormat::kDot);
  CHECK(msc::ir::ResolveVizFormat("b.prototxt", "", &why) == msc::ir::VizFormat::kPrototxt);
  CHECK(msc::ir::ResolveVizFormat("b.png", "dot", &why) == msc::ir::VizFormat::kDot);
  CHECK_FALSE(msc::ir::ResolveVizFormat("b.png", "", &why));
  CHECK(why ==
        "visualize: cannot tell the format of 'b.png' from its extension: expected .svg, .dot or "
        ".prototxt (or pass --format)");
  CHECK_FALSE(msc::ir::ResolveVizFormat("noext", "", &why));
  CHECK_FALSE(msc::ir::ResolveVizFormat("b.svg", "png", &why));
}

TEST_CASE("visualize: dot lookup on PATH; a clear error when it is missing") {
  const std::string dir = TempDir("path");
  {
    ScopedEnv env("PATH", "/nonexistent-dir");
    CHECK_THROWS_WITH_AS(msc::ir::FindGraphvizDot(),
                         doctest::Contains("visualize: SVG needs Graphviz's `dot` (apt-get "
                                           "install graphviz); write .dot instead"),
                         msc::Error);
    // The SVG path looks it up before writing anything.
    auto g = TwoNodes("y");
    CHECK_THROWS_AS(msc::ir::WriteVisualization(g, dir + "/g.svg", msc::ir::VizFormat::kSvg),
                    msc::Error);
    CHECK(fs::is_empty(dir));
  }
  WriteScript(dir + "/dot", "exit 0\n");
  {
    ScopedEnv env("PATH", ("/nonexistent-dir::" + dir).c_str());
    CHECK(msc::ir::FindGraphvizDot() == dir + "/dot");
  }
  ::chmod((dir + "/dot").c_str(), 0644);  // not executable: skipped
  {
    ScopedEnv env("PATH", dir.c_str());
    CHECK_THROWS_AS(msc::ir::FindGraphvizDot(), msc::Error);
  }
  fs::remove_all(dir);
}

TEST_CASE("visualize: a failing dot leaves the previous output and no temporary file") {
  const std::string dir = TempDir("atomic");
  const std::string out = dir + "/g.svg";
  std::ofstream(out) << "previous";
  // A dot that writes half an SVG, complains, and fails.
  WriteScript(dir + "/baddot",
              "cat >/dev/null; printf '<svg half'; echo 'syntax error in line 3' >&2; exit 1\n");
  const std::string dot_text = msc::ir::GraphToDot(TwoNodes("y"));
  CHECK_THROWS_WITH_AS(msc::ir::RenderSvg(dot_text, dir + "/baddot", out),
                       doctest::Contains("-Tsvg` failed (exit status 1): syntax error in line 3"),
                       msc::Error);
  CHECK(Slurp(out) == "previous");
  // A dot that is killed by a signal.
  WriteScript(dir + "/killdot", "kill -9 $$\n");
  CHECK_THROWS_WITH_AS(msc::ir::RenderSvg(dot_text, dir + "/killdot", out),
                       doctest::Contains("killed by signal 9"), msc::Error);
  // A dot that succeeds without output.
  WriteScript(dir + "/emptydot", "cat >/dev/null; exit 0\n");
  CHECK_THROWS_WITH_AS(msc::ir::RenderSvg(dot_text, dir + "/emptydot", out),
                       doctest::Contains("produced no SVG"), msc::Error);
  CHECK(Slurp(out) == "previous");
  // A dot that passes its input through: our DOT arrives on stdin, whole, and is committed.
  WriteScript(dir + "/catdot", "[ \"$1\" = -Tsvg ] || exit 3; cat\n");
  msc::ir::RenderSvg(dot_text, dir + "/catdot", out);
  CHECK(Slurp(out) == dot_text);
  // Large input (more than a pipe buffer) while dot also writes to stderr: no deadlock.
  const std::string big(4 << 20, 'x');
  WriteScript(dir + "/noisydot",
              "i=0; while [ $i -lt 2000 ]; do echo noise-noise-noise >&2; i=$((i+1)); done; cat\n");
  msc::ir::RenderSvg(big, dir + "/noisydot", out);
  CHECK(fs::file_size(out) == big.size());
  // Only the scripts and g.svg: no temporaries.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{"baddot", "catdot", "emptydot", "g.svg", "killdot", "noisydot"});
  fs::remove_all(dir);
}

TEST_CASE("visualize: WriteFileAtomic replaces whole files and refuses directories") {
  const std::string dir = TempDir("write");
  msc::ir::WriteFileAtomic(dir + "/sub/a.dot", "one");
  msc::ir::WriteFileAtomic(dir + "/sub/a.dot", "two");
  CHECK(Slurp(dir + "/sub/a.dot") == "two");
  CHECK_THROWS_WITH_AS(msc::ir::WriteFileAtomic(dir + "/sub", "x"),
                       doctest::Contains("is a directory"), msc::Error);
  CHECK(std::distance(fs::directory_iterator(dir + "/sub"), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}
