// Typed access to an ONNX NodeProto's attributes (onnx.proto3 `message AttributeProto`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace msc::frontend::onnx_import {

/// Reads attributes of one node. A present attribute of the wrong type is an msc::Error naming
/// the node, the attribute, and the expected type (ONNX's checker does not check attribute types
/// of every op version).
class NodeAttrs {
 public:
  explicit NodeAttrs(const onnx::NodeProto& node) : node_(node) {}

  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  int64_t Int(const std::string& name, int64_t def) const;
  float Float(const std::string& name, float def) const;
  std::string Str(const std::string& name, const std::string& def) const;
  std::vector<int64_t> Ints(const std::string& name, const std::vector<int64_t>& def = {}) const;
  std::vector<float> Floats(const std::string& name, const std::vector<float>& def = {}) const;
  std::vector<std::string> Strs(const std::string& name) const;
  /// The TensorProto of a TENSOR attribute (Constant's `value`); nullptr when absent.
  const onnx::TensorProto* Tensor(const std::string& name) const;
  const onnx::AttributeProto* Find(const std::string& name) const;
  /// Names of all attributes, for "unsupported attribute" errors.
  std::vector<std::string> Names() const;

 private:
  const onnx::AttributeProto& Expect(const std::string& name, int type) const;
  const onnx::NodeProto& node_;
};

/// "'conv_3' (Conv)": the node name (or its first output when unnamed) and op type, for errors.
std::string NodeLabel(const onnx::NodeProto& node);

}  // namespace msc::frontend::onnx_import
