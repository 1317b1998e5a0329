#include "generator/ir/specialize.h"

#include <limits>
#include <optional>

#include "generator/common/error.h"

namespace msc::ir {

namespace {

std::optional<int64_t> ParseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t i = (s[0] == '-') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k)
    if (s[k] < '0' || s[k] > '9') return std::nullopt;
  try {
    return std::stoll(s);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string Quote(const std::string& s) { return Json(s).dump(); }

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// Evaluates one prim from its parents' values.
int64_t EvalPrim(const MSCPrim& p, const std::vector<int64_t>& args, const std::string& where) {
  auto need = [&](size_t n) {
    if (args.size() != n)
      throw Error(where + ": optype " + Quote(p.optype) + " needs " + std::to_string(n) +
                  " parents, has " + std::to_string(args.size()));
  };
  const std::string& op = p.optype;
  if (op == "if_then_else") {
    need(3);
    return args[0] != 0 ? args[1] : args[2];
  }
  need(2);
  const int64_t a = args[0], b = args[1];
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "EQ") return a == b;
  if (op == "NE") return a != b;
  if (op == "LT") return a < b;
  if (op == "LE") return a <= b;
  if (op == "GT") return a > b;
  if (op == "GE") return a >= b;
  if (op == "Div" || op == "Divide" || op == "Mod" || op == "FloorDiv" || op == "FloorMod") {
    if (b == 0) throw Error(where + ": division by zero (" + std::to_string(a) + " / 0)");
    if (op == "Div" || op == "Divide") return a / b;  // TIR integer Div truncates
    if (op == "Mod") return a % b;
    if (op == "FloorDiv") return FloorDiv(a, b);
    return a - FloorDiv(a, b) * b;
  }
  throw Error(where + ": optype " + Quote(op) +
              " cannot be evaluated (supported: shape, Int, Add, Sub, Mul, Div, FloorDiv, Mod, "
              "FloorMod, Max, Min, EQ, NE, LT, LE, GT, GE, if_then_else)");
}

}  // namespace

std::pair<std::string, std::vector<int64_t>> ParseShapeArg(const std::string& arg) {
  const std::string usage =
      "--shape " + Quote(arg) + ": expected NAME=D0,D1,... (e.g. inp_0=1,3,224,224)";
  auto eq = arg.rfind('=');
  if (eq == std::string::npos || eq == 0) throw Error(usage);
  std::vector<int64_t> dims;
  std::string rest = arg.substr(eq + 1);
  if (!rest.empty()) {
    size_t start = 0;
    while (true) {
      size_t comma = rest.find(',', start);
      std::string item = rest.substr(start, comma == std::string::npos ? rest.npos : comma - start);
      auto v = ParseInt(item);
      if (!v || *v < 0) throw Error(usage + ", got dim " + Quote(item));
      dims.push_back(*v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return {arg.substr(0, eq), dims};
}

void SpecializeShapes(MSCGraph& graph,
                      const std::map<std::string, std::vector<int64_t>>& input_shapes) {
  const std::string& file = graph.source;
  std::map<std::string, int64_t> values;  // prim name -> value
  auto bind = [&](const std::string& prim, int64_t v, const std::string& why) {
    auto [it, inserted] = values.emplace(prim, v);
    if (!inserted && it->second != v)
      throw Error(file + ": prim " + Quote(prim) + " is " + std::to_string(it->second) + " but " +
                  why + " makes it " + std::to_string(v));
  };

  // 1. Bind the given input shapes.
  for (const auto& [key, dims] : input_shapes) {
    MSCTensor* t = nullptr;
    for (auto& node : graph.nodes) {
      if (node.optype != "input" || node.outputs.empty()) continue;
      MSCTensor& out = node.outputs[0];
      if (out.name == key || node.name == key || (!out.alias.empty() && out.alias == key)) t = &out;
    }
    if (!t) {
      std::string names;
      for (const auto& in : graph.inputs) names += (names.empty() ? "" : ", ") + Quote(in);
      throw Error(file + ": --shape " + Quote(key) + " names no graph input (inputs: " + names +
                  ", or their aliases/node names)");
    }
    const std::string what = "--shape " + Quote(key) + " " + DimsText(dims);
    if (dims.size() != t->shape.size())
      throw Error(file + ": " + what + " has rank " + std::to_string(dims.size()) + ", input " +
                  Quote(t->name) + " has rank " + std::to_string(t->shape.size()));
    for (size_t d = 0; d < dims.size(); ++d) {
      if (t->shape[d] >= 0) {
        if (t->shape[d] != dims[d])
          throw Error(file + ": " + what + ": axis " + std::to_string(d) + " of input " +
                      Quote(t->name) + " is static " + std::to_string(t->shape[d]));
      } else if (d < t->prims.size() && !ParseInt(t->prims[d])) {
        bind(t->prims[d], dims[d], what);
      }
    }
    t->shape = dims;
    t->prims.clear();
  }

  // 2. Evaluate the prim DAG in order.
  for (const MSCPrim& p : graph.prims) {
    const std::string where = file + ": prims[" + std::to_string(p.index) + "] " + Quote(p.name);
    std::optional<int64_t> v;
    auto attr = [&](const std::string& key) -> std::string {
      for (const auto& kv : p.attrs)
        if (kv.first == key) return kv.second;
      throw Error(where + ": optype " + Quote(p.optype) + " needs attr " + Quote(key));
    };
    if (p.optype == "shape") {
      const MSCJoint* producer = graph.FindNode(attr("producer"));
      auto out_idx = ParseInt(attr("out_idx")), dim = ParseInt(attr("dim"));
      if (!producer || !out_idx || !dim || *out_idx < 0 ||
          *out_idx >= static_cast<int64_t>(producer->outputs.size()))
        throw Error(where + ": producer " + Quote(attr("producer")) + " output " + attr("out_idx") +
                    " does not exist");
      const MSCTensor& t = producer->outputs[*out_idx];
      if (*dim < 0 || *dim >= static_cast<int64_t>(t.shape.size()))
        throw Error(where + ": dim " + attr("dim") + " is out of range for " + Quote(t.name));
      if (t.shape[*dim] >= 0) v = t.shape[*dim];
    } else if (p.optype == "Int") {
      v = ParseInt(attr("value"));
      if (!v) throw Error(where + ": Int value " + Quote(attr("value")) + " is not an integer");
    } else {
      std::vector<int64_t> args;
      bool known = true;
      for (const auto& parent : p.parents) {
        auto lit = ParseInt(parent);
        auto it = values.find(parent);
        if (lit) {
          args.push_back(*lit);
        } else if (it != values.end()) {
          args.push_back(it->second);
        } else {
          known = false;
        }
      }
      if (known) v = EvalPrim(p, args, where);
    }
    if (v) bind(p.name, *v, where);
  }

  // 3. Substitute every dynamic dim.
  std::vector<std::string> unresolved;
  auto fix = [&](MSCTensor& t, const std::string& owner) {
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.shape[d] >= 0) continue;
      const std::string prim = d < t.prims.size() ? t.prims[d] : "";
      auto lit = ParseInt(prim);
      auto it = values.find(prim);
      if (lit) {
        t.shape[d] = *lit;
      } else if (it != values.end()) {
        t.shape[d] = it->second;
      } else {
        unresolved.push_back(Quote(t.name) + " (" + owner + ") axis " + std::to_string(d) +
                             " = prim " + (prim.empty() ? "(unnamed)" : Quote(prim)));
        continue;
      }
      if (t.shape[d] < 0)
        throw Error(file + ": tensor " + Quote(t.name) + " axis " + std::to_string(d) +
                    " evaluates to " + std::to_string(t.shape[d]));
    }
    t.prims.clear();
  };
  for (auto& node : graph.nodes) {
    for (auto& t : node.outputs) fix(t, "node " + Quote(node.name));
    for (auto& [role, w] : node.weights) fix(w, "weight " + role + " of node " + Quote(node.name));
  }
  if (!unresolved.empty()) {
    std::string dyn_inputs;
    for (const auto& node : graph.nodes)
      if (node.optype == "input" && !node.outputs.empty() && node.outputs[0].Numel() < 0)
        dyn_inputs += (dyn_inputs.empty() ? "" : ", ") + Quote(node.outputs[0].name);
    std::string msg =
        file + ": " + std::to_string(unresolved.size()) + " dynamic dim(s) have no value";
    if (!dyn_inputs.empty()) msg += " (give --shape for input(s) " + dyn_inputs + ")";
    msg += ":";
    for (size_t i = 0; i < unresolved.size() && i < 10; ++i) msg += "\n  " + unresolved[i];
    if (unresolved.size() > 10)
      msg += "\n  ... and " + std::to_string(unresolved.size() - 10) + " more";
    throw Error(msg);
  }
  graph.prims.clear();
}

}  // namespace msc::ir
