// ONNX 1.12's shape inference on malformed models (generator/frontend/onnx/inference_guard.h):
// one case per crash or hang site of the audit of the v1.12.0 sources, each a model that crashed
// (null dereference, out-of-bounds read, SIGFPE) or hung the importer inside
// onnx::shape_inference::InferShapes before the guards. Each must now end in an msc::Error that
// names the model file (and, where the importer's own checks catch it, the value or node); a
// crash fails the whole test binary, a hang the ctest timeout.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "generator/frontend/onnx/onnx_import.h"
#include "onnx_test_model.h"

namespace {

using msc_test::Dims;
using msc_test::OnnxModel;

/// Imports `m` and returns the error message; fails the test when the import succeeds or the
/// message does not start with the model's path.
std::string RejectedWith(const OnnxModel& m) {
  const std::string path = m.Save();
  const std::string what = msc_test::ImportError(path);
  CAPTURE(what);
  CHECK_MESSAGE(what.rfind(path + ": ", 0) == 0, "the import must fail, naming the file");
  return what.size() > path.size() + 2 ? what.substr(path.size() + 2) : what;
}

/// Imports `m` where the model is valid ONNX that ONNX 1.12 mishandled: the import may succeed or
/// fail on the converters' own terms, but a failure names the file. Returns the error ("" if none).
std::string EndsCleanly(const OnnxModel& m) {
  const std::string path = m.Save();
  const std::string what = msc_test::ImportError(path);
  CAPTURE(what);
  CHECK((what.empty() || what.rfind(path + ": ", 0) == 0));
  return what;
}

}  // namespace

TEST_CASE("onnx guard: Conv whose W rank differs from X's (convPoolShapeInference)") {
  for (const auto& [x, w] : {std::pair<Dims, Dims>{{1, 1, 5, 5}, {1, 1}},
                             std::pair<Dims, Dims>{{1, 1, 5}, {1, 1, 3, 3, 3}}}) {
    OnnxModel m(11);
    m.Input("x", x);
    m.Floats("w", w);
    msc_test::StrAttr(m.Node("Conv", {"x", "w"}, {"y"}), "auto_pad", "SAME_UPPER");
    m.Output("y", Dims(x.size(), -1));
    CHECK(RejectedWith(m).find("node 'y' (Conv)") != std::string::npos);
  }
}

TEST_CASE("onnx guard: ConvTranspose with a W of rank < 3 (convTransposeShapeInference)") {
  for (int opset : {1, 11}) {
    for (const Dims& w : {Dims{}, Dims{1, 1}}) {
      OnnxModel m(opset);
      m.Input("x", {1, 1, 4, 4});
      m.Floats("w", w, {1.0});
      m.Node("ConvTranspose", {"x", "w"}, {"y"});
      m.Output("y", {1, 1, 6, 6});
      RejectedWith(m);
    }
  }
}

TEST_CASE("onnx guard: conv / pool with auto_pad SAME over a huge dim ends (no dim/stride loop)") {
  OnnxModel m(11);
  m.Input("x", {1, 1, int64_t{1} << 40, 4});
  auto* n = m.Node("MaxPool", {"x"}, {"y"});
  msc_test::StrAttr(n, "auto_pad", "SAME_UPPER");
  msc_test::IntsAttr(n, "kernel_shape", {2, 2});
  msc_test::IntsAttr(n, "strides", {2, 2});
  m.Output("y", {1, 1, int64_t{1} << 39, 2});
  EndsCleanly(m);  // what matters is that inference ends
}

TEST_CASE("onnx guard: declared values must be dense tensors with dims >= 0 fitting int64") {
  {  // Gemm-6 read dims of a sparse A as if it were a dense tensor (the old rank guard passed it)
    OnnxModel m(6);
    auto* a = m.g->add_input();
    a->set_name("a");
    auto* st = a->mutable_type()->mutable_sparse_tensor_type();
    st->set_elem_type(onnx::TensorProto::FLOAT);
    st->mutable_shape()->add_dim()->set_dim_value(2);
    st->mutable_shape()->add_dim()->set_dim_value(3);
    m.Input("b", {3, 4});
    m.Init("c", msc::frontend::onnx_import::MakeTensor("float32", {4}, {0, 0, 0, 0}));
    m.Node("Gemm", {"a", "b", "c"}, {"y"});  // Gemm-6 needs C
    m.Output("y", {2, 4});
    CHECK(RejectedWith(m) ==
          "graph input 'a' is a sparse tensor: only dense tensors can be imported");
  }
  {  // a sequence input
    OnnxModel m(11);
    auto* a = m.g->add_input();
    a->set_name("a");
    a->mutable_type()
        ->mutable_sequence_type()
        ->mutable_elem_type()
        ->mutable_tensor_type()
        ->set_elem_type(onnx::TensorProto::FLOAT);
    m.Input("b", {3, 4});
    m.Node("MatMul", {"a", "b"}, {"y"});
    m.Output("y", {2, 4});
    CHECK(RejectedWith(m) == "graph input 'a' is a sequence: only dense tensors can be imported");
  }
  for (int opset : {5, 13, 14}) {  // Reshape: INT64_MIN % -1 from a negative or wrapped product
    OnnxModel m(opset);
    m.Input("x", {-1, int64_t{1} << 62, 2});
    m.g->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(0)
        ->set_dim_value(-1);
    m.Ints("s", {0, -1});
    m.Node("Reshape", {"x", "s"}, {"y"});
    m.Output("y", {-1, -1});
    CHECK(RejectedWith(m) == "graph input 'x': dimension 0 is -1 (dims must be >= 0)");
  }
  {
    OnnxModel m(13);
    m.Input("x", {int64_t{1} << 62, 2});
    m.Ints("s", {3, 6148914691236517205, -1});
    m.Node("Reshape", {"x", "s"}, {"y"});
    m.Output("y", {-1, -1, -1});
    CHECK(RejectedWith(m) ==
          "graph input 'x': FLOAT [4611686018427387904, 2] has more elements than int64 can "
          "count");
  }
  {  // GatherND-11 read data dims from a negative indices dim
    OnnxModel m(11);
    m.Input("data", {2, 3});
    m.Input("idx", {2, -1}, onnx::TensorProto::INT64);
    m.g->mutable_input(1)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_value(-2);
    m.Node("GatherND", {"data", "idx"}, {"y"});
    m.Output("y", {2});
    CHECK(RejectedWith(m) == "graph input 'idx': dimension 1 is -2 (dims must be >= 0)");
  }
}

TEST_CASE("onnx guard: two declarations of one value must agree") {
  OnnxModel m(6);  // found by fuzz_onnx: a graph output re-declaring the input with another type
  m.Input("x", {3, 2, 5});
  m.Node("Elu", {"x"}, {"y"});
  m.Output("x", {2, 5}, onnx::TensorProto::FLOAT16);
  CHECK(RejectedWith(m) ==
        "graph output 'x' is declared FLOAT16 [2, 5] but graph input 'x' is FLOAT [3, 2, 5]");
}

TEST_CASE("onnx guard: a Constant whose raw_data does not match its shape") {
  for (int opset : {5, 13}) {
    OnnxModel m(opset);
    m.Input("x", {3});
    auto* c = m.Node("Constant", {}, {"s"});
    auto* a = msc_test::AddAttr(c, "value", onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->set_raw_data(std::string(3, '\1'));
    m.Node("Reshape", {"x", "s"}, {"y"});
    if (opset >= 13) msc_test::IntAttr(m.Node("Cast", {"s"}, {"z"}), "to", 7);
    m.Output("y", {3});
    CHECK(RejectedWith(m) ==
          "node 's' (Constant): value holds 3 bytes of raw_data, its shape needs 8");
  }
}

TEST_CASE("onnx guard: attribute values ONNX 1.12's inference does not range-check") {
  for (int opset : {1, 11, 13}) {  // DepthToSpace: blocksize^2 wraps to 0, then a division
    OnnxModel m(opset);
    m.Input("x", {1, 4, 2, 2});
    msc_test::IntAttr(m.Node("DepthToSpace", {"x"}, {"y"}), "blocksize", int64_t{1} << 32);
    m.Output("y", {-1, -1, -1, -1});
    // (the converter divided by the wrapped blocksize^2 too, once ONNX's inference no longer did)
    CHECK(RejectedWith(m).find("node 'y' (DepthToSpace): blocksize 4294967296 is too large") !=
          std::string::npos);
  }
  for (int opset : {12, 13}) {  // GatherND: batch_dims < 0 read data dims at negative indices
    OnnxModel m(opset);
    m.Input("data", {2, 3});
    m.Init("idx", msc::frontend::onnx_import::MakeIntTensor("int64", {2, 1}, {0, 1}));
    msc_test::IntAttr(m.Node("GatherND", {"data", "idx"}, {"y"}), "batch_dims", -3);
    m.Output("y", {-1});
    RejectedWith(m);
  }
  {  // LayerNormalization-17: axis < -rank wrote the Mean output's dim at a negative index
    OnnxModel m(17);
    m.Input("x", {2, 3});
    m.Floats("scale", {3});
    msc_test::IntAttr(m.Node("LayerNormalization", {"x", "scale"}, {"y", "mean"}), "axis", -3);
    m.Output("y", {2, 3});
    RejectedWith(m);
  }
  for (const char* eq : {"iJ", "i{"}) {  // Einsum-12: letters outside a-z index a 26-entry array
    OnnxModel m(12);
    m.Input("x", {2, 3});
    msc_test::StrAttr(m.Node("Einsum", {"x"}, {"y"}), "equation", eq);
    m.Output("y", {-1});
    RejectedWith(m);
  }
}

TEST_CASE("onnx guard: inputs whose producer's inference failed (untyped)") {
  // Add([2], [3]) fails inference, so z has no type; EyeLike-9 and Shape-15's propagation read it.
  for (const char* op : {"EyeLike", "Shape"}) {
    OnnxModel m(15);
    m.Input("x", {2});
    m.Input("y", {3});
    m.Node("Add", {"x", "y"}, {"z"});
    auto* n = m.Node(op, {"z"}, {"w"});
    if (std::string(op) == "EyeLike") msc_test::IntAttr(n, "dtype", 1);
    m.Output("w", {-1});
    RejectedWith(m);
  }
}

TEST_CASE("onnx guard: data propagation of Slice-13 and Add-14 on hostile constants") {
  {  // Slice-13: a step of 2^32 - 1 truncated to -1 in an int loop read dim -1
    OnnxModel m(13);
    m.Input("x", {2, 3, 4});
    m.Node("Shape", {"x"}, {"s"});
    m.Ints("starts", {0});
    m.Ints("ends", {3});
    m.Ints("axes", {0});
    m.Ints("steps", {4294967295});
    m.Node("Slice", {"s", "starts", "ends", "axes", "steps"}, {"y"});
    m.Output("y", {-1}, onnx::TensorProto::INT64);
    CHECK(EndsCleanly(m) == "");  // a valid Slice: [2, 3, 4][0:3:2^32-1] = [2], folded
  }
  {  // Add-14: an empty operand and a 1-element one; the propagator read dim 0 of the empty one
    OnnxModel m(14);
    m.Init("a", msc::frontend::onnx_import::MakeIntTensor("int64", {0}, {}));
    m.Ints("b", {1});
    m.Input("x", {1});
    m.Node("Add", {"a", "b"}, {"c"});
    m.Node("Reshape", {"x", "c"}, {"y"});
    m.Output("y", {-1});
    EndsCleanly(m);
  }
}

TEST_CASE("onnx guard: a shape input of huge length does not build a huge rank (Expand)") {
  OnnxModel m(13);
  m.Input("x", {1});
  m.Input("s", {1000000000}, onnx::TensorProto::INT64);
  m.Node("Expand", {"x", "s"}, {"y"});
  m.Output("y", {-1});
  CHECK(RejectedWith(m).find("node 'y' (Expand)") != std::string::npos);
}

TEST_CASE("onnx: float16 scalar constants of converters (Elu) are written, not an internal error") {
  OnnxModel m(13);  // found by fuzz_onnx: MakeTensor wrote float32 and float64 only
  m.Input("x", {2, 3}, onnx::TensorProto::FLOAT16);
  m.Node("Elu", {"x"}, {"y"});
  m.Output("y", {2, 3}, onnx::TensorProto::FLOAT16);
  const std::string path = m.Save();
  CHECK(msc_test::ImportError(path) == "");
}

// Found by the review of the guards (traced in ONNX 1.12's sources, not fuzzed):
TEST_CASE("onnx guard: auto_pad NOTSET without pads still takes the dim/stride loop") {
  OnnxModel m(11);
  m.Input("x", {1, 1, int64_t{1} << 40, 1});
  auto* n = m.Node("MaxPool", {"x"}, {"y"});
  msc_test::StrAttr(n, "auto_pad", "NOTSET");
  msc_test::IntsAttr(n, "kernel_shape", {2, 1});
  msc_test::IntsAttr(n, "strides", {2, 1});
  m.Output("y", {-1, -1, -1, -1});
  EndsCleanly(m);
}

TEST_CASE("onnx guard: int32 Slice steps are checked like int64 ones") {
  // Slice-13's data propagation adds the step to an int: 2^31 - 1 wraps it to INT_MIN.
  OnnxModel m(13);
  m.Input("x", {2, 3, 4});
  m.Node("Shape", {"x"}, {"s"});
  for (const auto& [name, v] : {std::pair<const char*, int64_t>{"starts", 1},
                                {"ends", 4},
                                {"axes", 0},
                                {"steps", 2147483647}})
    m.Init(name, msc::frontend::onnx_import::MakeIntTensor("int32", {1}, {v}));
  m.Node("Slice", {"s", "starts", "ends", "axes", "steps"}, {"y"});
  m.Output("y", {-1}, onnx::TensorProto::INT64);
  CHECK(EndsCleanly(m) == "");  // [2, 3, 4][1:4:2^31-1] = [3], folded
}

TEST_CASE("onnx guard: GatherND batch_dims + the indices' last dim cannot wrap int64") {
  OnnxModel m(13);
  m.Input("data", {2, 3});
  m.Input("idx", {(int64_t{1} << 62) + (int64_t{1} << 31)}, onnx::TensorProto::INT64);
  msc_test::IntAttr(m.Node("GatherND", {"data", "idx"}, {"y"}), "batch_dims", int64_t{1} << 62);
  m.Output("y", {-1});
  RejectedWith(m);
}

TEST_CASE("onnx folding: an empty Concat / Gather of huge leading dims ends at once") {
  namespace ox = msc::frontend::onnx_import;
  const int64_t big = int64_t{1} << 40;
  OnnxModel m(13);
  msc_test::TensorAttr(m.Node("Constant", {}, {"c"}), "value",
                       ox::MakeTensor("float32", {big, big, 0}, {}));
  msc_test::IntAttr(m.Node("Concat", {"c", "c"}, {"cc"}), "axis", 2);
  m.Ints("i", {0});
  msc_test::IntAttr(m.Node("Gather", {"c", "i"}, {"g"}), "axis", 2);
  m.Node("Shape", {"cc"}, {"s1"});
  m.Node("Shape", {"g"}, {"s2"});
  m.Input("x", {2});
  m.Node("Neg", {"x"}, {"y"});
  m.Output("s1", {3}, onnx::TensorProto::INT64);
  m.Output("s2", {3}, onnx::TensorProto::INT64);
  m.Output("y", {2});
  EndsCleanly(m);
}

TEST_CASE("onnx: float constants beyond float's range become inf, not undefined behaviour") {
  namespace ox = msc::frontend::onnx_import;
  OnnxModel m(13);  // Gemm's converter scales a constant C by beta in MakeTensor
  m.Input("a", {2, 3}, onnx::TensorProto::FLOAT16);
  m.Init("b", ox::MakeTensor("float16", {3, 4}, std::vector<double>(12, 1.0)));
  m.Init("c", ox::MakeTensor("float16", {4}, {1, 2, 3, 4}));
  msc_test::FloatAttr(m.Node("Gemm", {"a", "b", "c"}, {"y"}), "beta", 1e38f);
  m.Output("y", {2, 4}, onnx::TensorProto::FLOAT16);
  EndsCleanly(m);
  // MakeTensor itself: 1e300 is beyond float32 and float16.
  const auto t = ox::MakeTensor("float32", {2}, {1e300, -1e300});
  float v[2];
  std::memcpy(v, t.data.data(), 8);
  CHECK(std::isinf(v[0]));
  CHECK(v[0] > 0);
  CHECK(std::isinf(v[1]));
  CHECK(v[1] < 0);
}
