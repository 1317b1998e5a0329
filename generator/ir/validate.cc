#include "generator/ir/validate.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "generator/common/error.h"

namespace msc::ir {

bool IsKnownDtype(const std::string& dtype) { return MSCTensor::DtypeBytes(dtype) > 0; }

namespace {

class Problems {
 public:
  explicit Problems(const MSCGraph& g) : graph_(g) {}
  void Add(const std::string& where, const std::string& what) {
    if (lines_.size() < kMaxReported) lines_.push_back(where + ": " + what);
    ++count_;
  }
  void ThrowIfAny() const {
    if (count_ == 0) return;
    std::ostringstream os;
    os << graph_.source << ": invalid MSCGraph (" << count_
       << (count_ == 1 ? " problem" : " problems") << "):";
    for (const auto& l : lines_) os << "\n  " << l;
    if (count_ > lines_.size()) os << "\n  ... and " << (count_ - lines_.size()) << " more";
    throw Error(os.str());
  }

 private:
  static constexpr size_t kMaxReported = 50;
  const MSCGraph& graph_;
  std::vector<std::string> lines_;
  size_t count_ = 0;
};

/// "nodes[3].attrs.axis (node \"relu\")": the JSON path first, then the node name.
struct NodeWhere {
  size_t i;
  const MSCJoint& n;
  std::string operator()(const std::string& sub = "") const {
    return "nodes[" + std::to_string(i) + "]" + sub + " (node " + Json(n.name).dump() + ")";
  }
};

void CheckTensor(Problems& p, const NodeWhere& at, const std::string& sub, const MSCTensor& t) {
  if (!IsKnownDtype(t.dtype))
    p.Add(at(sub), "unknown dtype " + Json(t.dtype).dump() +
                       " (expected float32, float16, bfloat16, float64, int8, int16, int32, int64, "
                       "uint8 or bool)");
  for (int64_t d : t.shape)
    if (d < -1)
      p.Add(at(sub + ".shape"), "dims must be >= 0 or -1 (dynamic), got " + std::to_string(d));
  const int64_t numel = t.Numel();
  int64_t nbytes = 0;
  if (numel == -2 ||
      (numel > 0 && __builtin_mul_overflow(
                        numel, std::max<int64_t>(1, MSCTensor::DtypeBytes(t.dtype)), &nbytes))) {
    p.Add(at(sub + ".shape"), "shape " + Json(t.shape).dump() +
                                  " has more elements or bytes than a 64-bit size can count");
  }
  if (!t.prims.empty() && t.prims.size() != t.shape.size())
    p.Add(at(sub + ".prims"), "expected one prim per dim (" + std::to_string(t.shape.size()) +
                                  "), got " + std::to_string(t.prims.size()));
}

void CheckAgainstOpDef(Problems& p, const NodeWhere& at, const MSCJoint& n,
                       const opdef::OpDef& def) {
  int64_t n_inputs = static_cast<int64_t>(n.inputs.size());
  // Non-variadic ops take min_inputs..inputs.size() inputs (the trailing ones are optional,
  // e.g. msc.attention's mask); variadic ones at least min_inputs.
  const int64_t max_inputs = static_cast<int64_t>(def.inputs.size());
  if (def.variadic ? n_inputs < def.min_inputs
                   : (n_inputs < def.min_inputs || n_inputs > max_inputs)) {
    std::string expected = def.variadic ? "at least " + std::to_string(def.min_inputs)
                           : def.min_inputs == max_inputs ? std::to_string(max_inputs)
                                                          : std::to_string(def.min_inputs) +
                                                                " to " + std::to_string(max_inputs);
    p.Add(at(), "optype '" + n.optype + "' takes " + expected + " tensor input(s), got " +
                    std::to_string(n_inputs));
  }
  for (const auto& w : def.weights)
    if (!w.optional && !n.FindWeight(w.role))
      p.Add(at(".weights"),
            "missing weight '" + w.role + "' required by optype '" + n.optype + "'");
  for (const auto& [role, t] : n.weights) {
    const opdef::WeightDef* w = def.FindWeight(role);
    if (!w) {
      std::string valid;
      for (const auto& wd : def.weights) valid += (valid.empty() ? "" : ", ") + wd.role;
      p.Add(at(".weights." + role), "unknown weight role for optype '" + n.optype + "' (expected " +
                                        (valid.empty() ? "none" : valid) + ")");
    }
  }
  for (const auto& a : def.attrs) {
    const std::string* raw = n.FindAttr(a.name);
    if (!raw) {
      if (a.required)
        p.Add(at(".attrs"),
              "missing required attr '" + a.name + "' (" + AttrTypeName(a.type) + ")");
      continue;
    }
    try {
      Json v = opdef::ParseAttr(a, *raw);
      std::string bad = opdef::CheckAttr(a, v);
      if (!bad.empty()) p.Add(at(".attrs." + a.name), bad);
    } catch (const Error& e) {
      p.Add(at(".attrs." + a.name), std::string(e.what()) + " (type " + AttrTypeName(a.type) + ")");
    }
  }
}

}  // namespace

void Validate(const MSCGraph& graph, const opdef::OpDefRegistry* opdefs) {
  Problems p(graph);
  std::map<std::string, size_t> position;  // node name -> first position
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const MSCJoint& n = graph.nodes[i];
    if (!position.emplace(n.name, i).second)
      p.Add(NodeWhere{i, n}(), "duplicate node name (first defined at nodes[" +
                                   std::to_string(position[n.name]) + "])");
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const MSCJoint& n = graph.nodes[i];
    const NodeWhere at{i, n};
    if (n.index != static_cast<int64_t>(i))
      p.Add(at(".index"), "expected " + std::to_string(i) + " (the node's position), got " +
                              std::to_string(n.index));
    if (n.outputs.empty() && n.optype != "tuple")
      p.Add(at(".outputs"), "a node needs at least one output");
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const std::string tw = ".outputs[" + std::to_string(k) + "]";
      const std::string expected = n.name + ":" + std::to_string(k);
      if (n.outputs[k].name != expected)
        p.Add(at(tw + ".name"),
              "expected " + Json(expected).dump() + ", got " + Json(n.outputs[k].name).dump());
      CheckTensor(p, at, tw, n.outputs[k]);
    }
    for (const auto& [role, t] : n.weights) CheckTensor(p, at, ".weights." + role, t);

    std::vector<std::string> producers;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string iw = at(".inputs[" + std::to_string(k) + "]");
      const std::string& in = n.inputs[k];
      auto split = SplitTensorName(in);
      if (!split) {
        p.Add(iw, "expected \"<node>:<index>\", got " + Json(in).dump());
        continue;
      }
      auto pos = position.find(split->first);
      if (pos == position.end()) {
        p.Add(iw, Json(in).dump() + " names no node output (no node " + Json(split->first).dump() +
                      ")");
        continue;
      }
      if (std::find(producers.begin(), producers.end(), split->first) == producers.end())
        producers.push_back(split->first);
      if (pos->second >= i) {
        p.Add(iw, Json(in).dump() + " is produced by nodes[" + std::to_string(pos->second) +
                      "], not an earlier node: the nodes are not topologically ordered" +
                      (pos->second == i ? " (a node cannot consume its own output)"
                                        : " or form a cycle"));
        continue;
      }
      const MSCJoint& prod = graph.nodes[pos->second];
      if (split->second >= static_cast<int64_t>(prod.outputs.size()))
        p.Add(iw, Json(in).dump() + ": node " + Json(prod.name).dump() + " has only " +
                      std::to_string(prod.outputs.size()) + " output(s)");
      else if (prod.outputs[split->second].name != in)  // "x:00" (found by tests/fuzz/fuzz_graph)
        p.Add(iw, Json(in).dump() + " names no node output (output " +
                      std::to_string(split->second) + " of node " + Json(prod.name).dump() +
                      " is " + Json(prod.outputs[split->second].name).dump() + ")");
    }
    if (producers != n.parents) {
      auto list = [](const std::vector<std::string>& v) { return Json(v).dump(); };
      p.Add(at(".parents"), "expected the distinct producers of inputs in first-use order " +
                                list(producers) + ", got " + list(n.parents));
    }
    if (n.optype == "input" && !n.inputs.empty()) p.Add(at(), "an input node has no inputs");
    if (opdefs) {
      if (const opdef::OpDef* def = opdefs->Find(n.optype)) {
        CheckAgainstOpDef(p, at, n, *def);
      } else {
        p.Add(at(".optype"),
              "unknown optype " + Json(n.optype).dump() + " (no opdef in opdefs/*.yaml)");
      }
    }
  }
  auto check_io = [&](const std::vector<std::string>& names, const char* key) {
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string w = std::string(key) + "[" + std::to_string(k) + "]";
      auto split = SplitTensorName(names[k]);
      const MSCJoint* node = split ? graph.FindNode(split->first) : nullptr;
      if (!node || split->second >= static_cast<int64_t>(node->outputs.size())) {
        p.Add(w, Json(names[k]).dump() + " names no node output");
        continue;
      }
      if (node->outputs[split->second].name != names[k]) {  // "x:00" (found by fuzz_graph)
        p.Add(w, Json(names[k]).dump() + " names no node output (output " +
                     std::to_string(split->second) + " of node " + Json(node->name).dump() +
                     " is " + Json(node->outputs[split->second].name).dump() + ")");
        continue;
      }
      if (std::string(key) == "inputs" && node->optype != "input")
        p.Add(w, Json(names[k]).dump() + " is produced by a '" + node->optype +
                     "' node, expected an 'input' node");
    }
  };
  check_io(graph.inputs, "inputs");
  check_io(graph.outputs, "outputs");
  if (graph.outputs.empty()) p.Add("outputs", "a graph needs at least one output");
  p.ThrowIfAny();
}

}  // namespace msc::ir
