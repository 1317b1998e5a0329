// The converter interface of the ONNX frontend: one function per ONNX op type turns one
// NodeProto into MSC nodes through a ConvertContext. Converters live in ops_*.cc, grouped like
// opdefs/ (elementwise, nn, tensor, reduce, index), and register in RegisterAll().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "generator/common/error.h"
#include "generator/frontend/onnx/node_attrs.h"
#include "generator/ir/graph.h"
#include "generator/weights/weights.h"

namespace msc::frontend::onnx_import {

/// An ONNX value as the importer knows it: a tensor some MSC node produces, and/or its value
/// when known at import time (initializers, Constant outputs, folded subgraphs).
struct Value {
  std::string tensor;  ///< MSC tensor name; "" while the value exists only as a constant.
  std::string dtype;   ///< MSC dtype.
  std::vector<int64_t> shape;
  std::vector<std::string> prims;  ///< MSC prims (symbolic dims), [] when static.
  std::shared_ptr<const weights::Tensor> constant;
  bool failed = false;  ///< produced by a node that could not be converted.
  /// An ONNX sequence (SequenceConstruct, ...): its tensors, known at import time by position;
  /// `tensor` and `constant` are then unset. MSC has no sequence type, so a sequence must be
  /// taken apart (SequenceAt, ConcatFromSequence) before it reaches a graph output.
  std::shared_ptr<const std::vector<Value>> items;
};

/// A converter cannot express a node (attribute value, input kind). The importer collects these
/// and reports them all at once: "node 'x' (Pad): mode 'wrap' is not supported".
class Unsupported : public Error {
 public:
  explicit Unsupported(const std::string& what) : Error(what) {}
};

/// One weight of an emitted node.
struct WeightSpec {
  std::string role;  ///< MSC weight type: weight, bias, gamma, beta, mean, var.
  weights::Tensor data;
  std::string alias;   ///< ONNX initializer name, or "" (then "<node>.<role>").
  std::string layout;  ///< "OIHW", "O", ... or "".
};

/// Output spec of an emitted node.
struct OutSpec {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> prims;
};

class Importer;

class ConvertContext {
 public:
  ConvertContext(Importer& importer, const onnx::NodeProto& node, int64_t opset);

  const onnx::NodeProto& node;
  const NodeAttrs attrs;
  const int64_t opset;

  /// "node 'x' (Conv)" for messages.
  std::string Label() const;
  /// Throws Unsupported("node 'x' (Op): <what>").
  [[noreturn]] void Fail(const std::string& what) const;

  int NumInputs() const { return node.input_size(); }
  /// Input k is given (present and not the empty name of an omitted optional input).
  bool Has(int k) const { return k < node.input_size() && !node.input(k).empty(); }
  const Value& In(int k) const;
  bool IsConst(int k) const { return Has(k) && In(k).constant != nullptr; }
  /// The constant value of input k; Fail()s with "input k ('name') must be a constant" if not.
  const weights::Tensor& Const(int k) const;
  std::vector<int64_t> ConstInts(int k) const;
  std::vector<double> ConstDoubles(int k) const;
  /// The MSC tensor of input k (a constant becomes a `constant` node once, aliased by its name).
  std::string T(int k);
  /// The MSC tensor of a sequence item (a constant item becomes a `constant` node).
  std::string T(const Value& item);
  /// The items of sequence input k; Fail()s when it is not a sequence.
  const std::vector<Value>& Seq(int k) const;
  /// Binds ONNX output k to a sequence of `items`.
  void BindSeq(int k, std::vector<Value> items);
  /// Binds ONNX output k to a sequence item (its tensor or its constant).
  void BindItem(int k, const Value& item);
  /// Rank of input k.
  int64_t Rank(int k) const { return static_cast<int64_t>(In(k).shape.size()); }

  int NumOutputs() const { return node.output_size(); }
  bool HasOut(int k) const { return k < node.output_size() && !node.output(k).empty(); }
  /// Output k as ONNX shape inference left it: dtype, static shape (prims for symbolic dims).
  OutSpec Out(int k) const;

  /// Adds an MSC node; returns its output tensor names. `hint` overrides the name hint (default:
  /// the optype without namespace, "matmul" for msc.linear*, msc.matmul).
  std::vector<std::string> Emit(const std::string& optype, const std::vector<std::string>& inputs,
                                const ir::OrderedMap<std::string>& attrs,
                                const std::vector<OutSpec>& outputs,
                                const std::vector<WeightSpec>& weights = {},
                                const std::string& hint = "");
  /// Emit with one output shaped like ONNX output 0, bound to it. Returns the tensor name.
  std::string EmitOut(const std::string& optype, const std::vector<std::string>& inputs,
                      const ir::OrderedMap<std::string>& attrs,
                      const std::vector<WeightSpec>& weights = {});
  /// A `constant` node holding `value` (alias given or "").
  std::string ConstTensor(const weights::Tensor& value, const std::string& alias = "");
  /// Binds ONNX output k to an existing MSC tensor (sets its alias if it has none).
  void Bind(int k, const std::string& tensor);
  /// Binds ONNX output k to an import-time constant.
  void BindConst(int k, weights::Tensor value);
  /// Dtype/shape of an emitted or input MSC tensor.
  const ir::MSCTensor& Info(const std::string& tensor) const;
  /// ONNX name of input k (for weight aliases).
  const std::string& InName(int k) const { return node.input(k); }

 private:
  Importer& imp_;
};

using Converter = std::function<void(ConvertContext&)>;
using ConverterMap = std::map<std::string, Converter>;

/// Every converter, keyed by ONNX op type (default domain).
const ConverterMap& Converters();

/// The ONNX type of a value after shape inference, or nullptr when unknown.
using TypeOf = std::function<const onnx::TypeProto*(const std::string& onnx_name)>;
/// Whether a converter takes `node` (opset `opset`).
using Takes = std::function<bool(const onnx::NodeProto& node, const NodeAttrs& attrs, int64_t opset,
                                 const TypeOf& type_of)>;
/// ONNX function ops (ops whose schema defines them by a body of other ONNX ops, e.g. Attention,
/// GroupNormalization) whose converter takes only some nodes: the converter's condition. A node
/// it does not take -- and a node of a function op without a converter -- is replaced by ONNX's
/// own function body before conversion (Importer::ExpandFunctions), so that its semantics are the
/// spec's exactly.
const std::map<std::string, Takes>& PartialConverters();
bool AttentionTakes(const onnx::NodeProto& node, const NodeAttrs& attrs, int64_t opset,
                    const TypeOf& type_of);
bool SwishTakes(const NodeAttrs& attrs);

void RegisterElementwiseOps(ConverterMap& m);
void RegisterNnOps(ConverterMap& m);
void RegisterTensorOps(ConverterMap& m);
void RegisterReduceOps(ConverterMap& m);

/// Small helpers shared by converters.
ir::OrderedMap<std::string> Attrs(std::initializer_list<std::pair<std::string, std::string>> kv);
/// A 0-d constant of `dtype` holding `v` (a `constant` node with a `scalar` attr).
std::string Scalar(ConvertContext& c, const std::string& dtype, double v);
/// Normalizes a possibly negative axis against `rank`; Fail()s when out of range.
int64_t NormAxis(const ConvertContext& c, int64_t axis, int64_t rank);

}  // namespace msc::frontend::onnx_import
