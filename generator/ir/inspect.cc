#include "generator/ir/inspect.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace msc::ir {

namespace {

std::string TensorText(const MSCTensor& t) {
  std::ostringstream os;
  os << t.name;
  if (!t.alias.empty()) os << "(" << t.alias << ")";
  os << "<";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    std::string prim = i < t.prims.size() ? t.prims[i] : "";
    os << (prim.empty() ? std::to_string(t.shape[i]) : prim)
       << (i + 1 == t.shape.size() ? "|" : ",");
  }
  os << t.dtype;
  if (!t.layout.empty()) os << "|" << t.layout;
  os << ">";
  return os.str();
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
}

}  // namespace

std::string InspectGraph(const MSCGraph& g) {
  std::map<std::string, std::vector<std::string>> children, prim_children;
  for (const auto& n : g.nodes)
    for (const auto& p : n.parents) {
      auto& c = children[p];
      if (std::find(c.begin(), c.end(), n.name) == c.end()) c.push_back(n.name);
    }
  for (const auto& p : g.prims)
    for (const auto& parent : p.parents) prim_children[parent].push_back(p.name);
  std::ostringstream os;
  os << g.name << " <INPUTS: " << Join(g.inputs) << "| OUTPUTS: " << Join(g.outputs) << ">\n";
  for (const auto& p : g.prims) {
    os << "P_" << p.index << " " << p.name << " <PARENTS: " << Join(p.parents)
       << "| CHILDERN: " << Join(prim_children[p.name]) << ">\n";
    os << "  OPTYPE: " << p.optype;
    if (!p.attrs.empty()) {
      os << "\n  ATTRS: ";
      for (const auto& [k, v] : p.attrs) os << k << "=" << v << " ";
    }
    os << "\n\n";
  }
  for (const auto& n : g.nodes) {
    os << "ID_" << n.index << " " << n.name;
    if (!n.shared_ref.empty()) os << "(M: " << n.shared_ref << ")";
    os << " <PARENTS: " << Join(n.parents) << "| CHILDERN: " << Join(children[n.name]) << ">\n";
    if (!n.inputs.empty()) {
      os << "  IN: ";
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const MSCTensor* t = g.FindTensor(n.inputs[i]);
        os << (t ? TensorText(*t) : n.inputs[i]) << (i + 1 == n.inputs.size() ? "\n" : ",");
      }
    }
    os << "  OUT: ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << TensorText(n.outputs[i]) << (i + 1 == n.outputs.size() ? "" : ",");
    os << "\n  OPTYPE: " << n.optype << "\n";
    if (!n.attrs.empty()) {
      os << "  ATTRS: ";
      for (const auto& [k, v] : n.attrs) os << k << "=" << v << " ";
      os << "\n";
    }
    if (!n.weights.empty()) {
      os << "  WEIGHTS: ";
      for (const auto& [role, t] : n.weights) os << "\n    " << role << ": " << TensorText(t);
      os << "\n";
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace msc::ir
