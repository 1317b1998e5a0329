// The fast paths of generation (issue 9 item 5) give exactly what the general paths give: the
// graph reader (its error paths and node-count limit), the native template context (shared
// tensor objects, node.code), coalesced weight copies and the project writer's file copies.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <sys/stat.h>

#include <boost/filesystem.hpp>

#include "generator/common/error.h"
#include "generator/emit/backend_spec.h"
#include "generator/emit/context.h"
#include "generator/emit/writer.h"
#include "generator/ir/graph.h"
#include "generator/opdef/opdef.h"
#include "generator/weights/weights.h"

namespace fs = boost::filesystem;

namespace {

// Two nodes; attrs and weights in a non-sorted order, a repeated key, a prim, unicode.
const char* kGraph = R"({
 "name": "main",
 "inputs": ["x:0"],
 "outputs": ["conv:0"],
 "nodes": [
  {"index": 0, "name": "x", "shared_ref": "", "optype": "input", "parents": [], "inputs": [],
   "outputs": [{"name": "x:0", "alias": "x", "dtype": "float32", "layout": "NCHW",
                "shape": [1, 3, 4, 4], "prims": []}], "attrs": {}, "weights": {}},
  {"index": 1, "name": "conv", "shared_ref": "", "optype": "nn.conv2d", "parents": ["x"],
   "inputs": ["x:0"],
   "outputs": [{"name": "conv:0", "alias": "卷积", "dtype": "float32", "layout": "NCHW",
                "shape": [1, 2, 4, 4], "prims": []}],
   "attrs": {"strides": "1,1", "padding": "0,0,0,0", "strides": "1,1", "dilation": "1,1",
             "groups": "1", "data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW",
             "out_dtype": "float32"},
   "weights": {"weight": {"name": "const", "alias": "conv.weight", "dtype": "float32",
                          "layout": "OIHW", "shape": [2, 3, 1, 1], "prims": []}}}
 ],
 "prims": [{"index": 0, "name": "N", "optype": "Int", "parents": [], "attrs": {"value": "1"}}]
})";

std::string MscError(const std::function<void()>& f) {
  try {
    f();
  } catch (const msc::Error& e) {
    return e.what();
  }
  FAIL("expected msc::Error");
  return "";
}

}  // namespace

TEST_CASE("graph reader: a repeated attr key, extra keys and non-ASCII aliases") {
  const msc::ir::MSCGraph g = msc::ir::ParseGraph(kGraph, "g.json");
  CHECK(g.nodes[1].attrs.size() == 8);  // the repeated key: first position, last value
  CHECK(g.nodes[1].attrs[0].first == "strides");
  CHECK(g.nodes[1].attrs[1].first == "padding");
  CHECK(g.nodes[1].outputs[0].alias == "卷积");
  CHECK(g.FindNode("conv") == &g.nodes[1]);
  CHECK(g.source == "g.json");
  // A key MSC did not define is kept (and written back).
  std::string text = kGraph;
  text.insert(text.rfind('}'), ", \"zz_extra\": [1, 2]");
  msc::ir::MSCGraph extra = msc::ir::ParseGraph(text, "g.json");
  CHECK(extra.extra.dump() == R"({"zz_extra":[1,2]})");
  extra.extra = msc::ir::Json::object();
  CHECK(msc::ir::SaveGraphString(g) == msc::ir::SaveGraphString(extra));
}

TEST_CASE("graph reader: schema errors name the full path, as before") {
  std::string text = kGraph;
  text.replace(text.find("[1, 2, 4, 4]"), 12, "[1, \"a\", 4, 4]");
  CHECK(MscError([&] { msc::ir::ParseGraph(text, "g.json"); }) ==
        "g.json: nodes[1].outputs[0].shape[1] (node 'conv'): expected an integer, got string "
        "\"a\"");
  text = kGraph;
  text.replace(text.find("\"groups\": \"1\""), 13, "\"groups\": 1");
  CHECK(MscError([&] { msc::ir::ParseGraph(text, "g.json"); }) ==
        "g.json: nodes[1].attrs.groups (node 'conv'): expected a string, got number 1");
  text = kGraph;
  text.replace(text.find("\"name\": \"main\""), 14, "\"name\": 7");
  CHECK(MscError([&] { msc::ir::ParseGraph(text, "g.json"); }) ==
        "g.json: name: expected a string, got number 7");
}

TEST_CASE("graph reader: the node limit counts nodes, not braces in strings or escaped keys") {
  CHECK_NOTHROW(msc::ir::ParseGraph(kGraph, "g.json", 2));
  const std::string over = "g.json: nodes[1]: " + msc::ir::TooManyNodesMessage(1);
  CHECK(MscError([] { msc::ir::ParseGraph(kGraph, "g.json", 1); }) == over);
  // "{" inside strings is no node; a key spelled with an escape is still "nodes".
  std::string text = kGraph;
  text.replace(text.find("\"name\": \"main\""), 14, "\"name\": \"{{{\\\"{\"");
  CHECK_NOTHROW(msc::ir::ParseGraph(text, "g.json", 2));
  text = kGraph;
  text.replace(text.find("\"nodes\""), 7, "\"n\\u006fdes\"");
  CHECK(MscError([&] { msc::ir::ParseGraph(text, "g.json", 1); }) == over);
}

TEST_CASE("native context: tensors are shared objects, node.code fills section by section") {
  const msc::ir::MSCGraph g = msc::ir::ParseGraph(kGraph, "g.json");
  auto opdefs = msc::opdef::OpDefRegistry::LoadDir(std::string(MSC_SOURCE_DIR) + "/opdefs");
  auto spec =
      msc::emit::LoadBackendSpec(std::string(MSC_SOURCE_DIR) + "/templates", "vulkan", opdefs);
  std::vector<msc::passes::Folded> folded = {{"fold_batch_norm", "bn", "conv"}};
  const msc::analyses::GraphAnalyses analyses(g, opdefs, spec.fusion, spec.memory);
  msc::emit::Context ctx(g, opdefs, spec, analyses, &folded);
  REQUIRE(ctx.num_nodes() == 2);
  using msc::tmpl::Value;
  auto get = [](const Value& v, const char* key) {
    Value out;
    REQUIRE(v.Get(std::string(key), &out));
    return out;
  };
  const Value x = ctx.Node(0), conv = ctx.Node(1), graph = ctx.Graph();
  const Value produced = get(x, "outputs").at(0), read = get(conv, "inputs").at(0);
  CHECK(produced.identity() == read.identity());  // one object, not a copy per reader
  CHECK(get(graph, "inputs").at(0).identity() == produced.identity());
  CHECK(get(produced, "offset").i() == get(read, "offset").i());
  CHECK(msc::tmpl::Repr(get(conv, "folded")) == "['bn']");
  CHECK(msc::tmpl::Repr(get(x, "folded")) == "[]");
  CHECK(msc::tmpl::Repr(get(get(conv, "attrs"), "strides")) == "[1, 1]");
  CHECK(msc::tmpl::Repr(get(conv, "code")) == "{}");
  ctx.SetCode(1, "run", "a");
  ctx.SetCode(1, "other", "b");
  ctx.SetCode(1, "run", "c");  // replaced in place
  CHECK(msc::tmpl::Repr(get(ctx.Node(1), "code")) == "{'run': 'c', 'other': 'b'}");
  CHECK(msc::tmpl::Repr(get(x, "code")) == "{}");  // objects handed out before stay as they were
  // BuildContext (tools, tests) is the same document as JSON.
  const msc::emit::Json j = msc::emit::BuildContext(g, opdefs, spec);
  CHECK(j["graph"]["nodes"][1]["inputs"][0] == j["graph"]["nodes"][0]["outputs"][0]);
  CHECK(j["graph"]["nodes"][1]["weights"]["weight"]["key"] == "const");
  CHECK(j["graph"]["memory"]["tensors"].size() == 2);
  CHECK_FALSE(j["graph"]["nodes"][1].contains("folded"));
}

TEST_CASE("weights: views copied as runs give the bytes of a fresh write") {
  const fs::path dir = fs::temp_directory_path() / fs::unique_path("msc-st-%%%%%%");
  fs::create_directories(dir);
  msc::weights::TensorMap owned;
  for (const char* name : {"a", "b", "c", "d"}) {
    std::vector<uint8_t> bytes(4 * 3);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(name[0] + i);
    owned[name] = {"float32", {3}, bytes};
  }
  owned["i"] = {"int64", {1}, std::vector<uint8_t>(8, 7)};  // another dtype: first in the file
  auto read_file = [](const fs::path& p) {
    std::ifstream in(p.string(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  msc::weights::WriteSafetensors((dir / "in.st").string(), owned);
  msc::weights::TensorMap views = msc::weights::ReadSafetensors((dir / "in.st").string());
  msc::weights::WriteSafetensors((dir / "same.st").string(), views);  // one run
  CHECK(read_file(dir / "same.st") == read_file(dir / "in.st"));
  views.erase("b");  // runs: i + a, then c + d
  owned.erase("b");
  msc::weights::WriteSafetensors((dir / "gap.st").string(), views);
  msc::weights::WriteSafetensors((dir / "gap_owned.st").string(), owned);
  CHECK(read_file(dir / "gap.st") == read_file(dir / "gap_owned.st"));
  views["d"].data.vec()[0] = 99;  // owned now: c alone, then d from memory
  owned["d"].data.vec()[0] = 99;
  msc::weights::WriteSafetensors((dir / "mixed.st").string(), views);
  msc::weights::WriteSafetensors((dir / "mixed_owned.st").string(), owned);
  CHECK(read_file(dir / "mixed.st") == read_file(dir / "mixed_owned.st"));
  fs::remove_all(dir);
}

TEST_CASE("writer: copied files keep their bytes and permission bits") {
  const fs::path dir = fs::temp_directory_path() / fs::unique_path("msc-copy-%%%%%%");
  fs::create_directories(dir / "src");
  const std::string big(300000, 'x');  // more than one copy_file_range chunk of small sizes
  { std::ofstream(dir / "src" / "tool.sh") << "#!/bin/sh\necho hi\n"; }
  { std::ofstream(dir / "src" / "big.bin", std::ios::binary) << big; }
  ::chmod((dir / "src" / "tool.sh").c_str(), 0750);
  msc::emit::OutputTree tree;
  tree.AddCopy("rt/tool.sh", (dir / "src" / "tool.sh").string());
  tree.AddCopy("rt/big.bin", (dir / "src" / "big.bin").string());
  tree.Commit((dir / "out").string(), false);
  struct stat st {};
  REQUIRE(::stat((dir / "out" / "rt" / "tool.sh").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0750);
  std::ifstream in((dir / "out" / "rt" / "big.bin").string(), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == big);
  msc::emit::OutputTree missing;
  missing.AddCopy("gone.txt", (dir / "src" / "nope.txt").string());
  CHECK(MscError([&] { missing.Commit((dir / "out2").string(), false); }).find("nope.txt") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out2"));
  fs::remove_all(dir);
}
