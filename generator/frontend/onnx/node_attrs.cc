#include "generator/frontend/onnx/node_attrs.h"

#include "generator/common/error.h"

namespace msc::frontend::onnx_import {

using onnx::AttributeProto;

std::string NodeLabel(const onnx::NodeProto& node) {
  std::string name = node.name();
  if (name.empty() && node.output_size() > 0) name = node.output(0);
  return "'" + name + "' (" + node.op_type() + ")";
}

const AttributeProto* NodeAttrs::Find(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<std::string> NodeAttrs::Names() const {
  std::vector<std::string> out;
  for (const auto& a : node_.attribute()) out.push_back(a.name());
  return out;
}

const AttributeProto& NodeAttrs::Expect(const std::string& name, int type) const {
  const AttributeProto* a = Find(name);
  if (a->type() != type && !(a->type() == AttributeProto::UNDEFINED))
    throw Error(
        "node " + NodeLabel(node_) + ": attribute '" + name + "' is " +
        AttributeProto::AttributeType_Name(a->type()) + ", expected " +
        AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type)));
  return *a;
}

int64_t NodeAttrs::Int(const std::string& name, int64_t def) const {
  return Has(name) ? Expect(name, AttributeProto::INT).i() : def;
}
float NodeAttrs::Float(const std::string& name, float def) const {
  return Has(name) ? Expect(name, AttributeProto::FLOAT).f() : def;
}
std::string NodeAttrs::Str(const std::string& name, const std::string& def) const {
  return Has(name) ? Expect(name, AttributeProto::STRING).s() : def;
}
std::vector<int64_t> NodeAttrs::Ints(const std::string& name,
                                     const std::vector<int64_t>& def) const {
  if (!Has(name)) return def;
  const auto& a = Expect(name, AttributeProto::INTS);
  return {a.ints().begin(), a.ints().end()};
}
std::vector<float> NodeAttrs::Floats(const std::string& name, const std::vector<float>& def) const {
  if (!Has(name)) return def;
  const auto& a = Expect(name, AttributeProto::FLOATS);
  return {a.floats().begin(), a.floats().end()};
}
std::vector<std::string> NodeAttrs::Strs(const std::string& name) const {
  if (!Has(name)) return {};
  const auto& a = Expect(name, AttributeProto::STRINGS);
  return {a.strings().begin(), a.strings().end()};
}
const onnx::TensorProto* NodeAttrs::Tensor(const std::string& name) const {
  return Has(name) ? &Expect(name, AttributeProto::TENSOR).t() : nullptr;
}

}  // namespace msc::frontend::onnx_import
