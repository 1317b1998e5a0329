// Epilogue and residual fusion (generator/analyses/fusion.h, issue 9 item 2) and the memory plan
// around it: which adds are folded into a conv/GEMM producer, what the context says
// (fused_residual, fused_epilogue, fused_into), that the fused outputs share the producer's bytes
// and that the producer's output never shares the residual's; backend.yaml's residual keys.
// Elementwise chains: which nodes join a chain (chains, trees, shared intermediates, graph
// outputs, shapes, dtypes, limits, fused epilogues), the fused_chain program, that intermediates
// get no bytes and the chain's inputs stay live until its root; backend.yaml's fuse_elementwise
// keys. Every case also checks that the context writes exactly what the analyses, run on the
// MSCGraph, decided (CheckAnalyses).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/emit/context.h"
#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"
#include "tests/unit/test_graph.h"

namespace fs = boost::filesystem;
using msc::emit::Json;

namespace {

// A backend.yaml in a temporary folder (removed with the object): a minimal valid spec plus
// `extra` lines; Load returns the error text, or "" and sets *spec.
struct SpecFile {
  fs::path root = fs::temp_directory_path() / fs::unique_path("msc-spec-%%%%%%");
  SpecFile() { fs::create_directories(root / "b"); }
  ~SpecFile() {
    boost::system::error_code ec;
    fs::remove_all(root, ec);
  }
  std::string Path() const { return (root / "b" / "backend.yaml").string(); }
  std::string Load(const std::string& extra, msc::emit::BackendSpec* spec) const {
    std::ofstream(Path()) << "op_template: ops/{path}.j2\nop_sections: [run]\n"
                             "files: [{template: t.j2, output: t}]\n"
                          << extra;
    try {
      *spec = msc::emit::LoadBackendSpec(root.string(), "b");
    } catch (const msc::Error& e) {
      return e.what();
    }
    return "";
  }
};

const std::string kTemplates = std::string(MSC_SOURCE_DIR) + "/templates";
const std::string kOpdefs = std::string(MSC_SOURCE_DIR) + "/opdefs";

using msc::test::Build;
using msc::test::N;

const msc::opdef::OpDefRegistry& Opdefs() {
  static const auto reg = msc::opdef::OpDefRegistry::LoadDir(kOpdefs);
  return reg;
}

/// vulkan's backend.yaml (it opts in to residual fusion), or a copy of it with other fusion lists.
msc::emit::BackendSpec Vulkan() {
  return msc::emit::LoadBackendSpec(kTemplates, "vulkan", Opdefs());
}

/// The graph object of the native context.
Json Context(const msc::ir::MSCGraph& g, const msc::emit::BackendSpec& spec) {
  return msc::emit::BuildContext(g, Opdefs(), spec)["graph"];
}

const Json& NodeOf(const Json& graph, const std::string& name) {
  for (const auto& n : graph["nodes"])
    if (n["name"] == name) return n;
  FAIL("no node " << name);
  static const Json kNull;
  return kNull;
}

long long OffsetOf(const Json& graph, const std::string& name) {
  return NodeOf(graph, name)["outputs"][0]["offset"].get<long long>();
}

/// [offset, offset + nbytes) of two nodes' outputs do not intersect.
bool Disjoint(const Json& graph, const std::string& a, const std::string& b) {
  const Json& ta = NodeOf(graph, a)["outputs"][0];
  const Json& tb = NodeOf(graph, b)["outputs"][0];
  const long long oa = ta["offset"], ob = tb["offset"], na = ta["nbytes"], nb = tb["nbytes"];
  return oa + na <= ob || ob + nb <= oa;
}

std::string Residual(const Json& graph, const std::string& node) {
  const Json& r = NodeOf(graph, node)["fused_residual"];
  return r.is_null() ? "" : r["name"].get<std::string>();
}

std::string Epilogue(const Json& graph, const std::string& node) {
  const Json& e = NodeOf(graph, node)["fused_epilogue"];
  return e.is_null() ? "" : e["name"].get<std::string>();
}

std::string Norm(const Json& graph, const std::string& node) {
  const Json& n = NodeOf(graph, node)["fused_norm"];
  return n.is_null() ? "" : n["name"].get<std::string>();
}

std::string Into(const Json& graph, const std::string& node) {
  return NodeOf(graph, node)["fused_into"].get<std::string>();
}

/// A fused_chain as "step(operands) ... | inputs": e.g. "gelu(i0) add(s0,i1) | x:0 b:0"; "" for
/// none (names and operands only).
std::string ChainText(const Json& chain) {
  if (chain.is_null()) return "";
  std::string s;
  for (const auto& st : chain["steps"]) {
    s += (s.empty() ? "" : " ") + st["name"].get<std::string>() + "(";
    for (size_t k = 0; k < st["operands"].size(); ++k) {
      const Json& o = st["operands"][k];
      s += (k ? "," : "") + std::string(o["kind"] == "step" ? "s" : "i") +
           std::to_string(o["index"].get<int>());
    }
    s += ")";
  }
  s += " |";
  for (const auto& t : chain["inputs"]) s += " " + t["name"].get<std::string>();
  return s;
}

/// The analyses run on the MSCGraph itself (analyses::GraphAnalyses with the spec's options) and
/// the context agree: every node's fusion fields are the FusionPlan's decisions, its output offset
/// and in_place the MemoryPlan's.
void CheckAnalyses(const msc::ir::MSCGraph& g, const Json& context,
                   const msc::emit::BackendSpec& spec) {
  const msc::analyses::GraphAnalyses a(g, Opdefs(), spec.fusion, spec.memory);
  REQUIRE(a.fusion.nodes.size() == g.nodes.size());
  REQUIRE(context["nodes"].size() == g.nodes.size());
  REQUIRE(a.memory);
  auto name_of = [&](long long i) { return i < 0 ? std::string() : g.nodes[i].name; };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const msc::analyses::NodeFusion& f = a.fusion.nodes[i];
    const Json& node = context["nodes"][i];
    INFO("node " << g.nodes[i].name);
    CHECK(Into(context, g.nodes[i].name) == name_of(f.into));
    CHECK(Epilogue(context, g.nodes[i].name) == name_of(f.epilogue));
    CHECK(Norm(context, g.nodes[i].name) == name_of(f.norm));
    CHECK(Residual(context, g.nodes[i].name) ==
          (f.residual_add < 0 ? "" : g.nodes[f.residual_add].inputs[f.residual_input]));
    std::string chain;  // the plan's chain in ChainText's form
    if (f.chain >= 0) {
      const msc::analyses::Chain& c = a.fusion.chains[f.chain];
      for (size_t s = 0; s < c.members.size(); ++s) {
        chain += (s ? " " : "") + g.nodes[c.members[s]].name + "(";
        for (size_t k = 0; k < c.operands[s].size(); ++k)
          chain += (k ? "," : "") + std::string(c.operands[s][k].step ? "s" : "i") +
                   std::to_string(c.operands[s][k].index);
        chain += ")";
      }
      chain += " |";
      for (const auto& [s, k] : c.inputs) chain += " " + g.nodes[c.members[s]].inputs[k];
    }
    CHECK(ChainText(node["fused_chain"]) == chain);
    CHECK(node["in_place"] == a.memory->in_place[i]);
    const Json& out = node["outputs"][0];
    auto at = a.memory->offset.find(g.nodes[i].outputs[0].name);
    CHECK(out.contains("offset") == (at != a.memory->offset.end()));  // constants: unplanned
    if (out.contains("offset") && at != a.memory->offset.end()) CHECK(out["offset"] == at->second);
  }
  CHECK(context["memory"]["peak_bytes"] == a.memory->peak);
}

const std::vector<int64_t> kS = {1, 8, 6, 6};

}  // namespace

TEST_CASE("residual fusion: a resnet basic block folds add + relu into the second conv") {
  // x -> conv1 -> relu1 -> conv2 -> add(conv2, x) -> relu2 -> conv3 (output)
  const auto g = Build({{"x", "input", {}, kS},
                        {"conv1", "nn.conv2d", {"x"}, kS},
                        {"relu1", "nn.relu", {"conv1"}, kS},
                        {"conv2", "nn.conv2d", {"relu1"}, kS},
                        {"add", "add", {"conv2", "x"}, kS},
                        {"relu2", "nn.relu", {"add"}, kS},
                        {"conv3", "nn.conv2d", {"relu2"}, kS}},
                       {"conv3"});
  const Json c = Context(g, Vulkan());
  CHECK(Epilogue(c, "conv1") == "relu1");
  CHECK(Residual(c, "conv1") == "");
  CHECK(Residual(c, "conv2") == "x:0");
  CHECK(Epilogue(c, "conv2") == "relu2");
  CHECK(Into(c, "add") == "conv2");
  CHECK(Into(c, "relu2") == "conv2");
  CHECK(Into(c, "conv2") == "");
  // The residual is the add's other operand as node.inputs shows it (a full tensor object).
  CHECK(NodeOf(c, "conv2")["fused_residual"] == NodeOf(c, "add")["inputs"][1]);
  // conv2 writes the sum: add and relu2 are conv2's bytes; x (read meanwhile) is not.
  CHECK(OffsetOf(c, "add") == OffsetOf(c, "conv2"));
  CHECK(OffsetOf(c, "relu2") == OffsetOf(c, "conv2"));
  CHECK(Disjoint(c, "conv2", "x"));
  CHECK(Disjoint(c, "conv3", "conv2"));
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("epilogue fusion: any unary_math op after a conv or GEMM, not a predicate or a chain") {
  // vulkan's fuse_epilogues.epilogues is "trait:unary_math": gelu / silu / sigmoid after a conv
  // or linear run in its epilogue (ops::Activation::Unary), also after a residual add; isnan (a
  // predicate, no unary_math) and an op whose producer's output is read twice do not.
  const auto g = Build({{"x", "input", {}, kS},
                        {"conv1", "nn.conv2d", {"x"}, kS},
                        {"silu", "nn.silu", {"conv1"}, kS},
                        {"conv2", "nn.conv2d", {"silu"}, kS},
                        {"add", "add", {"conv2", "x"}, kS},
                        {"gelu", "nn.gelu", {"add"}, kS},
                        {"conv3", "nn.conv2d", {"gelu"}, kS},
                        {"nan", "isnan", {"conv3"}, kS},
                        {"conv4", "nn.conv2d", {"gelu"}, kS},
                        {"sig", "sigmoid", {"conv4"}, kS},
                        {"tail", "add", {"conv4", "sig"}, kS}},
                       {"nan", "tail"});
  const Json c = Context(g, Vulkan());
  CHECK(Epilogue(c, "conv1") == "silu");
  CHECK(Into(c, "silu") == "conv1");
  CHECK(Residual(c, "conv2") == "x:0");
  CHECK(Epilogue(c, "conv2") == "gelu");
  CHECK(Into(c, "gelu") == "conv2");
  CHECK(Epilogue(c, "conv3") == "");
  CHECK(Into(c, "nan") == "");
  CHECK(Epilogue(c, "conv4") == "");  // conv4 is read by tail too
  CHECK(Into(c, "sig") != "conv4");
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("residual fusion: the producer's output may be the add's second operand") {
  // A downsampling block: the main branch conv2 comes before the shortcut conv `down`, so the add
  // is folded into `down` (its residual conv2 is ready), not into conv2 (its residual is not).
  const std::vector<int64_t> s2 = {1, 16, 3, 3};
  const auto g = Build({{"x", "input", {}, kS},
                        {"conv1", "nn.conv2d", {"x"}, s2},
                        {"relu1", "nn.relu", {"conv1"}, s2},
                        {"conv2", "msc.conv2d_bias", {"relu1"}, s2},
                        {"down", "msc.conv2d_bias", {"x"}, s2},
                        {"add", "add", {"conv2", "down"}, s2},
                        {"relu2", "nn.relu", {"add"}, s2},
                        {"pool", "nn.adaptive_avg_pool2d", {"relu2"}, {1, 16, 1, 1}}},
                       {"pool"});
  const Json c = Context(g, Vulkan());
  CHECK(Residual(c, "conv2") == "");
  CHECK(Residual(c, "down") == "conv2:0");
  CHECK(Epilogue(c, "down") == "relu2");
  CHECK(Into(c, "add") == "down");
  CHECK(Into(c, "relu2") == "down");
  // add's output aliases its input 1 (down), never its input 0 (the residual).
  CHECK(OffsetOf(c, "add") == OffsetOf(c, "down"));
  CHECK(OffsetOf(c, "relu2") == OffsetOf(c, "down"));
  CHECK(Disjoint(c, "down", "conv2"));
  CHECK(Disjoint(c, "down", "x"));
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("residual fusion: what is not folded") {
  const msc::emit::BackendSpec spec = Vulkan();
  SUBCASE("the residual is computed after the producer") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"later", "nn.relu", {"x"}, kS},
                          {"add", "add", {"conv", "later"}, kS}},
                         {"add"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CHECK(Into(c, "add") == "");
    CHECK(Epilogue(c, "later") == "");  // relu of an input: no producer
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("broadcasting: the residual's shape differs") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"b", "input", {}, {1, 8, 1, 1}},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"add", "add", {"conv", "b"}, kS}},
                         {"add"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CHECK(Into(c, "add") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("the residual's dtype differs") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"h", "input", {}, kS, "float16"},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"add", "add", {"conv", "h"}, kS}},
                         {"add"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("the producer's output has a second consumer") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"add", "add", {"conv", "x"}, kS},
                          {"other", "nn.relu", {"conv"}, kS}},
                         {"add", "other"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CHECK(Into(c, "add") == "");
    CHECK(Into(c, "other") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("the producer's output is a graph output") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"add", "add", {"conv", "x"}, kS}},
                         {"add", "conv"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("y + y") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"add", "add", {"conv", "conv"}, kS}},
                         {"add"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CHECK(Into(c, "add") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("a producer outside residual_producers (vulkan: the 1-D convolutions)") {
    const std::vector<int64_t> s = {1, 4, 9};
    const auto g = Build({{"x", "input", {}, s},
                          {"conv", "nn.conv1d", {"x"}, s},
                          {"add", "add", {"conv", "x"}, s},
                          {"relu", "nn.relu", {"add"}, s}},
                         {"relu"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CHECK(Epilogue(c, "conv") == "");
    // (the add and the relu run as one elementwise chain instead)
    CHECK(Into(c, "add") == "relu");
    CHECK(ChainText(NodeOf(c, "relu")["fused_chain"]) == "add(i0,i1) relu(s0) | conv:0 x:0");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("an op other than the residual list's (subtract)") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"sub", "subtract", {"x", "conv"}, kS}},
                         {"sub"});
    const Json c = Context(g, spec);
    CHECK(Residual(c, "conv") == "");
    CHECK(Into(c, "sub") == "");
  }
  SUBCASE("backends without fuse_epilogues fold nothing") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"add", "add", {"conv", "x"}, kS},
                          {"relu", "nn.relu", {"add"}, kS}},
                         {"relu"});
    int checked = 0;
    for (const std::string& backend : msc::emit::ListBackends(kTemplates)) {
      const auto spec = msc::emit::LoadBackendSpec(kTemplates, backend, Opdefs());
      if (!spec.fusion.residual.empty() || !spec.fusion.epilogues.empty()) continue;
      ++checked;
      const Json c = Context(g, spec);
      CHECK(Residual(c, "conv") == "");
      CHECK(Into(c, "add") == "");
      CHECK(Into(c, "relu") == "");
    }
    CHECK(checked > 0);
  }
}

TEST_CASE("residual fusion: a sum that is a graph output keeps the act after it separate") {
  // conv + x is a graph output and feeds a relu: the add is folded (its output is conv's bytes,
  // live to the end), the relu is not (it must not overwrite the returned sum).
  const auto g = Build({{"x", "input", {}, kS},
                        {"conv", "nn.conv2d", {"x"}, kS},
                        {"add", "add", {"conv", "x"}, kS},
                        {"relu", "nn.relu", {"add"}, kS}},
                       {"add", "relu"});
  const Json c = Context(g, Vulkan());
  CHECK(Residual(c, "conv") == "x:0");
  CHECK(Epilogue(c, "conv") == "");
  CHECK(Into(c, "add") == "conv");
  CHECK(Into(c, "relu") == "");
  CHECK(OffsetOf(c, "add") == OffsetOf(c, "conv"));
  CHECK(Disjoint(c, "relu", "conv"));
  CHECK(Disjoint(c, "conv", "x"));
  CheckAnalyses(g, c, Vulkan());
  // Without the relu the same sum is folded as well; a relu with a second reader of the sum
  // stays separate too.
  const auto g2 = Build({{"x", "input", {}, kS},
                         {"conv", "nn.conv2d", {"x"}, kS},
                         {"add", "add", {"conv", "x"}, kS},
                         {"relu", "nn.relu", {"add"}, kS},
                         {"tail", "add", {"add", "relu"}, kS}},
                        {"tail"});
  const Json c2 = Context(g2, Vulkan());
  CHECK(Residual(c2, "conv") == "x:0");
  CHECK(Epilogue(c2, "conv") == "");
  // (the relu runs in the elementwise chain of `tail`, which reads the sum as its input)
  CHECK(Into(c2, "relu") == "tail");
  CHECK(ChainText(NodeOf(c2, "tail")["fused_chain"]) == "relu(i0) tail(i0,s0) | add:0");
  CheckAnalyses(g2, c2, Vulkan());
}

TEST_CASE("residual fusion: graph inputs and constants are ready wherever they are") {
  // The second graph input is declared (node order) after the conv; constants are weights.
  const auto g = Build({{"x", "input", {}, kS},
                        {"conv", "nn.conv2d", {"x"}, kS},
                        {"late", "input", {}, kS},
                        {"add", "add", {"late", "conv"}, kS},
                        {"conv2", "nn.conv2d", {"add"}, kS},
                        {"k", "constant", {}, kS},
                        {"add2", "add", {"conv2", "k"}, kS}},
                       {"add2"});
  const Json c = Context(g, Vulkan());
  CHECK(Residual(c, "conv") == "late:0");
  CHECK(Into(c, "add") == "conv");
  CHECK(OffsetOf(c, "add") == OffsetOf(c, "conv"));
  CHECK(Disjoint(c, "conv", "late"));
  CHECK(Residual(c, "conv2") == "k:0");
  CHECK(Into(c, "add2") == "conv2");
  CHECK(OffsetOf(c, "add2") == OffsetOf(c, "conv2"));
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("residual fusion: transformer linear + residual and matmul") {
  const std::vector<int64_t> s = {2, 12, 12};
  const auto g = Build({{"x", "input", {}, s},
                        {"fc1", "msc.linear_bias", {"x"}, s},
                        {"add1", "add", {"x", "fc1"}, s},
                        {"fc2", "msc.linear", {"add1"}, s},
                        {"add2", "add", {"fc2", "add1"}, s},
                        {"clip", "clip", {"add2"}, s},
                        {"mm", "matmul", {"clip", "x"}, s},
                        {"add3", "add", {"mm", "fc1"}, s}},
                       {"add3"});
  const Json c = Context(g, Vulkan());
  CHECK(Residual(c, "fc1") == "");  // its output has two readers (add1, add3)
  CHECK(Residual(c, "fc2") == "add1:0");
  CHECK(Epilogue(c, "fc2") == "clip");
  CHECK(Into(c, "clip") == "fc2");
  CHECK(Residual(c, "mm") == "fc1:0");
  CHECK(Into(c, "add3") == "mm");
  // add1 stays a separate add (x + fc1, fc1 read twice) and is fc2's residual: fc2's output
  // (= add2 = clip) never shares its bytes.
  CHECK(Into(c, "add1") == "");
  CHECK(Disjoint(c, "fc2", "add1"));
  CHECK(OffsetOf(c, "clip") == OffsetOf(c, "fc2"));
  CHECK(Disjoint(c, "mm", "fc1"));
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("norm fusion: a post-norm transformer's linear + residual + layer_norm") {
  // x -> fc1 -> add1(fc1, x) -> ln1 -> fc2 -> add2(fc2, ln1) -> ln2 (graph output)
  const std::vector<int64_t> s = {2, 12, 12};
  const auto g = Build({{"x", "input", {}, s},
                        {"fc1", "msc.linear_bias", {"x"}, s},
                        {"add1", "add", {"fc1", "x"}, s},
                        {"ln1", "nn.layer_norm", {"add1"}, s},
                        {"fc2", "msc.linear", {"ln1"}, s},
                        {"add2", "add", {"fc2", "ln1"}, s},
                        {"ln2", "nn.layer_norm", {"add2"}, s}},
                       {"ln2"});
  const Json c = Context(g, Vulkan());
  CHECK(Residual(c, "fc1") == "x:0");
  CHECK(Norm(c, "fc1") == "ln1");
  CHECK(Into(c, "ln1") == "fc1");
  CHECK(NodeOf(c, "fc1")["fused_norm"]["keeps_input"] == false);
  CHECK(NodeOf(c, "fc1")["fused_norm"]["outputs"][0]["name"] == "ln1:0");
  CHECK(Norm(c, "fc2") == "ln2");
  // The norm's output has bytes of its own, written at fc1's position: never the bytes of fc1's
  // sum, nor of x (read by the fused add, which precedes ln1 in node order).
  CHECK(Disjoint(c, "ln1", "fc1"));
  CHECK(Disjoint(c, "ln1", "x"));
  CHECK(Disjoint(c, "ln2", "ln1"));  // ln1 is fc2's residual, read while ln2 is written
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("norm fusion: pre-norm keeps the residual stream, and what is not fused") {
  const std::vector<int64_t> s = {2, 12, 12};
  SUBCASE("the sum is read by the norm and the next residual: stored as well") {
    const auto g = Build({{"x", "input", {}, s},
                          {"fc1", "msc.linear_bias", {"x"}, s},
                          {"add1", "add", {"fc1", "x"}, s},
                          {"ln", "nn.layer_norm", {"add1"}, s},
                          {"fc2", "msc.linear_bias", {"ln"}, s},
                          {"add2", "add", {"fc2", "add1"}, s}},
                         {"add2"});
    const Json c = Context(g, Vulkan());
    CHECK(Norm(c, "fc1") == "ln");
    CHECK(NodeOf(c, "fc1")["fused_norm"]["keeps_input"] == true);
    CHECK(Disjoint(c, "ln", "add1"));
    CheckAnalyses(g, c, Vulkan());
  }
  SUBCASE("a producer read twice: the norm still runs in its epilogue") {
    const auto g = Build({{"x", "input", {}, s},
                          {"fc1", "msc.linear", {"x"}, s},
                          {"ln", "nn.layer_norm", {"fc1"}, s},
                          {"add", "add", {"ln", "fc1"}, s}},
                         {"add"});
    const Json c = Context(g, Vulkan());
    CHECK(Norm(c, "fc1") == "ln");
    CHECK(NodeOf(c, "fc1")["fused_norm"]["keeps_input"] == true);
    CheckAnalyses(g, c, Vulkan());
  }
  SUBCASE("not fused: a producer outside norm_producers, a norm of another optype") {
    const auto g = Build({{"x", "input", {}, {1, 8, 6, 6}},
                          {"conv", "nn.conv2d", {"x"}, {1, 8, 6, 6}},
                          {"ln", "nn.layer_norm", {"conv"}, {1, 8, 6, 6}},
                          {"fc", "msc.linear", {"ln"}, {1, 8, 6, 6}},
                          {"rms", "nn.rms_norm", {"fc"}, {1, 8, 6, 6}}},
                         {"rms"});
    const Json c = Context(g, Vulkan());
    CHECK(Norm(c, "conv") == "");
    CHECK(Norm(c, "fc") == "");
    CHECK(Into(c, "ln") == "");
    CheckAnalyses(g, c, Vulkan());
  }
}

TEST_CASE("fuse_epilogues.norms and norm_producers go together, producers a subset") {
  SpecFile f;
  msc::emit::BackendSpec spec;
  CHECK(f.Load("fuse_epilogues: {producers: [msc.linear], epilogues: [nn.relu], norms: "
               "[nn.layer_norm]}\n",
               &spec)
            .find("fuse_epilogues.norms and fuse_epilogues.norm_producers go together") !=
        std::string::npos);
  CHECK(f.Load("fuse_epilogues: {producers: [msc.linear], epilogues: [nn.relu], norms: "
               "[nn.layer_norm], norm_producers: [matmul]}\n",
               &spec)
            .find("fuse_epilogues.norm_producers: 'matmul' is not in fuse_epilogues.producers") !=
        std::string::npos);
  CHECK(f.Load("fuse_epilogues: {producers: [msc.linear], epilogues: [nn.relu], norms: "
               "[nn.layer_norm], norm_producers: [msc.linear]}\n",
               &spec) == "");
  CHECK(spec.fusion.norms == std::vector<std::string>{"nn.layer_norm"});
}

TEST_CASE("fuse_views: splits and consumers go together; consumers map optypes to indices") {
  SpecFile f;
  msc::emit::BackendSpec spec;
  CHECK(f.Load("fuse_views: {splits: [split], through: [reshape]}\n", &spec)
            .find("fuse_views.splits and fuse_views.consumers go together") != std::string::npos);
  CHECK(f.Load("fuse_views: {splits: [split], consumers: [msc.attention]}\n", &spec)
            .find("fuse_views.consumers must map optypes to the input indices") !=
        std::string::npos);
  CHECK(f.Load("fuse_views: {splits: [split], consumers: {msc.attention: [0, q]}}\n", &spec)
            .find("fuse_views.consumers.msc.attention: an input index must be an integer >= 0") !=
        std::string::npos);
  CHECK(f.Load("fuse_views: {splits: [split], through: [reshape], consumers: {msc.attention: [0, "
               "2]}}\n",
               &spec) == "");
  REQUIRE(spec.fusion.view_consumers.size() == 1);
  CHECK(spec.fusion.view_consumers[0].first == "msc.attention");
  CHECK(spec.fusion.view_consumers[0].second == std::vector<size_t>{0, 2});
}

TEST_CASE("residual fusion on the MSCGraph: an add with three inputs is no residual add") {
  msc::analyses::FusionOptions options;
  options.producers = {"conv"};
  options.epilogues = {"relu"};
  options.residual = {"add"};
  options.residual_producers = {"conv"};
  const std::vector<int64_t> s = {256};
  const auto three = Build(
      {{"x", "input", {}, s}, {"conv", "conv", {"x"}, s}, {"add", "add", {"conv", "x", "x"}, s}},
      {"add"});
  const msc::analyses::Dataflow d3(three);
  const msc::analyses::FusionPlan f3 = msc::analyses::PlanFusion(d3, options);
  CHECK(f3.nodes[1].residual_add == -1);
  CHECK(f3.nodes[2].into == -1);
  const auto two =
      Build({{"x", "input", {}, s}, {"conv", "conv", {"x"}, s}, {"add", "add", {"conv", "x"}, s}},
            {"add"});
  const msc::analyses::Dataflow d2(two);
  const msc::analyses::FusionPlan f2 = msc::analyses::PlanFusion(d2, options);
  CHECK(f2.nodes[1].residual_add == 2);
  CHECK(f2.nodes[1].residual_input == 1);
  CHECK(f2.nodes[2].into == 1);
  CHECK(f2.nodes[2].alias_input == 0);
  const msc::analyses::MemoryPlan m = msc::analyses::PlanMemory(d2, f2, Opdefs(), {256, {}, {}});
  CHECK(m.offset.at("add:0") == m.offset.at("conv:0"));
  CHECK(m.offset.at("conv:0") != m.offset.at("x:0"));
  // Without the residual lists no add is folded.
  options.residual.clear();
  options.residual_producers.clear();
  CHECK(msc::analyses::PlanFusion(d2, options).nodes[1].residual_add == -1);
}

TEST_CASE("backend.yaml fuse_epilogues.residual: keys, pairing and subset checks") {
  const SpecFile spec_file;
  const std::string file = spec_file.Path();
  auto load = [&](const std::string& fuse, msc::emit::BackendSpec* spec) {
    return spec_file.Load(fuse, spec);
  };
  msc::emit::BackendSpec spec;
  CHECK(load("fuse_epilogues:\n  producers: [conv, dense]\n  epilogues: [relu]\n"
             "  residual: [add]\n  residual_producers: [conv]\n",
             &spec) == "");
  CHECK(spec.fusion.residual == std::vector<std::string>{"add"});
  CHECK(spec.fusion.residual_producers == std::vector<std::string>{"conv"});
  CHECK(load("fuse_epilogues:\n  producers: [conv]\n  epilogues: [relu]\n  residual: [add]\n",
             &spec) == file +
                           ":5:3: fuse_epilogues.residual and fuse_epilogues.residual_producers go "
                           "together");
  CHECK(load("fuse_epilogues:\n  producers: [conv]\n  epilogues: [relu]\n  residual: [add]\n"
             "  residual_producers: [conv, pool]\n",
             &spec) == file +
                           ":8:23: fuse_epilogues.residual_producers: 'pool' is not in "
                           "fuse_epilogues.producers");
  CHECK(load("fuse_epilogues:\n  producers: [conv]\n  residual_adds: [add]\n", &spec)
            .rfind(file + ":6:3: unknown key 'residual_adds' in fuse_epilogues", 0) == 0);
  // The repo's vulkan backend opts in; its residual producers are conv/GEMM producers.
  const auto vk = Vulkan();
  CHECK(vk.fusion.residual == std::vector<std::string>{"add"});
  for (const auto& p : vk.fusion.residual_producers)
    CHECK(std::find(vk.fusion.producers.begin(), vk.fusion.producers.end(), p) !=
          vk.fusion.producers.end());
}

// ---- elementwise chains (backend.yaml fuse_elementwise) ----------------------------------------

namespace {

bool Planned(const Json& graph, const std::string& node) {
  return NodeOf(graph, node)["outputs"][0].contains("offset");
}

std::string Chain(const Json& graph, const std::string& node) {
  return ChainText(NodeOf(graph, node)["fused_chain"]);
}

}  // namespace

TEST_CASE("elementwise chain: gelu + bias * scale runs at its last node, never stored") {
  // The producer is no conv / GEMM (whose epilogue would take the gelu: fuse_epilogues).
  const auto g = Build({{"x", "input", {}, kS},
                        {"ln", "nn.layer_norm", {"x"}, kS},
                        {"gelu", "nn.gelu", {"ln"}, kS},
                        {"b", "constant", {}, {8, 1, 1}},
                        {"add", "add", {"gelu", "b"}, kS},
                        {"k", "constant", {}, {}},
                        {"mul", "multiply", {"add", "k"}, kS}},
                       {"mul"});
  const Json c = Context(g, Vulkan());
  CHECK(Chain(c, "mul") == "gelu(i0) add(s0,i1) mul(s1,i2) | ln:0 b:0 k:0");
  // Every member sees the same chain; the root computes it, the others were fused into it.
  CHECK(NodeOf(c, "gelu")["fused_chain"] == NodeOf(c, "mul")["fused_chain"]);
  CHECK(NodeOf(c, "add")["fused_chain"] == NodeOf(c, "mul")["fused_chain"]);
  CHECK(Into(c, "gelu") == "mul");
  CHECK(Into(c, "add") == "mul");
  CHECK(Into(c, "mul") == "");
  CHECK(Into(c, "ln") == "");
  CHECK(NodeOf(c, "ln")["fused_chain"].is_null());
  // The step objects carry what a template needs (typed attrs, identifiers) and the chain's
  // inputs are the tensor objects the members read.
  const Json& step = NodeOf(c, "mul")["fused_chain"]["steps"][0];
  CHECK(step["optype"] == "nn.gelu");
  CHECK(step["ident"] == NodeOf(c, "gelu")["ident"]);
  CHECK(NodeOf(c, "mul")["fused_chain"]["inputs"][1] == NodeOf(c, "add")["inputs"][1]);
  // The intermediates get no bytes; ln is read at mul's position, while mul is written.
  CHECK_FALSE(Planned(c, "gelu"));
  CHECK_FALSE(Planned(c, "add"));
  CHECK(Planned(c, "mul"));
  CHECK(Disjoint(c, "ln", "mul"));
  bool listed = false;
  for (const auto& t : c["memory"]["tensors"]) listed = listed || t["name"] == "gelu:0";
  CHECK_FALSE(listed);
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("elementwise chain: the inputs stay live until the chain runs") {
  // e1 = exp(p) is computed at e2's position: p must not be overwritten by q or r meanwhile.
  const auto g = Build({{"x", "input", {}, kS},
                        {"p", "nn.layer_norm", {"x"}, kS},
                        {"e1", "exp", {"p"}, kS},
                        {"q", "nn.conv2d", {"x"}, kS},
                        {"r", "nn.conv2d", {"q"}, kS},
                        {"e2", "subtract", {"e1", "r"}, kS}},
                       {"e2"});
  const Json c = Context(g, Vulkan());
  CHECK(Chain(c, "e2") == "e1(i0) e2(s0,i1) | p:0 r:0");
  CHECK(Into(c, "e1") == "e2");
  CHECK_FALSE(Planned(c, "e1"));
  CHECK(Disjoint(c, "p", "q"));
  CHECK(Disjoint(c, "p", "r"));
  CHECK(Disjoint(c, "p", "e2"));
  CHECK(Disjoint(c, "r", "e2"));
  CheckAnalyses(g, c, Vulkan());
}

TEST_CASE("elementwise chain: trees, operands read twice, where") {
  SUBCASE("a tree of four inputs") {
    const auto g = Build({{"a", "input", {}, kS},
                          {"b", "input", {}, kS},
                          {"c", "input", {}, kS},
                          {"d", "input", {}, kS},
                          {"m", "multiply", {"a", "b"}, kS},
                          {"s", "subtract", {"c", "d"}, kS},
                          {"t", "add", {"m", "s"}, kS}},
                         {"t"});
    const Json c = Context(g, Vulkan());
    CHECK(Chain(c, "t") == "m(i0,i1) s(i2,i3) t(s0,s1) | a:0 b:0 c:0 d:0");
    CheckAnalyses(g, c, Vulkan());
  }
  SUBCASE("x * x and an input shared by two members") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"e", "exp", {"x"}, kS},
                          {"sq", "multiply", {"e", "e"}, kS},
                          {"out", "add", {"sq", "x"}, kS}},
                         {"out"});
    const Json c = Context(g, Vulkan());
    CHECK(Chain(c, "out") == "e(i0) sq(s0,s0) out(s1,i0) | x:0");
    CheckAnalyses(g, c, Vulkan());
  }
  SUBCASE("where: a bool condition input, a float condition computed in the chain") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"m", "input", {}, kS, "bool"},
                          {"k", "constant", {}, {}},
                          {"v", "nn.relu", {"x"}, kS},
                          {"w", "where", {"m", "v", "k"}, kS},
                          {"sig", "sigmoid", {"w"}, kS},
                          {"w2", "where", {"sig", "x", "w"}, kS}},
                         {"w2"});
    const Json c = Context(g, Vulkan());
    // w is read twice (sig and w2): the chain of w2 takes it as an input.
    CHECK(Chain(c, "w") == "v(i0) w(i1,s0,i2) | x:0 m:0 k:0");
    CHECK(Chain(c, "w2") == "sig(i0) w2(s0,i1,i0) | w:0 x:0");
    CHECK(Planned(c, "w"));
    CheckAnalyses(g, c, Vulkan());
  }
}

TEST_CASE("elementwise chain: what does not join a chain") {
  const msc::emit::BackendSpec spec = Vulkan();
  SUBCASE("an intermediate read by two nodes") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"e", "exp", {"x"}, kS},
                          {"f", "add", {"e", "x"}, kS},
                          {"g", "multiply", {"e", "f"}, kS}},
                         {"g"});
    const Json c = Context(g, spec);
    CHECK(Into(c, "e") == "");
    CHECK(NodeOf(c, "e")["fused_chain"].is_null());
    CHECK(Chain(c, "g") == "f(i0,i1) g(i0,s0) | e:0 x:0");
    CHECK(Planned(c, "e"));
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("a graph output in the middle") {
    const auto g =
        Build({{"x", "input", {}, kS}, {"e", "exp", {"x"}, kS}, {"n", "negative", {"e"}, kS}},
              {"e", "n"});
    const Json c = Context(g, spec);
    CHECK(Chain(c, "n") == "");
    CHECK(Into(c, "e") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("an intermediate of another shape (it would be recomputed per output element)") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"v", "input", {}, {1, 8, 1, 1}},
                          {"s", "sigmoid", {"v"}, {1, 8, 1, 1}},
                          {"m", "multiply", {"x", "s"}, kS}},
                         {"m"});
    const Json c = Context(g, spec);
    CHECK(Chain(c, "m") == "");
    CHECK(Into(c, "s") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("other dtypes, ops outside the list, an alias consumer") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"h", "input", {}, kS, "float16"},
                          {"eh", "exp", {"h"}, kS, "float16"},
                          {"nh", "negative", {"eh"}, kS, "float16"},
                          {"i", "input", {}, kS, "int32"},
                          {"ai", "abs", {"i"}, kS, "int32"},
                          {"ni", "negative", {"ai"}, kS, "int32"},
                          {"gt", "greater", {"x", "x"}, kS, "bool"},
                          {"w", "where", {"gt", "x", "x"}, kS},
                          {"sm", "nn.softmax", {"w"}, kS},
                          {"e", "exp", {"sm"}, kS},
                          {"r", "reshape", {"e"}, {8, 36}},
                          {"n", "negative", {"r"}, {8, 36}}},
                         {"nh", "ni", "n"});
    const Json c = Context(g, spec);
    // float16 values chain (--precision fp16 activations: computed in float32, one rounding)
    CHECK(Chain(c, "nh") == "eh(i0) nh(s0) | h:0");
    CHECK(Into(c, "eh") == "nh");
    for (const char* n : {"ai", "ni", "gt", "w", "sm", "e", "r", "n"}) {
      CAPTURE(n);
      CHECK(Chain(c, n) == "");
      CHECK(Into(c, n) == "");
    }
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("nodes taken by epilogue / residual fusion") {
    const auto g = Build({{"x", "input", {}, kS},
                          {"conv", "nn.conv2d", {"x"}, kS},
                          {"relu", "nn.relu", {"conv"}, kS},
                          {"e", "exp", {"relu"}, kS},
                          {"n", "negative", {"e"}, kS},
                          {"conv2", "nn.conv2d", {"n"}, kS},
                          {"add", "add", {"conv2", "x"}, kS},
                          {"t", "tanh", {"add"}, kS}},
                         {"t"});
    const Json c = Context(g, spec);
    CHECK(Into(c, "relu") == "conv");
    CHECK(Chain(c, "n") == "e(i0) n(s0) | relu:0");
    CHECK(Into(c, "add") == "conv2");
    CHECK(Chain(c, "t") == "");
    CheckAnalyses(g, c, spec);
  }
  SUBCASE("backends without fuse_elementwise chain nothing") {
    const auto g = Build(
        {{"x", "input", {}, kS}, {"e", "exp", {"x"}, kS}, {"n", "negative", {"e"}, kS}}, {"n"});
    int checked = 0;
    for (const std::string& backend : msc::emit::ListBackends(kTemplates)) {
      const auto spec = msc::emit::LoadBackendSpec(kTemplates, backend, Opdefs());
      if (!spec.fusion.elementwise_ops.empty()) continue;
      ++checked;
      const Json c = Context(g, spec);
      CHECK(Chain(c, "n") == "");
      CHECK(Into(c, "e") == "");
    }
    CHECK(checked > 0);
  }
}

TEST_CASE("elementwise chain: max_ops and max_inputs") {
  SUBCASE("ten unary ops: the last eight, then the first two") {
    std::vector<N> nodes = {{"x", "input", {}, kS}};
    for (int i = 1; i <= 10; ++i)
      nodes.push_back({"u" + std::to_string(i),
                       i % 2 ? "exp" : "negative",
                       {i == 1 ? "x" : "u" + std::to_string(i - 1)},
                       kS});
    const auto g10 = Build(nodes, {"u10"});
    const Json c = Context(g10, Vulkan());
    CHECK(Chain(c, "u10") == "u3(i0) u4(s0) u5(s1) u6(s2) u7(s3) u8(s4) u9(s5) u10(s6) | u2:0");
    CHECK(Chain(c, "u2") == "u1(i0) u2(s0) | x:0");
    CHECK(Planned(c, "u2"));
    CheckAnalyses(g10, c, Vulkan());
    msc::emit::BackendSpec three = Vulkan();
    three.fusion.max_ops = 3;
    const Json c3 = Context(g10, three);
    CHECK(Chain(c3, "u10") == "u8(i0) u9(s0) u10(s1) | u7:0");
    CHECK(Chain(c3, "u7") == "u5(i0) u6(s0) u7(s1) | u4:0");
    CHECK(Chain(c3, "u4") == "u2(i0) u3(s0) u4(s1) | u1:0");
    CHECK(Chain(c3, "u1") == "");  // alone: no chain
    CheckAnalyses(g10, c3, three);
  }
  SUBCASE("a + b + c + d + e: at most four inputs") {
    const auto g = Build({{"a", "input", {}, kS},
                          {"b", "input", {}, kS},
                          {"c", "input", {}, kS},
                          {"d", "input", {}, kS},
                          {"e", "input", {}, kS},
                          {"s1", "add", {"a", "b"}, kS},
                          {"s2", "add", {"s1", "c"}, kS},
                          {"s3", "add", {"s2", "d"}, kS},
                          {"s4", "add", {"s3", "e"}, kS}},
                         {"s4"});
    const Json c = Context(g, Vulkan());
    CHECK(Chain(c, "s4") == "s2(i0,i1) s3(s0,i2) s4(s1,i3) | s1:0 c:0 d:0 e:0");
    CHECK(Into(c, "s1") == "");
    CHECK(Planned(c, "s1"));
    CheckAnalyses(g, c, Vulkan());
  }
}

TEST_CASE("backend.yaml fuse_elementwise: keys, limits and errors") {
  const SpecFile spec_file;
  const std::string file = spec_file.Path();
  auto load = [&](const std::string& fuse, msc::emit::BackendSpec* spec) {
    return spec_file.Load(fuse, spec);
  };
  msc::emit::BackendSpec spec;
  CHECK(load("fuse_elementwise:\n  ops: [add, exp]\n  selects: [where]\n  max_ops: 6\n"
             "  max_inputs: 3\n",
             &spec) == "");
  CHECK(spec.fusion.elementwise_ops == std::vector<std::string>{"add", "exp"});
  CHECK(spec.fusion.elementwise_selects == std::vector<std::string>{"where"});
  CHECK(spec.fusion.max_ops == 6);
  CHECK(spec.fusion.max_inputs == 3);
  CHECK(load("fuse_elementwise:\n  ops: [add]\n  max_ops: 4\n", &spec) ==
        file + ":5:3: fuse_elementwise needs max_ops and max_inputs (the backend kernel's limits)");
  CHECK(load("fuse_elementwise:\n  ops: [add]\n  max_ops: 1\n  max_inputs: 2\n", &spec) ==
        file + ":6:12: fuse_elementwise.max_ops must be at least 2");
  CHECK(load("fuse_elementwise:\n  ops: [add]\n  max_ops: 2\n  max_inputs: 0\n", &spec) ==
        file + ":7:15: fuse_elementwise.max_inputs must be at least 1");
  CHECK(load("fuse_elementwise:\n  ops: [add]\n  max_ops: many\n  max_inputs: 2\n", &spec) ==
        file + ":6:12: fuse_elementwise.max_ops must be an integer");
  CHECK(load("fuse_elementwise:\n  ops: add\n  max_ops: 2\n  max_inputs: 2\n", &spec)
            .rfind(file + ":5:8: ", 0) == 0);
  CHECK(load("fuse_elementwise:\n  ops: [add]\n  max_steps: 2\n", &spec)
            .rfind(file + ":6:3: unknown key 'max_steps' in fuse_elementwise", 0) == 0);
  // The repo's vulkan backend opts in within the kernel's limits (ops::kChainMaxSteps / Inputs).
  const auto vk = Vulkan();
  CHECK(vk.fusion.max_ops == 8);
  CHECK(vk.fusion.max_inputs == 4);
  CHECK(vk.fusion.elementwise_selects == std::vector<std::string>{"where"});
}
