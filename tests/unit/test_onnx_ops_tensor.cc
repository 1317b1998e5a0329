// Unit tests of the ONNX shape / index / reduction converters (generator/frontend/onnx/
// ops_tensor.cc, ops_reduce.cc): the MSC nodes, attrs and shapes one ONNX node becomes, and the
// reasons unsupported inputs are rejected with. Numbers are checked end to end by
// tests/onnx/conformance.py on ONNX's backend tests.
#include <doctest/doctest.h>

#include <string>

#include <onnx/onnx_pb.h>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "onnx_test_model.h"

namespace ox = msc::frontend::onnx_import;
using namespace msc_test;  // NOLINT(build/namespaces): the shared ONNX test scaffolding

TEST_CASE("onnx tensor ops: Split with sizes -> split at the split points + get_item per output") {
  OnnxModel m;
  m.Input("x", {2, 6});
  m.Ints("sizes", {1, 3, 2});
  IntAttr(m.Node("Split", {"x", "sizes"}, {"a", "b", "c"}), "axis", -1);
  m.Output("a", {2, 1});
  m.Output("b", {2, 3});
  m.Output("c", {2, 2});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "split", "get_item", "get_item", "get_item"});
  CHECK(Attr(g.nodes[1], "indices_or_sections") == "1,4");
  CHECK(Attr(g.nodes[1], "axis") == "1");
  CHECK(g.nodes[1].outputs[2].shape == Dims{2, 2});
  CHECK(g.nodes[3].name == "split.1");
  CHECK(Attr(g.nodes[3], "index") == "1");
  CHECK(g.nodes[3].inputs == Strs{"split:0", "split:1", "split:2"});
  CHECK(g.nodes[3].outputs[0].alias == "b");
  CHECK(g.nodes[3].outputs[0].shape == Dims{2, 3});

  OnnxModel eq(11);
  eq.Input("x", {6});
  eq.Node("Split", {"x"}, {"a", "b", "c"});
  for (auto o : {"a", "b", "c"}) eq.Output(o, {2});
  auto ge = ox::ImportOnnx(eq.Save()).graph;
  CHECK(Attr(ge.nodes[1], "indices_or_sections") == "3");  // a section count: no comma
}

TEST_CASE("onnx tensor ops: Slice clamps bounds; a negative step is a positive one plus flip") {
  OnnxModel m;
  m.Input("x", {5, 7});
  m.Ints("starts", {-1, 1});
  m.Ints("ends", {-100, 1000});
  m.Ints("axes", {0, -1});
  m.Ints("steps", {-2, 3});
  m.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  m.Output("y", {3, 2});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "strided_slice", "flip"});
  // rows 4, 2, 0 (taken as 0:5:2, then flipped); columns 1, 4 (1:5:3)
  CHECK(Attr(g.nodes[1], "axes") == "0,1");
  CHECK(Attr(g.nodes[1], "begin") == "0,1");
  CHECK(Attr(g.nodes[1], "end") == "5,5");
  CHECK(Attr(g.nodes[1], "strides") == "2,3");
  CHECK(Attr(g.nodes[2], "axis") == "0");
  CHECK(g.nodes[2].outputs[0].shape == Dims{3, 2});
  CHECK(g.nodes[2].outputs[0].alias == "y");
}

TEST_CASE("onnx tensor ops: Reshape resolves 0 and -1; run-time shapes are rejected") {
  OnnxModel m;
  m.Input("x", {2, 3, 4});
  m.Ints("shape", {0, -1});
  m.Node("Reshape", {"x", "shape"}, {"y"});
  m.Output("y", {2, 12});
  auto g = ox::ImportOnnx(m.Save()).graph;
  CHECK(Attr(g.nodes[1], "shape") == "2,12");

  OnnxModel dyn;
  dyn.Input("x", {2, 3, 4});
  dyn.Input("shape", {2}, onnx::TensorProto::INT64);
  dyn.Node("Reshape", {"x", "shape"}, {"y"});
  dyn.Output("y", {2, 12});
  std::string err = ImportError(dyn.Save());
  INFO(err);
  CHECK(err.find("node 'y' (Reshape): the target shape (input 1 ('shape')) must be a constant") !=
        std::string::npos);
}

TEST_CASE("onnx tensor ops: Unsqueeze sorts axes against the output rank; Squeeze checks sizes") {
  OnnxModel m;
  m.Input("x", {3, 4});
  m.Ints("axes", {-1, 0});
  m.Node("Unsqueeze", {"x", "axes"}, {"y"});
  m.Output("y", {1, 3, 4, 1});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "expand_dims"});
  CHECK(Attr(g.nodes[1], "axis") == "0,3");
  CHECK(g.nodes[1].outputs[0].shape == Dims{1, 3, 4, 1});

  OnnxModel bad(11);
  bad.Input("x", {3, 4});
  IntsAttr(bad.Node("Squeeze", {"x"}, {"y"}), "axes", {1});
  bad.Output("y", {3});
  std::string err = ImportError(bad.Save());
  INFO(err);
  CHECK(err.find("axis 1 has size 4, not 1") != std::string::npos);
}

TEST_CASE("onnx tensor ops: TopK -> topk (int64 indices) + get_items; K must be a constant") {
  OnnxModel m;
  m.Input("x", {3, 5});
  m.Ints("k", {2});
  auto* n = m.Node("TopK", {"x", "k"}, {"v", "i"});
  IntAttr(n, "largest", 0);
  m.Output("v", {3, 2});
  m.Output("i", {3, 2}, onnx::TensorProto::INT64);
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "topk", "get_item", "get_item"});
  CHECK(Attr(g.nodes[1], "k") == "2");
  CHECK(Attr(g.nodes[1], "largest") == "0");
  CHECK(Attr(g.nodes[1], "dtype") == "int64");
  CHECK(g.nodes[3].outputs[0].dtype == "int64");
  CHECK(g.nodes[3].outputs[0].shape == Dims{3, 2});

  OnnxModel dyn;
  dyn.Input("x", {3, 5});
  dyn.Input("k", {1}, onnx::TensorProto::INT64);
  dyn.Node("TopK", {"x", "k"}, {"v", "i"});
  dyn.Output("v", {3, 2});
  dyn.Output("i", {3, 2}, onnx::TensorProto::INT64);
  CHECK(ImportError(dyn.Save()).find("K (input 1 ('k')) must be a constant") != std::string::npos);
}

TEST_CASE("onnx tensor ops: CumSum reverse is flip, cumsum, flip; exclusive is cumsum's attr") {
  OnnxModel m;
  m.Input("x", {2, 4});
  m.Scalar("axis", -1);
  auto* n = m.Node("CumSum", {"x", "axis"}, {"y"});
  IntAttr(n, "reverse", 1);
  IntAttr(n, "exclusive", 1);
  m.Output("y", {2, 4});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "flip", "cumsum", "flip"});
  CHECK(Attr(g.nodes[1], "axis") == "1");
  CHECK(Attr(g.nodes[2], "exclusive") == "1");
  CHECK(Attr(g.nodes[2], "axis") == "1");
}

TEST_CASE("onnx tensor ops: OneHot maps negative run-time indices into [0, depth)") {
  OnnxModel m(11);
  m.Input("i", {3}, onnx::TensorProto::INT64);
  m.Scalar("depth", 4);
  m.Floats("values", {2}, {0.5, 2.0});
  m.Node("OneHot", {"i", "depth", "values"}, {"y"});
  m.Output("y", {3, 4});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(g.nodes.back().optype == "one_hot");
  CHECK(g.nodes[g.nodes.size() - 2].optype == "where");
  CHECK(Attr(g.nodes.back(), "depth") == "4");
  CHECK(Attr(g.nodes.back(), "on_value") == "2.000000");
  CHECK(Attr(g.nodes.back(), "off_value") == "0.500000");
  CHECK(g.nodes.back().outputs[0].shape == Dims{3, 4});
}

TEST_CASE("onnx tensor ops: data-dependent output shapes fail with the reason") {
  OnnxModel nz;
  nz.Input("x", {2, 2});
  nz.Node("NonZero", {"x"}, {"y"});
  nz.Output("y", {2, 4}, onnx::TensorProto::INT64);
  std::string err = ImportError(nz.Save());
  INFO(err);
  CHECK(err.find("node 'y' (NonZero): the number of non-zero elements") != std::string::npos);

  OnnxModel cp(11);
  cp.Input("x", {3, 2});
  cp.Input("c", {3}, onnx::TensorProto::BOOL);
  IntAttr(cp.Node("Compress", {"x", "c"}, {"y"}), "axis", 0);
  cp.Output("y", {2, 2});
  err = ImportError(cp.Save());
  INFO(err);
  CHECK(err.find("the condition (input 1 ('c')) must be a constant") != std::string::npos);
}

TEST_CASE("onnx tensor ops: Compress with a constant condition is take of constant indices") {
  OnnxModel m(11);
  m.Input("x", {3, 2});
  m.Init("c", ox::MakeIntTensor("bool", {3}, {1, 0, 1}));
  IntAttr(m.Node("Compress", {"x", "c"}, {"y"}), "axis", 0);
  m.Output("y", {2, 2});
  auto r = ox::ImportOnnx(m.Save());
  REQUIRE(Optypes(r.graph) == Strs{"input", "constant", "take"});
  CHECK(Attr(r.graph.nodes[2], "axis") == "0");
  CHECK(r.graph.nodes[2].outputs[0].shape == Dims{2, 2});
  CHECK(*ox::TensorInts(r.weights.at("const")) == Dims{0, 2});
}

TEST_CASE("onnx reduce ops: axes, keepdims, noop_with_empty_axes and composed reductions") {
  OnnxModel m;
  m.Input("x", {2, 3, 4});
  m.Ints("axes", {-1});
  IntAttr(m.Node("ReduceSum", {"x", "axes"}, {"s"}), "keepdims", 0);
  IntAttr(m.Node("ReduceSum", {"x"}, {"noop"}), "noop_with_empty_axes", 1);
  auto* l2 = m.Node("ReduceL2", {"x"}, {"l2"});
  IntsAttr(l2, "axes", {0, 2});
  auto* lse = m.Node("ReduceLogSumExp", {"x"}, {"lse"});
  IntsAttr(lse, "axes", {1});
  IntAttr(lse, "keepdims", 0);
  m.Output("s", {2, 3});
  m.Output("noop", {2, 3, 4});
  m.Output("l2", {1, 3, 1});
  m.Output("lse", {2, 4});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "sum", "multiply", "sum", "sqrt", "max", "subtract", "exp",
                             "sum", "log", "add", "squeeze"});
  CHECK(Attr(g.nodes[1], "axis") == "-1,");
  CHECK(Attr(g.nodes[1], "keepdims") == "0");
  CHECK(g.nodes[1].outputs[0].shape == Dims{2, 3});
  CHECK(g.outputs[1] == "x:0");  // noop: the input itself
  CHECK(Attr(g.nodes[3], "axis") == "0,2");
  CHECK(Attr(g.nodes[3], "keepdims") == "1");
  CHECK(g.nodes[4].outputs[0].shape == Dims{1, 3, 1});
  CHECK(Attr(g.nodes[5], "keepdims") == "1");
  CHECK(Attr(g.nodes[11], "axis") == "1,");
  CHECK(g.nodes[11].outputs[0].shape == Dims{2, 4});
}

TEST_CASE("onnx reduce ops: ArgMax select_last_index = (n - 1) - argmax(flip(x))") {
  OnnxModel m;
  m.Input("x", {2, 5});
  auto* n = m.Node("ArgMax", {"x"}, {"y"});
  IntAttr(n, "axis", -1);
  IntAttr(n, "select_last_index", 1);
  m.Output("y", {2, 1}, onnx::TensorProto::INT64);
  auto r = ox::ImportOnnx(m.Save());
  const auto& g = r.graph;
  REQUIRE(Optypes(g) == Strs{"input", "flip", "argmax", "constant", "subtract"});
  CHECK(Attr(g.nodes[1], "axis") == "1");
  CHECK(Attr(g.nodes[2], "keepdims") == "1");
  CHECK(Attr(g.nodes[3], "scalar") == "4");
  CHECK(g.nodes[4].inputs == Strs{"const:0", "argmax:0"});
  CHECK(g.nodes[4].outputs[0].dtype == "int64");
  CHECK(g.nodes[4].outputs[0].shape == Dims{2, 1});
}

TEST_CASE("onnx tensor ops: Shape/Size of a constant the folder leaves (float16) are constants") {
  OnnxModel m;
  m.Input("x", {12});
  auto* w = m.g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT16);
  w->add_dims(3);
  w->add_dims(4);
  w->set_raw_data(std::string(3 * 4 * 2, '\0'));
  m.Node("Shape", {"w"}, {"s"});
  m.Node("Reshape", {"x", "s"}, {"y"});
  m.Node("Size", {"w"}, {"n"});
  m.Output("y", {3, 4});
  m.Output("n", {}, onnx::TensorProto::INT64);
  auto r = ox::ImportOnnx(m.Save());
  REQUIRE(Optypes(r.graph) == Strs{"input", "reshape", "constant"});
  CHECK(Attr(r.graph.nodes[1], "shape") == "3,4");
  CHECK(Attr(r.graph.nodes[2], "scalar") == "12");
}
