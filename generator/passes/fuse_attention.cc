// Scaled-dot-product attention written out as matmul / scale / mask / softmax / matmul, rewritten
// as one msc.attention (see passes.h).
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "generator/common/error.h"
#include "generator/ir/attr_format.h"
#include "generator/passes/graph_edit.h"
#include "generator/passes/passes.h"
#include "generator/weights/values.h"

namespace msc::passes {
namespace {

using ir::MSCGraph;
using ir::MSCJoint;
using ir::MSCTensor;
using Shape = std::vector<int64_t>;

/// A mask fill that removes a key: -inf, or a value so far below any score (<= -1e30: float32's
/// lowest, what transformers' masks use) that s + fill rounds to fill, so adding it as an
/// additive mask gives what writing it over the score gives.
bool RemovesKey(double fill) { return fill <= -1e30; }

struct Index {
  const MSCGraph& graph;
  std::map<std::string, size_t> producer;  ///< tensor -> node index
  std::map<std::string, size_t> reads;     ///< tensor -> inputs reading it
  std::set<std::string> graph_outputs;
  const weights::TensorMap& weights;

  Index(const MSCGraph& g, const weights::TensorMap& w)
      : graph(g), graph_outputs(g.outputs.begin(), g.outputs.end()), weights(w) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& t : g.nodes[i].outputs) producer[t.name] = i;
      for (const auto& t : g.nodes[i].inputs) ++reads[t];
    }
  }

  /// The node producing `t` when it is an intermediate the fusion may absorb: its only output,
  /// read once, no graph output, the node not shared; else nullptr.
  const MSCJoint* Private(const std::string& t, size_t* at = nullptr) const {
    auto it = producer.find(t);
    if (it == producer.end()) return nullptr;
    const MSCJoint& n = graph.nodes[it->second];
    if (n.outputs.size() != 1 || reads.at(t) != 1 || graph_outputs.count(t) ||
        !n.shared_ref.empty())
      return nullptr;
    if (at) *at = it->second;
    return &n;
  }
  /// The values of `t` when a `constant` node with a bound weight of its dtype and shape makes it.
  std::optional<weights::Values> Constant(const std::string& t) const {
    auto it = producer.find(t);
    if (it == producer.end()) return std::nullopt;
    const MSCJoint& n = graph.nodes[it->second];
    const weights::Tensor* bound = BoundConstant(n, weights);
    if (!bound || n.outputs[0].Numel() < 0) return std::nullopt;
    return weights::ToValues(*bound);
  }
  /// A constant float holding one value.
  std::optional<double> Scalar(const std::string& t) const {
    std::optional<weights::Values> v = Constant(t);
    if (!v || v->is_int() || v->size() != 1) return std::nullopt;
    return v->f[0];
  }
  const MSCTensor& Tensor(const std::string& t) const {
    const MSCJoint& n = graph.nodes[producer.at(t)];
    for (const auto& o : n.outputs)
      if (o.name == t) return o;
    throw Error("tensor '" + t + "' has no producer output");  // producer map says otherwise
  }
};

/// `shape` (rank <= 4) broadcasts to `full` (rank 4) without growing: each dim 1 or equal.
bool BroadcastsTo(const Shape& shape, const Shape& full) {
  if (shape.size() > full.size()) return false;
  const size_t off = full.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1 && shape[d] != full[off + d]) return false;
  return true;
}

/// The causal_mask value whose excluded keys are exactly `masked` (a condition of `shape`, true
/// = key removed, broadcast over everything but its last two dims [Sq, Skv]), or "".
std::string CausalOf(const std::vector<bool>& masked, const Shape& shape, int64_t sq, int64_t skv) {
  if (shape.size() < 2 || shape[shape.size() - 2] != sq || shape.back() != skv) return "";
  for (size_t d = 0; d + 2 < shape.size(); ++d)
    if (shape[d] != 1) return "";
  if (sq > skv) return "";
  // relax's causal masks keep key j for query i when j <= i + offset: TopLeft offset 0,
  // BottomRight |Sq - Skv| (msc.attention in opdefs/msc.yaml).
  const int64_t offset = skv - sq;
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < skv; ++j)
      if (masked[static_cast<size_t>(i * skv + j)] != (j > i + offset)) return "";
  return offset == 0 ? "TopLeft" : "BottomRight";
}

bool OutDtypeIsOutput(const MSCJoint& n) {
  const std::string* d = n.FindAttr("out_dtype");
  return !d || d->empty() || *d == n.outputs[0].dtype;
}

}  // namespace

std::vector<Folded> FuseAttention(MSCGraph& graph, weights::TensorMap& weights) {
  std::vector<Folded> done;
  std::set<size_t> removed;
  std::set<std::string> taken;  // node and weight names, for the masks made here
  for (const auto& n : graph.nodes) taken.insert(n.name);
  for (const auto& [name, t] : weights) taken.insert(name);
  std::map<size_t, MSCJoint> replaced;  // where node -> the additive mask constant taking its place
  const Index ix(graph, weights);
  std::map<std::string, size_t> reads = ix.reads;  // less the reads of the absorbed nodes
  std::map<std::string, std::string> dropped;      // constant read by an absorbed node -> attention
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const MSCJoint& pv = graph.nodes[i];  // softmax(...) @ v
    if (pv.optype != "matmul" || pv.inputs.size() != 2 || pv.outputs.size() != 1 ||
        !OutDtypeIsOutput(pv))
      continue;
    const std::string& dtype = pv.outputs[0].dtype;
    if (dtype != "float32" && dtype != "float16") continue;
    size_t sm_at = 0;
    const MSCJoint* sm = ix.Private(pv.inputs[0], &sm_at);
    if (!sm || sm->optype != "nn.softmax" || sm->inputs.size() != 1) continue;
    int64_t axis = 0;
    try {
      axis = IntAttr(*sm, "axis", -1);
    } catch (const Error&) {
      continue;
    }
    if (axis != -1 && axis != 3) continue;
    std::vector<size_t> absorbed = {sm_at};
    // Walk from the softmax's input back to q @ k^T: an optional mask, then an optional scale.
    std::string t = sm->inputs[0];
    std::optional<std::string> mask;           // additive mask tensor (add)
    std::optional<weights::Values> condition;  // where's condition, true = key removed
    bool condition_inverted = false;
    Shape condition_shape;
    double fill = 0, scale = 1;
    std::vector<std::string> dropped_inputs;  // constants read by absorbed nodes
    size_t at = 0;
    const MSCJoint* n = ix.Private(t, &at);
    if (!n) continue;
    if (n->optype == "where" && n->inputs.size() == 3) {
      std::optional<double> f1 = ix.Scalar(n->inputs[1]), f2 = ix.Scalar(n->inputs[2]);
      condition = ix.Constant(n->inputs[0]);
      if (!condition) continue;
      if (f1 && RemovesKey(*f1)) {  // where(c, fill, s): c true removes the key
        fill = *f1;
        t = n->inputs[2];
      } else if (f2 && RemovesKey(*f2)) {  // where(c, s, fill): c false removes it
        fill = *f2;
        t = n->inputs[1];
        condition_inverted = true;
      } else {
        continue;
      }
      condition_shape = condition->shape;
      dropped_inputs = {n->inputs[0], n->inputs[condition_inverted ? 2 : 1]};
      absorbed.push_back(at);
      n = ix.Private(t, &at);
    } else if (n->optype == "add" && n->inputs.size() == 2) {
      // The score operand is the one a scale or q @ k^T makes, read only here.
      const MSCJoint* a = ix.Private(n->inputs[0]);
      const bool first =
          a && (a->optype == "matmul" || a->optype == "multiply" || a->optype == "divide");
      mask = n->inputs[first ? 1 : 0];
      t = n->inputs[first ? 0 : 1];
      absorbed.push_back(at);
      n = ix.Private(t, &at);
    }
    if (!n) continue;
    if ((n->optype == "multiply" || n->optype == "divide") && n->inputs.size() == 2) {
      std::optional<double> c1 = ix.Scalar(n->inputs[1]);
      std::optional<double> c0 = n->optype == "multiply" ? ix.Scalar(n->inputs[0]) : std::nullopt;
      const std::optional<double> c = c1 ? c1 : c0;
      if (!c || !std::isfinite(*c) || *c == 0) continue;
      scale = n->optype == "divide" ? 1.0 / *c : *c;
      dropped_inputs.push_back(n->inputs[c1 ? 1 : 0]);
      t = n->inputs[c1 ? 0 : 1];
      absorbed.push_back(at);
      n = ix.Private(t, &at);
    }
    if (!n || n->optype != "matmul" || n->inputs.size() != 2 || !OutDtypeIsOutput(*n)) continue;
    absorbed.push_back(at);
    const MSCJoint& qk = *n;
    // Shapes: q [B, N, Sq, H] @ k^T [B, N, H, Skv] -> [B, N, Sq, Skv]; softmax(.) @ v [B, N, Skv,
    // Hv] -> [B, N, Sq, Hv]; every step of the scores keeps their shape and dtype.
    const MSCTensor &q = ix.Tensor(qk.inputs[0]), &kt = ix.Tensor(qk.inputs[1]),
                    &v = ix.Tensor(pv.inputs[1]);
    const Shape& s = qk.outputs[0].shape;
    const Shape& o = pv.outputs[0].shape;
    if (q.shape.size() != 4 || kt.shape.size() != 4 || v.shape.size() != 4 || s.size() != 4 ||
        o.size() != 4 || q.Numel() <= 0 || kt.Numel() <= 0 || v.Numel() <= 0)
      continue;
    const int64_t B = q.shape[0], N = q.shape[1], Sq = q.shape[2], H = q.shape[3];
    const int64_t Skv = kt.shape[3], Hv = v.shape[3];
    if (kt.shape != Shape{B, N, H, Skv} || v.shape != Shape{B, N, Skv, Hv} ||
        s != Shape{B, N, Sq, Skv} || o != Shape{B, N, Sq, Hv})
      continue;
    bool same = q.dtype == dtype && kt.dtype == dtype && v.dtype == dtype;
    for (size_t k : absorbed)
      same =
          same && graph.nodes[k].outputs[0].dtype == dtype && graph.nodes[k].outputs[0].shape == s;
    if (!same) continue;
    if (mask) {
      const MSCTensor& m = ix.Tensor(*mask);
      if (m.dtype != dtype || !BroadcastsTo(m.shape, s)) continue;
    }
    std::string causal;
    std::optional<weights::Values> additive;
    if (condition) {
      if (!BroadcastsTo(condition_shape, s)) continue;
      std::vector<bool> masked(static_cast<size_t>(condition->size()));
      for (int64_t k = 0; k < condition->size(); ++k)
        masked[static_cast<size_t>(k)] = (condition->at(k) != 0) != condition_inverted;
      causal = CausalOf(masked, condition_shape, Sq, Skv);
      if (causal.empty()) {
        additive = weights::ValuesLike(dtype, condition_shape);
        for (int64_t k = 0; k < additive->size(); ++k)
          additive->f[static_cast<size_t>(k)] = masked[static_cast<size_t>(k)] ? fill : 0.0;
      }
    }

    // The attention takes the place of softmax(.) @ v (its name and output); the other nodes go.
    MSCJoint& att = graph.nodes[i];
    std::vector<std::string> inputs = {qk.inputs[0], qk.inputs[1], att.inputs[1]};
    if (mask) inputs.push_back(*mask);
    if (additive) {
      // A constant in the where's place holds the mask: 0 for a kept key, the fill for a removed.
      const size_t where_at = absorbed[1];
      MSCJoint c;
      c.name = UniqueName(graph.nodes[where_at].name + ".mask", taken);
      c.optype = "constant";
      MSCTensor out = graph.nodes[where_at].outputs[0];
      out.name = c.name + ":0";
      out.shape = condition_shape;
      out.prims.clear();
      out.layout = "";
      out.dtype = dtype;
      MSCTensor w = out;
      w.name = UniqueName(c.name, taken);
      w.alias = "";
      c.outputs = {out};
      c.weights = {{"const", w}};
      weights[w.name] = weights::FromValues(*additive);
      inputs.push_back(out.name);
      replaced.emplace(where_at, std::move(c));
      absorbed.erase(absorbed.begin() + 1);
      done.push_back({"fuse_attention", graph.nodes[where_at].name, att.name});
    }
    for (size_t k : absorbed) {
      removed.insert(k);
      done.push_back({"fuse_attention", graph.nodes[k].name, att.name});
    }
    for (const std::string& in : dropped_inputs) {
      --reads[in];
      dropped.emplace(in, att.name);
    }
    // q as relax's [B, Sq, N, H] is q [B, N, Sq, H] permuted by [0, 2, 1, 3]; k^T [B, N, H, Skv]
    // by [0, 3, 1, 2]; v likewise [0, 2, 1, 3]; the result [B, Sq, N, Hv] back to [B, N, Sq, Hv]
    // by [0, 2, 1, 3] (fold_transpose then folds the head transposes around it).
    att.optype = "msc.attention";
    att.inputs = inputs;
    att.parents = ir::ParentsOf(att.inputs);
    att.weights.clear();
    att.attrs = {{"axes", ir::AttrInts({0, 2, 1, 3})},   {"axes_1", ir::AttrInts({0, 3, 1, 2})},
                 {"axes_2", ir::AttrInts({0, 2, 1, 3})}, {"axes_3", ir::AttrInts({0, 2, 1, 3})},
                 {"scale", ir::AttrDouble(scale)},       {"causal_mask", causal}};
  }
  if (done.empty()) return done;
  // Constants only absorbed nodes read (the condition, the fill, the scale) go with them.
  for (const auto& [t, into] : dropped) {
    const size_t p = ix.producer.at(t);
    const MSCJoint& c = graph.nodes[p];
    if (reads[t] == 0 && !ix.graph_outputs.count(t) && c.shared_ref.empty() &&
        c.optype == "constant" && removed.insert(p).second)
      done.push_back({"fuse_attention", c.name, into});
  }
  for (auto& [k, c] : replaced) graph.nodes[k] = std::move(c);
  RemoveNodes(graph, removed, {}, weights);
  return done;
}

}  // namespace msc::passes
