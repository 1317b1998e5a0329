// Unit tests of the ONNX neural-network converters (generator/frontend/onnx/ops_nn.cc,
// ops_nn_norm.cc, ops_nn_resize.cc): the MSC nodes, attrs, weights and shapes one ONNX node
// becomes, and the reasons unsupported attributes / inputs are rejected with. Numbers are
// checked end to end by tests/onnx/conformance.py on ONNX's backend tests.
#include <doctest/doctest.h>

#include <algorithm>

#include <string>

#include <onnx/onnx_pb.h>

#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "onnx_test_model.h"

namespace ox = msc::frontend::onnx_import;
using namespace msc_test;  // NOLINT(build/namespaces): the shared ONNX test scaffolding

TEST_CASE(
    "onnx nn ops: Conv with constant weight and bias -> msc.conv2d_bias, SAME_UPPER padding") {
  OnnxModel m(11);
  m.Input("x", {1, 2, 5, 5});
  m.Floats("w", {4, 2, 3, 3});
  m.Floats("b", {4});
  auto* n = m.Node("Conv", {"x", "w", "b"}, {"y"});
  StrAttr(n, "auto_pad", "SAME_UPPER");
  IntsAttr(n, "strides", {2, 2});
  m.Output("y", {1, 4, 3, 3});
  auto r = ox::ImportOnnx(m.Save());
  REQUIRE(Optypes(r.graph) == Strs{"input", "msc.conv2d_bias"});
  const auto& conv = r.graph.nodes[1];
  CHECK(conv.name == "conv2d");
  // out = ceil(5 / 2) = 3, total = (3 - 1) * 2 + 3 - 5 = 2: one on each side
  CHECK(Attr(conv, "padding") == "1,1,1,1");
  CHECK(Attr(conv, "strides") == "2,2");
  CHECK(Attr(conv, "kernel_layout") == "OIHW");
  const auto* w = conv.FindWeight("weight");
  const auto* b = conv.FindWeight("bias");
  REQUIRE(w);
  REQUIRE(b);
  CHECK(w->alias == "w");
  CHECK(w->layout == "OIHW");
  CHECK(w->shape == Dims{4, 2, 3, 3});
  CHECK(b->shape == Dims{4});
  CHECK(b->layout == "O");
  CHECK(conv.outputs[0].alias == "y");

  OnnxModel lower(11);  // SAME_LOWER with an odd total puts the extra element first
  lower.Input("x", {1, 1, 4, 4});
  lower.Floats("w", {1, 1, 2, 2});
  StrAttr(lower.Node("Conv", {"x", "w"}, {"y"}), "auto_pad", "SAME_LOWER");
  lower.Output("y", {1, 1, 4, 4});
  auto gl = ox::ImportOnnx(lower.Save()).graph;
  REQUIRE(Optypes(gl) == Strs{"input", "nn.conv2d"});
  CHECK(Attr(gl.nodes[1], "padding") == "1,1,0,0");
}

TEST_CASE("onnx nn ops: Conv 1-D, a run-time weight (1-D input, 2-D im2col), 3-D rejected") {
  OnnxModel m(11);
  m.Input("x", {1, 4, 9});
  m.Input("w", {6, 2, 3});
  auto* n = m.Node("Conv", {"x", "w"}, {"y"});
  IntAttr(n, "group", 2);
  IntsAttr(n, "pads", {1, 2});
  m.Output("y", {1, 6, 10});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "input", "nn.conv1d"});
  CHECK(g.nodes[2].inputs == Strs{"x:0", "w:0"});
  CHECK(Attr(g.nodes[2], "padding") == "1,2");
  CHECK(Attr(g.nodes[2], "groups") == "2");

  OnnxModel im(11);
  im.Input("x", {1, 4, 5, 5});
  im.Input("w", {6, 2, 2, 3});
  auto* c2 = im.Node("Conv", {"x", "w"}, {"y"});
  IntAttr(c2, "group", 2);
  IntsAttr(c2, "pads", {0, 1, 0, 1});
  im.Output("y", {1, 6, 4, 5});
  auto gi = ox::ImportOnnx(im.Save()).graph;
  // pad, 6 taps, stack, cols reshape, weight reshape, matmul, output reshape
  REQUIRE(gi.nodes.size() == 2 + 1 + 6 + 1 + 3 + 1);
  CHECK(Attr(Find(gi, "nn.pad"), "pad_width") == "0,0,0,0,0,0,1,1");
  CHECK(Find(gi, "stack").outputs[0].shape == Dims{1, 4, 6, 4, 5});
  const auto& mm = Find(gi, "matmul");
  CHECK(mm.outputs[0].shape == Dims{1, 2, 3, 20});
  CHECK(gi.nodes.back().outputs[0].shape == Dims{1, 6, 4, 5});
  CHECK(gi.nodes.back().outputs[0].alias == "y");

  OnnxModel c3(11);
  c3.Input("x", {1, 1, 4, 4, 4});
  c3.Floats("w", {1, 1, 2, 2, 2});
  c3.Node("Conv", {"x", "w"}, {"y"});
  c3.Output("y", {1, 1, 3, 3, 3});
  // 3-D: the sum over the kernel's 2 depth taps of 2-D convolutions of depth slices
  auto g3 = ox::ImportOnnx(c3.Save()).graph;
  CHECK(std::count_if(g3.nodes.begin(), g3.nodes.end(),
                      [](const auto& n) { return n.optype == "nn.conv2d"; }) == 2);
  CHECK(std::count_if(g3.nodes.begin(), g3.nodes.end(),
                      [](const auto& n) { return n.optype == "strided_slice"; }) == 2);
  CHECK(Find(g3, "nn.conv2d").weights.at(0).second.shape == Dims{1, 1, 2, 2});
  CHECK(Find(g3, "nn.conv2d").outputs[0].shape == Dims{3, 1, 3, 3});  // [N * oD, O, oH, oW]
  CHECK(g3.nodes.back().optype == "permute_dims");
  CHECK(g3.nodes.back().outputs[0].shape == Dims{1, 1, 3, 3, 3});
  CHECK(g3.nodes.back().outputs[0].alias == "y");
  OnnxModel r3(11);
  r3.Input("x", {1, 1, 4, 4, 4});
  r3.Input("w", {1, 1, 2, 2, 2});
  r3.Node("Conv", {"x", "w"}, {"y"});
  r3.Output("y", {1, 1, 3, 3, 3});
  CHECK_ERROR(r3.Save(),
              "node 'y' (Conv): 3-D Conv (as 2-D convolutions over depth taps): the "
              "weight must be a constant");
}

TEST_CASE("onnx nn ops: ConvTranspose output_shape -> padding / output_padding, bias as add") {
  OnnxModel m(11);
  m.Input("x", {1, 1, 3, 3});
  m.Floats("w", {1, 2, 3, 3});
  m.Floats("b", {2});
  auto* n = m.Node("ConvTranspose", {"x", "w", "b"}, {"y"});
  IntsAttr(n, "strides", {3, 2});
  IntsAttr(n, "output_shape", {10, 8});
  m.Output("y", {1, 2, 10, 8});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "constant", "nn.conv2d_transpose", "constant", "add"});
  const auto& ct = g.nodes[2];
  // H: 3 * 2 + 3 = 9 < 10: one extra row of output_padding; W: 2 * 2 + 3 = 7 < 8 likewise
  CHECK(Attr(ct, "padding") == "0,0,0,0");
  CHECK(Attr(ct, "output_padding") == "1,1");
  CHECK(Attr(ct, "kernel_layout") == "IOHW");
  CHECK(ct.inputs == Strs{"x:0", "const:0"});
  CHECK(g.nodes[3].outputs[0].shape == Dims{1, 2, 1, 1});
  CHECK(g.nodes[4].outputs[0].alias == "y");

  OnnxModel same(11);  // SAME_UPPER: output = in * stride; total 1 goes to the end
  same.Input("x", {1, 1, 3, 3});
  same.Floats("w", {1, 1, 3, 3});
  auto* s = same.Node("ConvTranspose", {"x", "w"}, {"y"});
  StrAttr(s, "auto_pad", "SAME_UPPER");
  IntsAttr(s, "strides", {2, 2});
  same.Output("y", {1, 1, 6, 6});
  auto gs = ox::ImportOnnx(same.Save()).graph;
  CHECK(Attr(Find(gs, "nn.conv2d_transpose"), "padding") == "0,0,1,1");
}

TEST_CASE("onnx nn ops: Gemm with constant B -> msc.linear_bias [O, I]; matrix C -> linear + add") {
  OnnxModel m;
  m.Input("a", {2, 3});
  m.Floats("b", {3, 4});  // transB = 0: [I, O], transposed at import
  m.Floats("c", {4}, {1, 2, 3, 4});
  FloatAttr(m.Node("Gemm", {"a", "b", "c"}, {"y"}), "beta", 0.5f);
  m.Output("y", {2, 4});
  auto r = ox::ImportOnnx(m.Save());
  REQUIRE(Optypes(r.graph) == Strs{"input", "msc.linear_bias"});
  const auto& lin = r.graph.nodes[1];
  CHECK(lin.name == "matmul");
  const auto* w = lin.FindWeight("weight");
  const auto* b = lin.FindWeight("bias");
  REQUIRE(w);
  REQUIRE(b);
  CHECK(w->shape == Dims{4, 3});
  // element [o, i] of the weight is B[i, o] = i * 4 + o
  CHECK(ox::TensorDoubles(r.weights.at(w->name)) ==
        std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(ox::TensorDoubles(r.weights.at(b->name)) == std::vector<double>{0.5, 1, 1.5, 2});

  OnnxModel mat;
  mat.Input("a", {3, 2});
  mat.Floats("b", {4, 3});
  mat.Floats("c", {2, 4});
  auto* n = mat.Node("Gemm", {"a", "b", "c"}, {"y"});
  IntAttr(n, "transA", 1);
  IntAttr(n, "transB", 1);
  FloatAttr(n, "alpha", 0.25f);
  mat.Output("y", {2, 4});
  auto gm = ox::ImportOnnx(mat.Save()).graph;
  CHECK(Optypes(gm) ==
        Strs{"input", "constant", "multiply", "permute_dims", "msc.linear", "constant", "add"});
  CHECK(Find(gm, "msc.linear").FindWeight("weight")->alias == "b");

  OnnxModel dyn;
  dyn.Input("a", {2, 3});
  dyn.Input("b", {4, 3});
  IntAttr(dyn.Node("Gemm", {"a", "b"}, {"y"}), "transB", 1);
  dyn.Output("y", {2, 4});
  CHECK(Optypes(ox::ImportOnnx(dyn.Save()).graph) ==
        Strs{"input", "input", "permute_dims", "matmul"});
}

TEST_CASE("onnx nn ops: BatchNormalization -> nn.batch_norm + get_item; run-time params composed") {
  OnnxModel m(9);
  m.Input("x", {2, 3, 4});
  for (auto p : {"s", "bias", "mean", "var"}) m.Floats(p, {3});
  FloatAttr(m.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"}), "epsilon",
            1e-3f);
  m.Output("y", {2, 3, 4});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "nn.batch_norm", "get_item"});
  CHECK(Attr(g.nodes[1], "epsilon") == "0.001000");
  CHECK(Attr(g.nodes[1], "axis") == "1");
  for (auto role : {"gamma", "beta", "mean", "var"}) CHECK(g.nodes[1].FindWeight(role));
  CHECK(g.nodes[1].FindWeight("gamma")->alias == "s");
  CHECK(g.nodes[2].name == "batch_norm.0");
  CHECK(Attr(g.nodes[2], "index") == "0");
  CHECK(g.nodes[2].outputs[0].alias == "y");

  OnnxModel rt(15);  // parameters as graph inputs: the formula
  rt.Input("x", {2, 3, 4});
  for (auto p : {"s", "bias", "mean", "var"}) rt.Input(p, {3});
  rt.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"});
  rt.Output("y", {2, 3, 4});
  auto gr = ox::ImportOnnx(rt.Save()).graph;
  CHECK(Find(gr, "sqrt").outputs[0].shape == Dims{3, 1});
  CHECK(gr.nodes.back().optype == "add");

  OnnxModel tr(15);  // training_mode: batch statistics over axes 0, 2 and running statistics
  tr.Input("x", {2, 3, 4});
  for (auto p : {"s", "bias", "mean", "var"}) tr.Floats(p, {3});
  IntAttr(tr.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y", "rm", "rv"}),
          "training_mode", 1);
  tr.Output("y", {2, 3, 4});
  tr.Output("rm", {3});
  tr.Output("rv", {3});
  auto gt = ox::ImportOnnx(tr.Save()).graph;
  CHECK(Attr(Find(gt, "variance"), "axis") == "0,2");
  CHECK(gt.outputs.size() == 3);

  OnnxModel old(9);
  old.Input("x", {2, 3, 4});
  for (auto p : {"s", "bias", "mean", "var"}) old.Floats(p, {3});
  old.Node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y", "m", "v", "sm", "sv"});
  old.Output("y", {2, 3, 4});
  for (auto o : {"m", "v", "sm", "sv"}) old.Output(o, {3});
  CHECK_ERROR(old.Save(), "training outputs (mean, var, saved_mean, saved_var)");
}

TEST_CASE("onnx nn ops: LayerNormalization -> nn.layer_norm; Mean / InvStdDev outputs computed") {
  OnnxModel m(17);
  m.Input("x", {2, 3, 4});
  m.Floats("w", {3, 4});
  m.Floats("b", {3, 4});
  IntAttr(m.Node("LayerNormalization", {"x", "w", "b"}, {"y", "mean", "inv"}), "axis", 1);
  m.Output("y", {2, 3, 4});
  m.Output("mean", {2, 1, 1});
  m.Output("inv", {2, 1, 1});
  auto g = ox::ImportOnnx(m.Save()).graph;
  const auto& ln = Find(g, "nn.layer_norm");
  CHECK(Attr(ln, "axes") == "-2,-1");
  CHECK(ln.FindWeight("gamma"));
  CHECK(ln.FindWeight("beta"));
  CHECK(Attr(Find(g, "mean"), "axis") == "1,2");
  CHECK(Find(g, "rsqrt").outputs[0].alias == "inv");

  OnnxModel rt(17);  // a run-time scale: layer_norm without gamma, then multiply
  rt.Input("x", {2, 4});
  rt.Input("w", {4});
  rt.Node("LayerNormalization", {"x", "w"}, {"y"});
  rt.Output("y", {2, 4});
  CHECK(Optypes(ox::ImportOnnx(rt.Save()).graph) ==
        Strs{"input", "input", "nn.layer_norm", "multiply"});
}

TEST_CASE("onnx nn ops: pools -> nn.max_pool2d / nn.avg_pool1d; Indices and 3-D rejected") {
  OnnxModel m(12);
  m.Input("x", {1, 1, 5, 5});
  auto* n = m.Node("MaxPool", {"x"}, {"y"});
  IntsAttr(n, "kernel_shape", {3, 3});
  IntsAttr(n, "strides", {2, 2});
  IntsAttr(n, "dilations", {1, 2});
  IntAttr(n, "ceil_mode", 1);
  m.Output("y", {1, 1, 2, 1});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "nn.max_pool2d"});
  CHECK(Attr(g.nodes[1], "pool_size") == "3,3");
  CHECK(Attr(g.nodes[1], "dilation") == "1,2");
  CHECK(Attr(g.nodes[1], "ceil_mode") == "1");

  OnnxModel a(11);
  a.Input("x", {1, 2, 7});
  auto* p = a.Node("AveragePool", {"x"}, {"y"});
  IntsAttr(p, "kernel_shape", {3});
  IntsAttr(p, "pads", {1, 1});
  IntAttr(p, "count_include_pad", 1);
  a.Output("y", {1, 2, 7});
  auto ga = ox::ImportOnnx(a.Save()).graph;
  REQUIRE(Optypes(ga) == Strs{"input", "nn.avg_pool1d"});
  CHECK(Attr(ga.nodes[1], "padding") == "1,1");
  CHECK(Attr(ga.nodes[1], "count_include_pad") == "1");
  CHECK(Attr(ga.nodes[1], "layout") == "NCW");

  OnnxModel idx(12);
  idx.Input("x", {1, 1, 4, 4});
  IntsAttr(idx.Node("MaxPool", {"x"}, {"y", "i"}), "kernel_shape", {2, 2});
  idx.Output("y", {1, 1, 3, 3});
  idx.Output("i", {1, 1, 3, 3}, onnx::TensorProto::INT64);
  CHECK_ERROR(idx.Save(), "node 'y' (MaxPool): the Indices output");

  // 3-D Max/AveragePool become two 2-D pools (ONNX conformance: MaxPool3d, AvgPool3d); LpPool not
  OnnxModel p3(12);
  p3.Input("x", {1, 1, 4, 4, 4});
  IntsAttr(p3.Node("LpPool", {"x"}, {"y"}), "kernel_shape", {2, 2, 2});
  p3.Output("y", {1, 1, 3, 3, 3});
  CHECK_ERROR(p3.Save(), "3-D pooling has no MSC optype");
}

TEST_CASE("onnx nn ops: Softmax before opset 13 coerces to 2-D; from 13 one node on the axis") {
  OnnxModel m(11);
  m.Input("x", {2, 3, 4});
  m.Node("Softmax", {"x"}, {"y"});  // default axis 1: softmax over the 12 trailing elements
  m.Output("y", {2, 3, 4});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "reshape", "nn.softmax", "reshape"});
  CHECK(Attr(g.nodes[1], "shape") == "2,12");
  CHECK(Attr(g.nodes[2], "axis") == "-1");
  CHECK(g.nodes[3].outputs[0].alias == "y");

  OnnxModel m13(13);
  m13.Input("x", {2, 3, 4});
  IntAttr(m13.Node("LogSoftmax", {"x"}, {"y"}), "axis", 1);
  m13.Output("y", {2, 3, 4});
  auto g13 = ox::ImportOnnx(m13.Save()).graph;
  REQUIRE(Optypes(g13) == Strs{"input", "nn.log_softmax"});
  CHECK(Attr(g13.nodes[1], "axis") == "1");

  OnnxModel h(13);
  h.Input("x", {2, 5});
  h.Node("Hardmax", {"x"}, {"y"});
  h.Output("y", {2, 5});
  auto gh = ox::ImportOnnx(h.Save()).graph;
  REQUIRE(Optypes(gh) == Strs{"input", "argmax", "one_hot"});
  CHECK(Attr(gh.nodes[2], "depth") == "5");
}

TEST_CASE("onnx nn ops: Resize with constant sizes -> image.resize2d; what resize2d cannot do") {
  OnnxModel m(13);
  m.Input("x", {1, 1, 4, 4});
  m.Ints("sizes", {1, 1, 8, 6});
  auto* n = m.Node("Resize", {"x", "", "", "sizes"}, {"y"});
  StrAttr(n, "mode", "linear");
  StrAttr(n, "coordinate_transformation_mode", "align_corners");
  m.Output("y", {1, 1, 8, 6});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "image.resize2d"});
  CHECK(Attr(g.nodes[1], "size") == "8,6");
  CHECK(Attr(g.nodes[1], "method") == "linear");
  CHECK(Attr(g.nodes[1], "coordinate_transformation_mode") == "align_corners");
  CHECK(Attr(g.nodes[1], "cubic_alpha") == "-0.750000");

  OnnxModel frac(13);  // 4 * 0.6 -> 2 outputs, but resize2d would use the ratio 0.5
  frac.Input("x", {1, 1, 4, 4});
  frac.Floats("scales", {4}, {1, 1, 0.6, 0.6});
  frac.Node("Resize", {"x", "", "scales"}, {"y"});
  frac.Output("y", {1, 1, 2, 2});
  CHECK_ERROR(frac.Save(), "image.resize2d computes coordinates from the ratio");

  OnnxModel ceil(13);  // TOPI's integer division for asymmetric nearest ignores round_prefer_ceil
  ceil.Input("x", {1, 1, 2, 2});
  ceil.Floats("scales", {4}, {1, 1, 2, 2});
  auto* c = ceil.Node("Resize", {"x", "", "scales"}, {"y"});
  StrAttr(c, "coordinate_transformation_mode", "asymmetric");
  StrAttr(c, "nearest_mode", "round_prefer_ceil");
  ceil.Output("y", {1, 1, 4, 4});
  CHECK_ERROR(ceil.Save(), "nearest_mode 'round_prefer_ceil' with asymmetric coordinates");

  OnnxModel rt(13);
  rt.Input("x", {1, 1, 2, 2});
  rt.Input("scales", {4});
  rt.Node("Resize", {"x", "", "scales"}, {"y"});
  rt.Output("y", {1, 1, 4, 4});
  CHECK_ERROR(rt.Save(), "node 'y' (Resize): scales must be a constant");

  OnnxModel up(9);  // Upsample: asymmetric, nearest rounds down
  up.Input("x", {1, 1, 2, 2});
  up.Floats("scales", {4}, {1, 1, 2, 3});
  up.Node("Upsample", {"x", "scales"}, {"y"});
  up.Output("y", {1, 1, 4, 6});
  auto gu = ox::ImportOnnx(up.Save()).graph;
  CHECK(Attr(gu.nodes[1], "coordinate_transformation_mode") == "asymmetric");
  CHECK(Attr(gu.nodes[1], "rounding_method") == "floor");
  CHECK(Attr(gu.nodes[1], "method") == "nearest_neighbor");
}

TEST_CASE("onnx nn ops: Pad attrs (opset 2) and inputs (11) -> nn.pad; cropping rejected") {
  OnnxModel m(2);
  m.Input("x", {1, 2, 3});
  auto* n = m.Node("Pad", {"x"}, {"y"});
  IntsAttr(n, "pads", {0, 0, 1, 0, 1, 2});
  StrAttr(n, "mode", "edge");
  m.Output("y", {1, 3, 6});
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "nn.pad"});
  CHECK(Attr(g.nodes[1], "pad_width") == "0,0,0,1,1,2");
  CHECK(Attr(g.nodes[1], "pad_mode") == "edge");

  OnnxModel m11(11);
  m11.Input("x", {2, 3});
  m11.Ints("pads", {0, 1, 0, 2});
  m11.Floats("v", {}, {1.5});
  m11.Node("Pad", {"x", "pads", "v"}, {"y"});
  m11.Output("y", {2, 6});
  auto g11 = ox::ImportOnnx(m11.Save()).graph;
  CHECK(Attr(Find(g11, "nn.pad"), "pad_value") == "1.500000");
  CHECK(Attr(Find(g11, "nn.pad"), "pad_width") == "0,0,1,2");

  OnnxModel neg(11);
  neg.Input("x", {2, 3});
  neg.Ints("pads", {0, -1, 0, 0});
  neg.Node("Pad", {"x", "pads"}, {"y"});
  neg.Output("y", {2, 2});
  CHECK_ERROR(neg.Save(), "negative pads (cropping) are not supported");
}

TEST_CASE("onnx nn ops: Dropout is the identity with an all-true mask; training mode rejected") {
  OnnxModel m(13);
  m.Input("x", {2, 3});
  m.Node("Dropout", {"x"}, {"y", "mask"});
  m.Output("y", {2, 3});
  m.Output("mask", {2, 3}, onnx::TensorProto::BOOL);
  auto g = ox::ImportOnnx(m.Save()).graph;
  REQUIRE(Optypes(g) == Strs{"input", "ones"});
  CHECK(g.outputs == Strs{"x:0", "ones:0"});
  CHECK(g.nodes[1].outputs[0].dtype == "bool");

  OnnxModel t(13);
  t.Input("x", {2, 3});
  t.Init("train", ox::MakeIntTensor("bool", {}, {1}));
  t.Node("Dropout", {"x", "", "train"}, {"y"});
  t.Output("y", {2, 3});
  CHECK_ERROR(t.Save(), "training_mode = true with ratio 0.500000");
}

TEST_CASE("onnx nn ops: LRN as avg_pool2d over channels; DepthToSpace CRD; Flatten axis 0") {
  OnnxModel m(13);
  m.Input("x", {1, 5, 2, 2});
  IntAttr(m.Node("LRN", {"x"}, {"y"}), "size", 4);
  m.Output("y", {1, 5, 2, 2});
  auto g = ox::ImportOnnx(m.Save()).graph;
  const auto& pool = Find(g, "nn.avg_pool2d");
  // channel window [c - 1, c + 2] for size 4: one channel of padding before, two after
  CHECK(Attr(pool, "padding") == "1,0,2,0");
  CHECK(Attr(pool, "pool_size") == "4,1");
  CHECK(Attr(pool, "count_include_pad") == "1");
  CHECK(pool.inputs.size() == 1);
  CHECK(g.nodes.back().optype == "divide");

  OnnxModel d(13);
  d.Input("x", {1, 8, 2, 3});
  auto* n = d.Node("DepthToSpace", {"x"}, {"y"});
  IntAttr(n, "blocksize", 2);
  StrAttr(n, "mode", "CRD");
  d.Output("y", {1, 2, 4, 6});
  auto gd = ox::ImportOnnx(d.Save()).graph;
  REQUIRE(Optypes(gd) == Strs{"input", "reshape", "permute_dims", "reshape"});
  CHECK(Attr(gd.nodes[1], "shape") == "1,2,2,2,2,3");
  CHECK(Attr(gd.nodes[2], "axes") == "0,1,4,2,5,3");

  OnnxModel f(13);
  f.Input("x", {2, 3, 4});
  IntAttr(f.Node("Flatten", {"x"}, {"y"}), "axis", 0);
  f.Output("y", {1, 24});
  CHECK(Attr(ox::ImportOnnx(f.Save()).graph.nodes[1], "shape") == "1,24");
}

TEST_CASE("onnx nn ops: a symbolic batch stays symbolic through Flatten / Softmax-11 / LRN") {
  OnnxModel m(11);
  m.BatchInput("x", "N", {3, 4});
  m.Node("Flatten", {"x"}, {"f"});
  m.Node("Softmax", {"x"}, {"s"});  // opset 11, axis 1: coerced to [N, 12]
  IntAttr(m.Node("LRN", {"x"}, {"l"}), "size", 3);
  m.BatchOutput("f", "N", {12});
  m.BatchOutput("s", "N", {3, 4});
  m.BatchOutput("l", "N", {3, 4});
  auto g = ox::ImportOnnx(m.Save()).graph;
  const auto& flat = Find(g, "reshape");
  CHECK(Attr(flat, "shape") == "-1,12");
  CHECK(flat.outputs[0].prims == Strs{"N", "12"});
  const auto& soft = Find(g, "nn.softmax");
  CHECK(soft.outputs[0].prims == Strs{"N", "12"});
  CHECK(Find(g, "nn.avg_pool2d").outputs[0].prims == Strs{"N", "1", "3", "4"});
  CHECK(g.nodes.back().outputs[0].prims == Strs{"N", "3", "4"});

  OnnxModel two(11);  // [N, 3, M] at axis 1 would need N and 3 * M in one reshape: rejected
  two.BatchInput("x", "N", {3, 4});
  two.Node("Softmax", {"x"}, {"s"});
  two.BatchOutput("s", "N", {3, 4});
  for (auto* list : {two.g->mutable_input(), two.g->mutable_output()})
    list->Mutable(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(2)
        ->set_dim_param("M");
  CHECK_ERROR(two.Save(), "would multiply the symbolic dim 'M' by 3");
}
