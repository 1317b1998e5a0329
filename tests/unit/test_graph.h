// Small MSCGraphs for the unit tests: nodes with one output each, built from a list.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "generator/ir/graph.h"

namespace msc::test {

/// One node of a test graph: one output "<name>:0" of `shape` / `dtype`.
struct N {
  std::string name, optype;
  std::vector<std::string> inputs;  // node names (their output 0)
  std::vector<int64_t> shape;
  std::string dtype = "float32";
  std::vector<std::pair<std::string, std::string>> attrs = {};  // MSC's strings
};

/// The graph as ir::MSCGraph; graph inputs are the `input` nodes, `outputs` node names. 4-D
/// tensors get layout NCHW.
inline ir::MSCGraph Build(const std::vector<N>& nodes, const std::vector<std::string>& outputs) {
  ir::MSCGraph g;
  g.name = "main";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const N& n = nodes[i];
    ir::MSCJoint j;
    j.index = static_cast<int64_t>(i);
    j.name = n.name;
    j.optype = n.optype;
    for (const auto& in : n.inputs) {
      j.inputs.push_back(in + ":0");
      if (std::find(j.parents.begin(), j.parents.end(), in) == j.parents.end())
        j.parents.push_back(in);
    }
    ir::MSCTensor t;
    t.name = n.name + ":0";
    t.dtype = n.dtype;
    t.shape = n.shape;
    t.layout = n.shape.size() == 4 ? "NCHW" : "";
    j.outputs = {t};
    j.attrs = n.attrs;
    if (n.optype == "input") g.inputs.push_back(t.name);
    g.nodes.push_back(j);
  }
  for (const auto& o : outputs) g.outputs.push_back(o + ":0");
  g.BuildIndex();
  return g;
}

}  // namespace msc::test
