// Unit tests for the ONNX frontend (generator/frontend/onnx): models are built in memory with
// ONNX's own protobuf classes (tests/unit/onnx_test_model.h), written to a temporary file and
// imported.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <onnx/onnx_pb.h>

#include "generator/common/error.h"
#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/frontend/onnx/tensor_proto.h"
#include "generator/ir/attr_format.h"
#include "onnx_test_model.h"

namespace ox = msc::frontend::onnx_import;
using namespace msc_test;  // NOLINT(build/namespaces): the shared ONNX test scaffolding

TEST_CASE("onnx: elementwise graph gets MSC names, aliases and a scalar constant node") {
  OnnxModel m;
  m.Input("x", {2, 3});
  m.Floats("two", {}, {2.0});
  m.Node("Mul", {"x", "two"}, {"y"});
  m.Node("Relu", {"y"}, {"z"});
  m.Node("Relu", {"z"}, {"out"});
  m.Output("out", {2, 3});
  auto r = ox::ImportOnnx(m.Save());
  const auto& g = r.graph;
  REQUIRE(g.nodes.size() == 5);
  CHECK(g.nodes[0].name == "x");
  CHECK(g.nodes[0].optype == "input");
  CHECK(g.nodes[0].outputs[0].alias == "x");
  // the initializer used as a plain operand: a `constant` node named like its weight
  CHECK(g.nodes[1].optype == "constant");
  CHECK(g.nodes[1].name == "const");
  CHECK(*g.nodes[1].FindAttr("scalar") == "2.000000");
  CHECK(g.nodes[1].weights.at(0).second.name == "const");
  CHECK(g.nodes[1].weights.at(0).second.alias == "two");
  CHECK(g.nodes[2].name == "multiply");
  CHECK(g.nodes[2].inputs == std::vector<std::string>{"x:0", "const:0"});
  CHECK(g.nodes[2].outputs[0].alias == "y");
  CHECK(g.nodes[3].name == "relu");
  CHECK(g.nodes[4].name == "relu_1");
  CHECK(g.outputs == std::vector<std::string>{"relu_1:0"});
  CHECK(g.nodes[4].outputs[0].shape == std::vector<int64_t>{2, 3});
  CHECK(r.weights.count("const") == 1);
}

TEST_CASE("onnx: Shape -> Gather -> Concat -> Reshape is folded at import") {
  OnnxModel m;
  m.Input("x", {2, 3, 4});
  m.Node("Shape", {"x"}, {"s"});
  m.Init("i0", ox::MakeIntTensor("int64", {1}, {0}));
  m.Node("Gather", {"s", "i0"}, {"n"});
  m.Init("minus1", ox::MakeIntTensor("int64", {1}, {-1}));
  m.Node("Concat", {"n", "minus1"}, {"shape"});
  IntAttr(m.g->mutable_node(2), "axis", 0);
  m.Node("Sigmoid", {"x"}, {"sx"});
  m.Node("Reshape", {"sx", "shape"}, {"y"});
  m.Output("y", {2, 12});
  // only the run-time ops remain: the shape [2, -1] is folded into reshape's attr
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[1].optype == "sigmoid");
  CHECK(g.nodes[2].optype == "reshape");
  CHECK(*g.nodes[2].FindAttr("shape") == "2,12");
  CHECK(g.nodes[2].outputs[0].shape == std::vector<int64_t>{2, 12});
  CHECK(g.nodes[2].outputs[0].alias == "y");
}

TEST_CASE("onnx: a zero stride is a clear error, not a crash in ONNX's shape inference") {
  OnnxModel m(11);
  m.Input("x", {1, 1, 4, 4});
  m.Node("MaxPool", {"x"}, {"y"});
  IntsAttr(m.g->mutable_node(0), "kernel_shape", {2, 2});
  IntsAttr(m.g->mutable_node(0), "strides", {0, 1});
  m.Output("y", {1, 1, 3, 3});
  CHECK(ImportError(m.Save()).find("node 'y' (MaxPool): strides must be >= 1, got 0") !=
        std::string::npos);
}

TEST_CASE("onnx: every unsupported op type is listed with its nodes and the opset") {
  OnnxModel m(11);
  m.Input("x", {4});
  m.Node("Foo", {"x"}, {"a"}, "foo_1");
  m.Node("Foo", {"a"}, {"b"}, "foo_2");
  m.Node("Bar", {"b"}, {"c"}, "bar");
  m.Output("c", {4});
  // ONNX's checker rejects unknown ops first: make them a custom domain so the checker passes.
  for (auto& n : *m.g->mutable_node()) n.set_domain("my.domain");
  auto* imp = m.model.add_opset_import();
  imp->set_domain("my.domain");
  imp->set_version(1);
  std::string err = ImportError(m.Save());
  INFO(err);
  CHECK(err.find("2 unsupported ONNX op types (opset 11)") != std::string::npos);
  CHECK(err.find("my.domain::Foo: nodes 'foo_1', 'foo_2'") != std::string::npos);
  CHECK(err.find("my.domain::Bar: node 'bar'") != std::string::npos);
}

TEST_CASE("onnx: bad input gets a clear error naming the file") {
  OnnxModel m;
  std::string path = (m.dir / "junk.onnx").string();
  std::ofstream(path) << "this is not protobuf \xff\xff\xff";
  CHECK(ImportError(path).find(path + ": not an ONNX model") == 0);
  CHECK(ImportError((m.dir / "missing.onnx").string()).find("cannot open") != std::string::npos);
  CHECK_FALSE(ox::IsOnnxFile(path));
  std::string json = (m.dir / "g.json").string();
  std::ofstream(json) << "  {\"name\": \"x\"}";
  CHECK_FALSE(ox::IsOnnxFile(json));

  OnnxModel bad_opset(29);  // beyond ONNX 1.23.2 (28) and Debian's 1.12 (17)
  bad_opset.Input("x", {1});
  bad_opset.Node("Relu", {"x"}, {"y"});
  bad_opset.Output("y", {1});
  CHECK(ImportError(bad_opset.Save()).find("opset 29 is not supported") != std::string::npos);
}

TEST_CASE("onnx: --input-shape fixes symbolic dims; unknown names are rejected") {
  OnnxModel m;
  m.Input("x", {-1, 3}, "batch");
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", {-1, 3}, "batch");
  const std::string path = m.Save();
  CHECK(ox::IsOnnxFile(path));
  // symbolic: a `shape` prim named after the dim_param, -1 in the shape
  auto dyn = ox::ImportOnnx(path);
  REQUIRE(dyn.graph.prims.size() == 1);
  CHECK(dyn.graph.prims[0].name == "batch");
  CHECK(dyn.graph.prims[0].optype == "shape");
  CHECK(dyn.graph.nodes[1].outputs[0].shape == std::vector<int64_t>{-1, 3});
  CHECK(dyn.graph.nodes[1].outputs[0].prims == std::vector<std::string>{"batch", "3"});
  ox::ImportOptions o;
  o.input_shapes["x"] = {5, 3};
  auto fixed = ox::ImportOnnx(path, o);
  CHECK(fixed.graph.prims.empty());
  CHECK(fixed.graph.nodes[1].outputs[0].shape == std::vector<int64_t>{5, 3});
  ox::ImportOptions wrong;
  wrong.input_shapes["nope"] = {1};
  CHECK(ImportError(path, wrong)
            .find("--input-shape names 'nope', which is not a graph input "
                  "(inputs: 'x')") != std::string::npos);
}

TEST_CASE("onnx: TensorProto typed fields and raw data decode to the same tensor") {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::INT64);
  p.add_dims(3);
  for (int64_t v : {1, -2, 3}) p.add_int64_data(v);
  auto typed = ox::TensorFromProto(p, ".", "t");
  auto raw =
      ox::TensorFromProto(ox::TensorToProto(ox::MakeIntTensor("int64", {3}, {1, -2, 3})), ".", "t");
  CHECK(typed == raw);
  onnx::TensorProto bad;
  bad.set_data_type(onnx::TensorProto::FLOAT);
  bad.add_dims(4);
  bad.add_float_data(1.0f);
  CHECK_THROWS_WITH_AS(ox::TensorFromProto(bad, ".", "init 'w'"),
                       "init 'w': holds 4 bytes, expected 16 for float32 [4]", msc::Error);
  onnx::TensorProto ext;
  ext.set_data_type(onnx::TensorProto::FLOAT);
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = ext.add_external_data();
  kv->set_key("location");
  kv->set_value("../../etc/passwd");
  CHECK_THROWS_WITH_AS(ox::TensorFromProto(ext, ".", "w"),
                       "w: external data location '../../etc/passwd' must be a relative path "
                       "inside the model's folder",
                       msc::Error);
}

TEST_CASE("onnx: const_eval folds int64 shape arithmetic exactly") {
  onnx::NodeProto n;
  n.set_op_type("Slice");
  n.add_output("y");
  auto data = ox::MakeIntTensor("int64", {4}, {10, 20, 30, 40});
  auto starts = ox::MakeIntTensor("int64", {1}, {1});
  // INT64_MAX as `ends` (torch.onnx's "to the end") must not overflow
  auto ends = ox::MakeIntTensor("int64", {1}, {INT64_MAX});
  auto r = ox::FoldNode(n, {&data, &starts, &ends}, 13);
  REQUIRE(r);
  CHECK(*ox::TensorInts((*r)[0]) == std::vector<int64_t>{20, 30, 40});
  onnx::NodeProto div;
  div.set_op_type("Div");
  div.add_output("q");
  auto a = ox::MakeIntTensor("int64", {2}, {7, -7});
  auto b = ox::MakeIntTensor("int64", {}, {2});
  auto q = ox::FoldNode(div, {&a, &b}, 13);
  REQUIRE(q);
  CHECK(*ox::TensorInts((*q)[0]) == std::vector<int64_t>{3, -3});  // C truncation, as ONNX
  auto zero = ox::MakeIntTensor("int64", {}, {0});
  CHECK_FALSE(ox::FoldNode(div, {&a, &zero}, 13));  // left to run time, not a crash
}

TEST_CASE("attr_format: MSC's float strings, round-tripping where 6 decimals lose the value") {
  CHECK(msc::ir::AttrFloat(1e-5f) == "0.000010");
  CHECK(msc::ir::AttrFloat(0.1f) == "0.100000");
  CHECK(msc::ir::AttrFloat(1e-12f) == "1e-12");
  CHECK(msc::ir::AttrDouble(-INFINITY) == "-inf");
  CHECK(msc::ir::AttrInts({3}) == "3,");
  CHECK(msc::ir::AttrInts({}) == "");
  CHECK(msc::ir::AttrInts({1, 2}) == "1,2");
}
