#include "generator/emit/context.h"

#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "generator/common/error.h"
#include "generator/emit/naming.h"

namespace msc::emit {

namespace {

using tmpl::Value;
using tmpl::ValueDict;
using tmpl::ValueList;

// ---- native values ----

/// Every key the context uses, made once (a native string carries its hash).
struct Keys {
  Value name = Value::Str("name");
  Value alias = Value::Str("alias");
  Value dtype = Value::Str("dtype");
  Value layout = Value::Str("layout");
  Value shape = Value::Str("shape");
  Value prims = Value::Str("prims");
  Value ndim = Value::Str("ndim");
  Value numel = Value::Str("numel");
  Value nbytes = Value::Str("nbytes");
  Value dims = Value::Str("dims");
  Value is_weight = Value::Str("is_weight");
  Value is_graph_input = Value::Str("is_graph_input");
  Value is_graph_output = Value::Str("is_graph_output");
  Value ident = Value::Str("ident");
  Value producer = Value::Str("producer");
  Value producer_ident = Value::Str("producer_ident");
  Value out_idx = Value::Str("out_idx");
  Value consumers = Value::Str("consumers");
  Value offset = Value::Str("offset");
  Value key = Value::Str("key");
  Value role = Value::Str("role");
  Value index = Value::Str("index");
  Value axis = Value::Str("axis");
  Value in_place = Value::Str("in_place");
  Value optype = Value::Str("optype");
  Value ns = Value::Str("ns");
  Value op = Value::Str("op");
  Value summary = Value::Str("summary");
  Value traits = Value::Str("traits");
  Value parents = Value::Str("parents");
  Value shared_ref = Value::Str("shared_ref");
  Value inputs = Value::Str("inputs");
  Value outputs = Value::Str("outputs");
  Value is_output = Value::Str("is_output");
  Value attrs = Value::Str("attrs");
  Value attrs_raw = Value::Str("attrs_raw");
  Value weights = Value::Str("weights");
  Value fused_epilogue = Value::Str("fused_epilogue");
  Value fused_residual = Value::Str("fused_residual");
  Value fused_into = Value::Str("fused_into");
  Value fused_norm = Value::Str("fused_norm");
  Value keeps_input = Value::Str("keeps_input");
  Value fused_chain = Value::Str("fused_chain");
  Value fused_view = Value::Str("fused_view");
  Value input_views = Value::Str("input_views");
  Value base = Value::Str("base");
  Value strides = Value::Str("strides");
  Value steps = Value::Str("steps");
  Value operands = Value::Str("operands");
  Value kind = Value::Str("kind");
  Value code = Value::Str("code");
  Value folded = Value::Str("folded");
  Value graph = Value::Str("graph");
  Value nodes = Value::Str("nodes");
  Value optypes = Value::Str("optypes");
  Value dtypes = Value::Str("dtypes");
  Value memory = Value::Str("memory");
  Value alignment = Value::Str("alignment");
  Value peak_bytes = Value::Str("peak_bytes");
  Value naive_bytes = Value::Str("naive_bytes");
  Value lower_bound_bytes = Value::Str("lower_bound_bytes");
  Value tensors = Value::Str("tensors");
};

bool SameKey(const Value& a, const Value& b) {
  return a.str_hash() == b.str_hash() && tmpl::SameText(a.s(), b.s());
}

/// Sets `key` in an object's entries as JSON's operator[] does: replaced in place when present,
/// appended otherwise.
void Set(ValueDict& d, const Value& key, Value v) {
  for (auto& e : d)
    if (SameKey(e.first, key)) {
      e.second = std::move(v);
      return;
    }
  d.emplace_back(key, std::move(v));
}

Value StrList(const std::vector<std::string>& v) {
  ValueList l;
  l.reserve(v.size());
  for (const auto& s : v) l.push_back(Value::Str(s));
  return Value::List(std::move(l));
}

Value IntList(const std::vector<int64_t>& v) {
  ValueList l;
  l.reserve(v.size());
  for (int64_t x : v) l.push_back(Value::Int(x));
  return Value::List(std::move(l));
}

/// One tensor while the context is built: its graph facts, then its object.
struct TensorRec {
  const ir::MSCTensor* t = nullptr;
  std::string ident;
  const std::string* producer = nullptr;
  const std::string* producer_ident = nullptr;
  size_t out_idx = 0;
  bool weight = false;
  const std::string* role = nullptr;
  bool graph_input = false, graph_output = false;
  int64_t nbytes = 0;
  const std::vector<const std::string*>* consumers = nullptr;  // node outputs: their readers
  Value value;
};

/// The per-optype facts every node of that optype shares.
struct OptypeInfo {
  const opdef::OpDef* def = nullptr;
  Value optype, ns, op, summary, traits;
  std::vector<Value> defaults;  // per def->attrs entry: its default, as a value
};

}  // namespace

Context::~Context() = default;

Context::Context(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                 const BackendSpec& spec, const analyses::GraphAnalyses& analyses,
                 const std::vector<passes::Folded>* folded) {
  const Keys K;
  const analyses::Dataflow& dataflow = analyses.dataflow;
  const std::vector<analyses::NodeFusion>& fusion = analyses.fusion.nodes;
  const analyses::MemoryPlan* plan = analyses.memory ? &*analyses.memory : nullptr;
  IdentifierPool idents(
      std::set<std::string>(spec.reserved_names.begin(), spec.reserved_names.end()));
  const std::string graph_ident = idents.Make(graph.name, "graph");
  const size_t n_nodes = graph.nodes.size();

  // 1. Records: identifiers (in the order the pool hands them out: graph, then per node its own,
  // its multi-output tensors', its new weights'; prims last), tensors.
  std::vector<TensorRec> tensors;  // node outputs, then weights appended as found
  std::vector<std::vector<size_t>> outs(n_nodes), ins(n_nodes);
  std::vector<std::vector<std::pair<const std::string*, size_t>>> node_weights(n_nodes);
  std::vector<size_t> weight_list;
  std::vector<std::string> node_idents(n_nodes);
  std::unordered_map<std::string_view, size_t> weight_by_name;
  size_t n_tensors = 0;
  for (const auto& n : graph.nodes) n_tensors += n.outputs.size() + n.weights.size();
  tensors.reserve(n_tensors);  // stable: records point into each other only by index
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    node_idents[i] = idents.Make(n.name, "node");
    for (const analyses::TensorRef& in : dataflow.inputs(i))
      ins[i].push_back(outs[in.node][in.out]);
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      TensorRec r;
      r.t = &n.outputs[k];
      // Multi-output tensors get their own pool identifiers, so they cannot collide with a node
      // that is literally named "<node>_<k>".
      r.ident = n.outputs.size() == 1 ? node_idents[i]
                                      : idents.Make(node_idents[i] + "_" + std::to_string(k));
      r.producer = &n.name;
      r.producer_ident = &node_idents[i];
      r.out_idx = k;
      r.graph_input = dataflow.is_graph_input(r.t->name);
      r.graph_output = dataflow.is_graph_output(r.t->name);
      r.consumers = &dataflow.consumers(i, k);
      outs[i].push_back(tensors.size());
      tensors.push_back(std::move(r));
    }
    for (const auto& [role, w] : n.weights) {
      auto it = weight_by_name.find(w.name);
      if (it == weight_by_name.end()) {
        TensorRec r;
        r.t = &w;
        r.ident = idents.Make(w.alias.empty() ? w.name : w.alias, "weight");
        r.weight = true;
        r.role = &role;
        r.producer = &n.name;
        r.producer_ident = &node_idents[i];
        it = weight_by_name.emplace(w.name, tensors.size()).first;
        weight_list.push_back(tensors.size());
        tensors.push_back(std::move(r));
      }
      node_weights[i].emplace_back(&role, it->second);
    }
  }
  std::vector<std::string> prim_idents;
  for (const auto& p : graph.prims) prim_idents.push_back(idents.Make(p.name, "prim"));
  for (auto& r : tensors) r.nbytes = analyses::TensorBytes(*r.t);

  // 2. The analyses' fusion chains (analyses::PlanFusion), by chain index.
  const std::vector<analyses::Chain>& chains = analyses.fusion.chains;
  // Typed attrs, parsed once per distinct (opdef attr, string); per-optype facts once per optype.
  std::unordered_map<std::string_view, OptypeInfo> optype_info;
  std::map<std::pair<const opdef::AttrDef*, std::string_view>, Value> parsed;
  auto info_for = [&](const std::string& optype) -> OptypeInfo& {
    auto it = optype_info.find(optype);
    if (it != optype_info.end()) return it->second;
    OptypeInfo info;
    info.def = opdefs.Find(optype);
    const size_t dot = optype.find('.');
    info.optype = Value::Str(optype);
    info.ns = Value::Str(dot == std::string::npos ? "" : optype.substr(0, dot));
    info.op = Value::Str(dot == std::string::npos ? optype : optype.substr(dot + 1));
    info.summary = Value::Str(info.def ? info.def->summary : "");
    info.traits = StrList(info.def ? info.def->traits : std::vector<std::string>{});
    if (info.def)
      for (const auto& a : info.def->attrs)
        info.defaults.push_back(tmpl::FromJsonDeep(a.default_value));
    return optype_info.emplace(optype, std::move(info)).first->second;
  };
  std::vector<Value> node_attrs(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    const OptypeInfo& info = info_for(n.optype);
    ValueDict attrs;
    if (info.def) {
      for (size_t a = 0; a < info.def->attrs.size(); ++a) {
        const opdef::AttrDef& def = info.def->attrs[a];
        const std::string* raw = n.FindAttr(def.name);
        if (!raw) {
          Set(attrs, Value::Str(def.name), info.defaults[a]);
          continue;
        }
        auto hit = parsed.find({&def, *raw});
        if (hit == parsed.end()) {
          Value v;
          try {
            v = tmpl::FromJsonDeep(opdef::ParseAttr(def, *raw));
          } catch (const Error& e) {
            throw Error(graph.source + ": node " + Json(n.name).dump() + " attr '" + def.name +
                        "': " + e.what());
          }
          hit = parsed.emplace(std::make_pair(&def, std::string_view(*raw)), std::move(v)).first;
        }
        Set(attrs, Value::Str(def.name), hit->second);
      }
    }
    for (const auto& [k, v] : n.attrs) {
      bool known = false;
      for (const auto& e : attrs) known = known || e.first.s() == k;
      if (!known) attrs.emplace_back(Value::Str(k), Value::Str(v));  // passed through as MSC's
    }
    node_attrs[i] = Value::Dict(std::move(attrs));
  }
  // 3. Values: every tensor object once.
  std::vector<Value> letter(128);  // dims keys
  for (auto& r : tensors) {
    const ir::MSCTensor& t = *r.t;
    ValueDict d;
    d.reserve(24);
    d.emplace_back(K.name, Value::Str(t.name));
    d.emplace_back(K.alias, Value::Str(t.alias));
    d.emplace_back(K.dtype, Value::Str(t.dtype));
    d.emplace_back(K.layout, Value::Str(t.layout));
    d.emplace_back(K.shape, IntList(t.shape));
    d.emplace_back(K.prims, StrList(t.prims));
    const bool extra = !t.extra.empty();
    for (auto it = t.extra.begin(); it != t.extra.end(); ++it)
      d.emplace_back(Value::Str(it.key()), tmpl::FromJsonDeep(it.value()));
    // With extra keys a later key may already be there: JSON's operator[] replaced it in place.
    auto put = [&](const Value& key, Value v) {
      if (extra)
        Set(d, key, std::move(v));
      else
        d.emplace_back(key, std::move(v));
    };
    put(K.ndim, Value::Int(static_cast<int64_t>(t.shape.size())));
    const int64_t numel = t.Numel();
    put(K.numel, Value::Int(numel));
    put(K.nbytes, Value::Int(r.nbytes));
    ValueDict dims;
    bool distinct = t.layout.size() == t.shape.size();
    for (size_t a = 0; distinct && a < t.layout.size(); ++a)
      for (size_t b = 0; b < a; ++b) distinct = distinct && t.layout[a] != t.layout[b];
    if (distinct)
      for (size_t a = 0; a < t.shape.size(); ++a) {
        const unsigned char c = static_cast<unsigned char>(t.layout[a]);
        Value key = c < 128 ? letter[c] : Value();
        if (c >= 128 || key.is_none()) {
          key = Value::Str(std::string(1, t.layout[a]));
          if (c < 128) letter[c] = key;
        }
        dims.emplace_back(std::move(key), Value::Int(t.shape[a]));
      }
    put(K.dims, Value::Dict(std::move(dims)));
    put(K.is_weight, Value::Bool(r.weight));
    put(K.is_graph_input, Value::Bool(r.graph_input));
    put(K.is_graph_output, Value::Bool(r.graph_output));
    put(K.ident, Value::Str(r.ident));
    if (r.weight) {
      put(K.key, Value::Str(t.name));
      put(K.role, Value::Str(*r.role));
      put(K.producer, Value::Str(*r.producer));
      put(K.producer_ident, Value::Str(*r.producer_ident));
    } else {
      put(K.producer, Value::Str(*r.producer));
      put(K.producer_ident, Value::Str(*r.producer_ident));
      put(K.out_idx, Value::Int(static_cast<int64_t>(r.out_idx)));
      ValueList c;
      c.reserve(r.consumers->size());
      for (const std::string* s : *r.consumers) c.push_back(Value::Str(*s));
      put(K.consumers, Value::List(std::move(c)));
      if (plan) {
        auto f = plan->offset.find(t.name);
        if (f != plan->offset.end()) put(K.offset, Value::Int(f->second));
      }
    }
    r.value = Value::Dict(std::move(d));
  }
  // Tensors named as graph inputs/outputs resolve to the last node output of that name.
  auto graph_tensor = [&](const std::string& name) -> const Value& {
    const analyses::TensorRef* at = dataflow.Find(name);
    if (!at)  // ir::Validate rejects such graphs first
      throw Error(graph.source + ": graph input/output " + Json(name).dump() +
                  " is no node's output");
    return tensors[outs[at->node][at->out]].value;
  };
  ValueList graph_in, graph_out;
  for (const auto& name : graph.inputs) graph_in.push_back(graph_tensor(name));
  for (const auto& name : graph.outputs) graph_out.push_back(graph_tensor(name));

  // 4. Node objects; a fused chain's object is shared by its members.
  // {name, ident, optype, attrs} of node m: a fused epilogue, a chain step.
  auto node_ref = [&](size_t m) {
    ValueDict r;
    r.emplace_back(K.name, Value::Str(graph.nodes[m].name));
    r.emplace_back(K.ident, Value::Str(node_idents[m]));
    r.emplace_back(K.optype, Value::Str(graph.nodes[m].optype));
    r.emplace_back(K.attrs, node_attrs[m]);
    return r;
  };
  // node m's weights by role: node.weights, a fused norm's weights.
  auto weights_of = [&](size_t m) {
    ValueDict w;
    for (const auto& [role, t] : node_weights[m]) Set(w, Value::Str(*role), tensors[t].value);
    return Value::Dict(std::move(w));
  };
  std::vector<Value> chain_values;
  chain_values.reserve(chains.size());
  const Value kInputKind = Value::Str("input"), kStepKind = Value::Str("step");
  for (const analyses::Chain& c : chains) {
    ValueList inputs(c.inputs.size()), steps;
    for (size_t s = 0; s < c.members.size(); ++s) {
      const size_t m = c.members[s];
      ValueList operands;
      for (size_t k = 0; k < c.operands[s].size(); ++k) {
        const analyses::Chain::Operand& o = c.operands[s][k];
        if (!o.step) inputs[o.index] = tensors[ins[m][k]].value;  // as the member reads it
        ValueDict od;
        od.emplace_back(K.kind, o.step ? kStepKind : kInputKind);
        od.emplace_back(K.index, Value::Int(static_cast<int64_t>(o.index)));
        operands.push_back(Value::Dict(std::move(od)));
      }
      ValueDict st = node_ref(m);
      st.emplace_back(K.operands, Value::List(std::move(operands)));
      steps.push_back(Value::Dict(std::move(st)));
    }
    ValueDict cd;
    cd.emplace_back(K.inputs, Value::List(std::move(inputs)));
    cd.emplace_back(K.steps, Value::List(std::move(steps)));
    chain_values.push_back(Value::Dict(std::move(cd)));
  }
  std::map<std::string_view, std::vector<std::string_view>> folded_into;
  if (folded)
    for (const auto& f : *folded) folded_into[f.into].push_back(f.node);
  std::vector<std::string> optypes;
  std::unordered_set<std::string_view> optype_seen;
  std::vector<std::string> dtypes;  // of every node output and weight, in first-use order
  std::unordered_set<std::string_view> dtype_seen;
  nodes_.resize(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    const ir::MSCJoint& n = graph.nodes[i];
    const OptypeInfo& info = optype_info.at(n.optype);
    if (optype_seen.insert(n.optype).second) optypes.push_back(n.optype);
    for (const auto& t : n.outputs)
      if (dtype_seen.insert(t.dtype).second) dtypes.push_back(t.dtype);
    for (const auto& [role, w] : n.weights)
      if (dtype_seen.insert(w.dtype).second) dtypes.push_back(w.dtype);
    ValueDict& d = nodes_[i].items;
    d.reserve(20);
    d.emplace_back(K.index, Value::Int(n.index));
    d.emplace_back(K.name, Value::Str(n.name));
    d.emplace_back(K.ident, Value::Str(node_idents[i]));
    d.emplace_back(K.optype, info.optype);
    d.emplace_back(K.ns, info.ns);
    d.emplace_back(K.op, info.op);
    d.emplace_back(K.summary, info.summary);
    d.emplace_back(K.traits, info.traits);
    d.emplace_back(K.parents, StrList(n.parents));
    d.emplace_back(K.shared_ref, Value::Str(n.shared_ref));
    ValueList in_list, out_list;
    bool is_output = false;
    for (size_t t : ins[i]) in_list.push_back(tensors[t].value);
    for (size_t t : outs[i]) {
      out_list.push_back(tensors[t].value);
      is_output = is_output || tensors[t].graph_output;
    }
    d.emplace_back(K.inputs, Value::List(std::move(in_list)));
    d.emplace_back(K.outputs, Value::List(std::move(out_list)));
    d.emplace_back(K.is_output, Value::Bool(is_output));
    d.emplace_back(K.attrs, node_attrs[i]);
    ValueDict raw;
    for (const auto& [k, v] : n.attrs) Set(raw, Value::Str(k), Value::Str(v));
    d.emplace_back(K.attrs_raw, Value::Dict(std::move(raw)));
    d.emplace_back(K.weights, weights_of(i));
    if (fusion[i].epilogue >= 0) {  // {name, ident, optype, attrs} of the consumer run as epilogue
      d.emplace_back(K.fused_epilogue,
                     Value::Dict(node_ref(static_cast<size_t>(fusion[i].epilogue))));
    } else {
      d.emplace_back(K.fused_epilogue, Value());
    }
    // the residual added before the epilogue: the residual add's other input
    d.emplace_back(
        K.fused_residual,
        fusion[i].residual_add >= 0
            ? tensors[ins[static_cast<size_t>(fusion[i].residual_add)][fusion[i].residual_input]]
                  .value
            : Value());
    // the norm run in this node's epilogue: {name, ident, optype, attrs, weights, outputs,
    // keeps_input}
    if (fusion[i].norm >= 0) {
      const size_t m = static_cast<size_t>(fusion[i].norm);
      ValueDict r = node_ref(m);
      r.emplace_back(K.weights, weights_of(m));
      ValueList nout;
      for (size_t t : outs[m]) nout.push_back(tensors[t].value);
      r.emplace_back(K.outputs, Value::List(std::move(nout)));
      r.emplace_back(K.keeps_input, Value::Bool(fusion[i].norm_keeps_input));
      d.emplace_back(K.fused_norm, Value::Dict(std::move(r)));
    } else {
      d.emplace_back(K.fused_norm, Value());
    }
    // the producer this node's computation was folded into
    d.emplace_back(
        K.fused_into,
        Value::Str(fusion[i].into >= 0 ? graph.nodes[static_cast<size_t>(fusion[i].into)].name
                                       : ""));
    d.emplace_back(K.fused_chain, fusion[i].chain >= 0
                                      ? chain_values[static_cast<size_t>(fusion[i].chain)]
                                      : Value());
    // a split (or a view of its pieces) read in place by fused_into; the views this node reads
    d.emplace_back(K.fused_view, Value::Bool(fusion[i].view));
    ValueList views;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const analyses::InputView* v =
          k < fusion[i].input_views.size() && !fusion[i].input_views[k].base.empty()
              ? &fusion[i].input_views[k]
              : nullptr;
      if (!v) {
        views.push_back(Value());
        continue;
      }
      const analyses::TensorRef* at = dataflow.Find(v->base);
      ValueList st;
      for (int64_t x : v->strides) st.push_back(Value::Int(x));
      ValueDict r;
      r.emplace_back(K.base, tensors[outs[at->node][at->out]].value);
      r.emplace_back(K.offset, Value::Int(v->offset));
      r.emplace_back(K.strides, Value::List(std::move(st)));
      views.push_back(Value::Dict(std::move(r)));
    }
    d.emplace_back(K.input_views, Value::List(std::move(views)));
    // a concat whose inputs' producers wrote them into its output (memory_plan.concat_in_place)
    d.emplace_back(K.in_place, Value::Bool(plan && plan->in_place[i]));
    code_at_ = d.size();
    d.emplace_back(K.code, Value());
    if (folded) {
      ValueList f;
      auto it = folded_into.find(n.name);
      if (it != folded_into.end())
        for (std::string_view s : it->second) f.push_back(Value::Str(std::string(s)));
      d.emplace_back(K.folded, Value::List(std::move(f)));
    }
  }

  // 5. The graph object.
  graph_items_.emplace_back(K.name, Value::Str(graph.name));
  graph_items_.emplace_back(K.ident, Value::Str(graph_ident));
  graph_items_.emplace_back(K.inputs, Value::List(std::move(graph_in)));
  graph_items_.emplace_back(K.outputs, Value::List(std::move(graph_out)));
  nodes_at_ = graph_items_.size();
  graph_items_.emplace_back(K.nodes, Value());
  ValueList wl;
  wl.reserve(weight_list.size());
  for (size_t t : weight_list) wl.push_back(tensors[t].value);
  graph_items_.emplace_back(K.weights, Value::List(std::move(wl)));
  graph_items_.emplace_back(K.optypes, StrList(optypes));
  graph_items_.emplace_back(K.dtypes, StrList(dtypes));
  ValueList prims;
  for (size_t p = 0; p < graph.prims.size(); ++p) {
    const ir::MSCPrim& prim = graph.prims[p];
    ValueDict d;
    d.emplace_back(K.index, Value::Int(prim.index));
    d.emplace_back(K.name, Value::Str(prim.name));
    d.emplace_back(K.ident, Value::Str(prim_idents[p]));
    d.emplace_back(K.optype, Value::Str(prim.optype));
    d.emplace_back(K.parents, StrList(prim.parents));
    ValueDict pa;
    for (const auto& [k, v] : prim.attrs) Set(pa, Value::Str(k), Value::Str(v));
    d.emplace_back(K.attrs, Value::Dict(std::move(pa)));
    prims.push_back(Value::Dict(std::move(d)));
  }
  graph_items_.emplace_back(K.prims, Value::List(std::move(prims)));
  if (plan) {
    ValueList list;
    list.reserve(plan->tensors.size());
    for (const auto& t : plan->tensors) {
      ValueDict d;
      d.emplace_back(K.name, Value::Str(*t.name));
      d.emplace_back(K.offset, Value::Int(t.offset));
      d.emplace_back(K.nbytes, Value::Int(t.nbytes));
      list.push_back(Value::Dict(std::move(d)));
    }
    ValueDict m;
    m.emplace_back(K.alignment, Value::Int(spec.memory.alignment));
    m.emplace_back(K.peak_bytes, Value::Int(plan->peak));
    m.emplace_back(K.naive_bytes, Value::Int(plan->naive));
    m.emplace_back(K.lower_bound_bytes, Value::Int(plan->lower_bound));
    m.emplace_back(K.tensors, Value::List(std::move(list)));
    graph_items_.emplace_back(K.memory, Value::Dict(std::move(m)));
  }
}

Value Context::Node(size_t i) const {
  ValueDict d = nodes_[i].items;
  d[code_at_].second = Value::Dict(nodes_[i].code);
  return Value::Dict(std::move(d));
}

void Context::SetCode(size_t i, const std::string& section, std::string code) {
  Set(nodes_[i].code, Value::Str(section), Value::Str(std::move(code)));
}

Value Context::Graph() const {
  ValueList nodes;
  nodes.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) nodes.push_back(Node(i));
  ValueDict d = graph_items_;
  d[nodes_at_].second = Value::List(std::move(nodes));
  return Value::Dict(std::move(d));
}

Json BuildContext(const ir::MSCGraph& graph, const opdef::OpDefRegistry& opdefs,
                  const BackendSpec& spec) {
  BackendSpec resolved = spec;  // trait:NAME entries of its optype lists, expanded
  ResolveTraits(resolved, opdefs);
  const analyses::GraphAnalyses analyses(graph, opdefs, resolved.fusion, resolved.memory);
  Context c(graph, opdefs, resolved, analyses);
  Json ctx = Json::object();
  ctx["graph"] = c.Graph().ToJson();
  return ctx;
}

}  // namespace msc::emit
