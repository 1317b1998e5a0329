// Shared scaffolding of the ONNX frontend unit tests (test_onnx_*.cc): an ONNX model built in
// memory with ONNX's own protobuf classes (onnx/onnx.proto3, ONNX 1.12) and written to a
// temporary folder for msc::frontend::onnx_import::ImportOnnx, node attribute setters, and
// helpers that inspect the imported MSCGraph.
//
// Everything is in the named namespace msc_test and defined inline, so several .cc files of the
// one msc_unit_tests binary can include it (no anonymous namespace: one definition per entity).
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <onnx/onnx_pb.h>

#include "generator/common/error.h"
#include "generator/frontend/onnx/const_eval.h"
#include "generator/frontend/onnx/onnx_import.h"
#include "generator/frontend/onnx/tensor_proto.h"
#include "generator/ir/graph.h"
#include "generator/weights/weights.h"

namespace msc_test {

using Strs = std::vector<std::string>;
using Dims = std::vector<int64_t>;

/// One ONNX model (ir_version 8, default domain at opset `opset`) built in memory. The graph `g`
/// is public so a test can add what the helpers do not cover (custom domains, dim_params on
/// other axes, raw initializers). Save() writes `dir`/model.onnx; `dir` is a fresh folder under
/// the system temp folder (unique per process and model), removed with the model.
struct OnnxModel {
  std::filesystem::path dir;
  onnx::ModelProto model;
  onnx::GraphProto* g;

  explicit OnnxModel(int64_t opset = 13) {
    static int counter = 0;  // one counter for the binary: the constructor is inline
    dir = std::filesystem::temp_directory_path() /
          ("msc_onnx_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    model.set_ir_version(8);
    auto* imp = model.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    g = model.mutable_graph();
    g->set_name("g");
  }
  ~OnnxModel() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  OnnxModel(const OnnxModel&) = delete;  // `g` points into `model`
  OnnxModel& operator=(const OnnxModel&) = delete;

  /// Appends a tensor value named `name` to `list` (graph inputs / outputs): element type `type`
  /// (an onnx::TensorProto::DataType), shape `dims`; a dim < 0 is the symbol `sym` (dim_param),
  /// or an unknown dim when `sym` is empty.
  static void Value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                    const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT,
                    const std::string& sym = "") {
    auto* v = list->Add();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d >= 0)
        dim->set_dim_value(d);
      else if (!sym.empty())
        dim->set_dim_param(sym);
    }
  }
  /// A graph input of element type `type` (float32 by default); dims < 0 are the symbol `sym`.
  void Input(const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT,
             const std::string& sym = "") {
    Value(g->mutable_input(), name, dims, type, sym);
  }
  /// A float32 graph input whose dims < 0 are the symbol `sym`: Input("x", {-1, 3}, "batch").
  void Input(const std::string& name, const Dims& dims, const std::string& sym) {
    Input(name, dims, onnx::TensorProto::FLOAT, sym);
  }
  /// A graph output; arguments as Input().
  void Output(const std::string& name, const Dims& dims, int type = onnx::TensorProto::FLOAT,
              const std::string& sym = "") {
    Value(g->mutable_output(), name, dims, type, sym);
  }
  void Output(const std::string& name, const Dims& dims, const std::string& sym) {
    Output(name, dims, onnx::TensorProto::FLOAT, sym);
  }
  /// A float32 graph input / output of shape [sym] + rest: dim 0 a symbolic (dynamic) batch.
  void BatchInput(const std::string& name, const std::string& sym, const Dims& rest) {
    Input(name, WithBatch(rest), sym);
  }
  void BatchOutput(const std::string& name, const std::string& sym, const Dims& rest) {
    Output(name, WithBatch(rest), sym);
  }

  /// Appends a default-domain node `op` reading `ins` ("" for an omitted optional input) and
  /// writing `outs`; it is named `name`, or its first output when `name` is empty. Returns the
  /// node for the attribute setters below.
  onnx::NodeProto* Node(const std::string& op, const Strs& ins, const Strs& outs,
                        const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? outs.at(0) : name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }

  /// An initializer named `name` holding `t` (any dtype, stored as raw_data).
  void Init(const std::string& name, const msc::weights::Tensor& t) {
    auto* p = g->add_initializer();
    *p = msc::frontend::onnx_import::TensorToProto(t);
    p->set_name(name);
  }
  /// A float32 initializer of shape `dims` holding `values`, or 0, 1, 2, ... when it is empty.
  void Floats(const std::string& name, const Dims& dims, std::vector<double> values = {}) {
    if (values.empty()) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      for (int64_t k = 0; k < n; ++k) values.push_back(static_cast<double>(k));
    }
    Init(name, msc::frontend::onnx_import::MakeTensor("float32", dims, values));
  }
  /// A 1-D int64 initializer (shapes, axes, pads, sizes ...).
  void Ints(const std::string& name, const Dims& v) {
    Init(name,
         msc::frontend::onnx_import::MakeIntTensor("int64", {static_cast<int64_t>(v.size())}, v));
  }
  /// A 0-D int64 initializer.
  void Scalar(const std::string& name, int64_t v) {
    Init(name, msc::frontend::onnx_import::MakeIntTensor("int64", {}, {v}));
  }

  /// Writes the model to `dir`/model.onnx and returns that path (the ONNX checker runs at
  /// import, not here). Throws std::runtime_error naming the path when it cannot be written.
  std::string Save() const {
    const std::string path = (dir / "model.onnx").string();
    std::ofstream out(path, std::ios::binary);
    if (!model.SerializeToOstream(&out) || !out.flush())
      throw std::runtime_error(path + ": cannot write the ONNX model");
    return path;
  }

 private:
  static Dims WithBatch(const Dims& rest) {
    Dims dims{-1};
    dims.insert(dims.end(), rest.begin(), rest.end());
    return dims;
  }
};

/// Node attribute setters (onnx.proto3 `message AttributeProto`: name, type and the one field the
/// type names).
inline onnx::AttributeProto* AddAttr(onnx::NodeProto* n, const std::string& name,
                                     onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void IntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  AddAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void IntsAttr(onnx::NodeProto* n, const std::string& name, const Dims& v) {
  auto* a = AddAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void FloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  AddAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void FloatsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = AddAttr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void StrAttr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  AddAttr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
/// A TENSOR attribute (Constant's `value`, ConstantOfShape's `value`).
inline void TensorAttr(onnx::NodeProto* n, const std::string& name, const msc::weights::Tensor& t) {
  *AddAttr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() =
      msc::frontend::onnx_import::TensorToProto(t);
}

/// The message of the msc::Error that importing `path` throws; "" when the import succeeds.
inline std::string ImportError(const std::string& path,
                               const msc::frontend::onnx_import::ImportOptions& options = {}) {
  try {
    msc::frontend::onnx_import::ImportOnnx(path, options);
  } catch (const msc::Error& e) {
    return e.what();
  }
  return "";
}

/// The optypes of the graph's nodes, in order.
inline Strs Optypes(const msc::ir::MSCGraph& g) {
  Strs v;
  for (const auto& n : g.nodes) v.push_back(n.optype);
  return v;
}

/// The first node of optype `optype`; fails the test when there is none.
inline const msc::ir::MSCJoint& Find(const msc::ir::MSCGraph& g, const std::string& optype) {
  for (const auto& n : g.nodes)
    if (n.optype == optype) return n;
  FAIL("no node of optype " << optype);
  return g.nodes.at(0);
}

/// The stringified attr `key` of `n`, or "<absent>".
inline std::string Attr(const msc::ir::MSCJoint& n, const std::string& key) {
  const std::string* v = n.FindAttr(key);
  return v ? *v : "<absent>";
}

}  // namespace msc_test

/// Checks that importing `path` fails with a message containing `text` (logged on failure).
#define CHECK_ERROR(path, text)                           \
  do {                                                    \
    const std::string err_ = msc_test::ImportError(path); \
    INFO(err_);                                           \
    CHECK(err_.find(text) != std::string::npos);          \
  } while (0)
