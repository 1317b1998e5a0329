// Statement rendering, scopes and runtime objects.
#include "generator/tmpl/interp.h"

#include <algorithm>

#include "generator/tmpl/error.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

bool Scope::Find(const std::string& name, uint64_t hash, Value* out) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    for (const Var& var : s->vars) {
      if (var.hash == hash && SameText(*var.name, name)) {
        *out = var.value;
        return true;
      }
    }
    if (s->data.is_dict() && s->data.Get(name, hash, out)) return true;
  }
  return false;
}

const Value* Scope::FindRef(const std::string& name, uint64_t hash, uint32_t* hint) const {
  if (hint) {  // the first scope, noting where the name is
    for (uint32_t k = 0; k < vars.size(); ++k) {
      const Var& var = vars.begin()[k];
      if (var.hash == hash && SameText(*var.name, name)) {
        *hint = k;
        return &var.value;
      }
    }
  }
  for (const Scope* s = this; s; s = s->parent.get()) {
    if (!(hint && s == this))
      for (const Var& var : s->vars)
        if (var.hash == hash && SameText(*var.name, name)) return &var.value;
    if (s->data.is_dict()) {
      const DictBox* d = s->data.native_dict();
      if (!d) return nullptr;  // a JSON view: Find makes the value
      const ptrdiff_t k = d->Find(name, hash);
      if (k >= 0) return &d->begin()[k].value;
    }
  }
  return nullptr;
}

void Scope::Set(const std::string& name, uint64_t hash, Value v) {
  for (auto& var : vars) {
    if (var.hash == hash && SameText(*var.name, name)) {
      var.value = std::move(v);
      return;
    }
  }
  vars.push_back(Var{&name, hash, std::move(v)});
}

namespace {
// Names the engine binds itself (static: scopes keep pointers to them).
const Name& kLoopName() {
  static const Name n("loop");
  return n;
}
const Name& kVarargsName() {
  static const Name n("varargs");
  return n;
}
const Name& kKwargsName() {
  static const Name n("kwargs");
  return n;
}
const Name& kCallerName() {
  static const Name n("caller");
  return n;
}
const Name& kSuperName() {
  static const Name n("super");
  return n;
}
}  // namespace

// ---- objects ----
std::string Macro::Repr() const { return "<Macro " + pystr::Repr(name_) + ">"; }

bool Macro::GetAttr(const std::string& name, Value* out) const {
  if (name == "name") {
    *out = Value::Str(name_);
  } else if (name == "arguments") {
    ValueList names;
    for (const auto& p : node_->params) names.push_back(Value::Str(p.name));
    *out = Value::Tuple(std::move(names));
  } else if (name == "catch_kwargs") {
    *out = Value::Bool(node_->uses_kwargs);
  } else if (name == "catch_varargs") {
    *out = Value::Bool(node_->uses_varargs);
  } else if (name == "caller") {
    *out = Value::Bool(node_->uses_caller);
  } else {
    return false;
  }
  return true;
}

Value Macro::Call(Interp& in, ValueList& args, Kwargs& kwargs) {
  std::string out;
  CallInto(in, args.data(), args.size(), kwargs, out);
  return Value::Str(std::move(out));
}

void Macro::CallInto(Interp& in, const Value* args, size_t nargs, Kwargs& kwargs,
                     std::string& out) {
  Interp::DepthGuard depth(&in);
  const Node& n = *node_;
  const size_t np = n.params.size();
  ScopePtr scope = in.NewScope(closure_);
  scope->vars.reserve(np + 1);
  // Parameter names are distinct (the parser checks), so bound parameters are appended.
  const size_t npos = std::min(nargs, np);
  for (size_t i = 0; i < npos; ++i)
    scope->vars.push_back(Scope::Var{&n.params[i].name, n.params[i].hash, args[i]});
  if (npos == np && nargs == np && kwargs.empty() && !n.uses_varargs && !n.uses_kwargs &&
      !n.uses_caller) {  // the common call: every parameter by position, nothing else
    Interp::TemplateSwitch sw(&in, tmpl_);
    Interp::FrameGuard frame(&in, &ctx_);
    in.RenderBody(n.body, scope, out);
    in.Recycle(scope);
    return;
  }
  std::vector<uint8_t> given_heap;
  uint8_t given_small[32] = {};
  uint8_t* given = given_small;
  if (np > sizeof(given_small)) {
    given_heap.assign(np, 0);
    given = given_heap.data();
  }
  for (size_t i = 0; i < npos; ++i) given[i] = true;
  Kwargs rest;
  bool found_caller = false;
  Value caller;
  for (auto& kv : kwargs) {
    size_t idx = np;
    for (size_t i = nargs; i < np; ++i)
      if (n.params[i].name == kv.first) idx = i;
    if (idx < np && !given[idx]) {
      scope->vars.push_back(Scope::Var{&n.params[idx].name, n.params[idx].hash, kv.second});
      given[idx] = true;
    } else if (kv.first == "caller" && n.uses_caller && !found_caller) {
      caller = kv.second;
      found_caller = true;
    } else {
      rest.push_back(kv);
    }
  }
  if (!n.uses_kwargs && !rest.empty())
    throw OpError("macro '" + name_ + "' takes no keyword argument '" + rest[0].first + "'");
  if (!n.uses_varargs && nargs > np)
    throw OpError("macro '" + name_ + "' takes not more than " + std::to_string(np) +
                  " argument(s)");
  Interp::TemplateSwitch sw(&in, tmpl_);
  Interp::FrameGuard frame(&in, &ctx_);
  for (size_t i = 0; i < np; ++i) {
    if (given[i]) continue;
    const MacroParam& p = n.params[i];
    if (p.default_value) {
      scope->Set(p.name, p.hash, in.Eval(*p.default_value, scope));
    } else {
      scope->Set(
          p.name, p.hash,
          Value::Undef("parameter '" + p.name + "' was not provided", in.Pos(n.line, n.col)));
    }
  }
  if (n.uses_varargs)
    scope->Set(kVarargsName(),
               Value::Tuple(nargs > np ? ValueList(args + np, args + nargs) : ValueList()));
  if (n.uses_kwargs) {
    ValueDict d;
    for (auto& kv : rest) d.emplace_back(Value::Str(kv.first), kv.second);
    scope->Set(kKwargsName(), Value::Dict(std::move(d)));
  }
  if (n.uses_caller)
    scope->Set(kCallerName(),
               found_caller ? caller : Value::Undef("no caller defined", in.Pos(n.line, n.col)));
  in.RenderBody(n.body, scope, out);
  in.Recycle(scope);
}

std::string Namespace::Repr() const {
  // A namespace can contain itself; like Python's dict repr, print a nested occurrence as {...}.
  ValueDepthGuard guard;
  ReprGuard active(this);
  if (active.recursive()) return "<Namespace {...}>";
  std::string s = "<Namespace {";
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i) s += ", ";
    s += pystr::Repr(attrs[i].first) + ": " + msc::tmpl::Repr(attrs[i].second);
  }
  return s + "}>";
}

bool Namespace::GetAttr(const std::string& name, Value* out) const {
  for (const auto& kv : attrs) {
    if (SameText(kv.first, name)) {
      *out = kv.second;
      return true;
    }
  }
  return false;
}

void Namespace::SetAttr(const std::string& name, Value v) {
  for (auto& kv : attrs) {
    if (SameText(kv.first, name)) {
      kv.second = std::move(v);
      return;
    }
  }
  attrs.emplace_back(name, std::move(v));
}

std::string Range::Repr() const {
  std::string s = "range(" + std::to_string(start_) + ", " + std::to_string(stop_);
  if (step_ != 1) s += ", " + std::to_string(step_);
  return s + ")";
}

ValueList Range::Items() const {
  ValueList out;
  if (step_ > 0)
    for (int64_t i = start_; i < stop_; i += step_) out.push_back(Value::Int(i));
  else
    for (int64_t i = start_; i > stop_; i += step_) out.push_back(Value::Int(i));
  return out;
}

bool Module::GetAttr(const std::string& attr, Value* out) const {
  if (attr.empty() || attr[0] == '_' || !scope) return false;
  for (const auto& var : scope->vars) {
    if (*var.name == attr) {
      *out = var.value;
      return true;
    }
  }
  return false;
}

namespace {

class LoopContext : public Object {
 public:
  // `items`: the list/tuple iterated (shared, not copied). `outer`: the scope the for statement
  // runs in (recursive loops render their levels there).
  LoopContext(Value items, const Node* node, const Template* tmpl, ScopePtr outer, int64_t depth0)
      : items_(std::move(items)),
        node_(node),
        tmpl_(tmpl),
        outer_(std::move(outer)),
        depth0_(depth0) {}
  std::string TypeName() const override { return "LoopContext"; }
  std::string Repr() const override {
    return "<LoopContext " + std::to_string(index0 + 1) + "/" + std::to_string(items_.size()) + ">";
  }
  bool GetAttr(const std::string& name, Value* out) const override {
    const int64_t n = static_cast<int64_t>(items_.size());
    const int64_t i = static_cast<int64_t>(index0);
    if (SameText(name, "index"))
      *out = Value::Int(i + 1);
    else if (name == "index0")
      *out = Value::Int(i);
    else if (name == "revindex")
      *out = Value::Int(n - i);
    else if (name == "revindex0")
      *out = Value::Int(n - i - 1);
    else if (name == "first")
      *out = Value::Bool(i == 0);
    else if (name == "last")
      *out = Value::Bool(i == n - 1);
    else if (name == "length")
      *out = Value::Int(n);
    else if (name == "depth")
      *out = Value::Int(depth0_ + 1);
    else if (name == "depth0")
      *out = Value::Int(depth0_);
    else if (name == "previtem")
      *out = i > 0 ? items_.at(static_cast<size_t>(i - 1))
                   : Value::Undef("there is no previous item", pos);
    else if (name == "nextitem")
      *out = i + 1 < n ? items_.at(static_cast<size_t>(i + 1))
                       : Value::Undef("there is no next item", pos);
    else if (name == "cycle") {
      size_t idx = index0;
      *out = Value::Obj(MakeRc<NativeFunction>("cycle", [idx](Interp&, ValueList& args, Kwargs&) {
        if (args.empty()) throw OpError("no items for cycling given");
        return args[idx % args.size()];
      }));
    } else if (name == "changed") {
      auto self = Rc<LoopContext>(const_cast<LoopContext*>(this));
      *out =
          Value::Obj(MakeRc<NativeFunction>("changed", [self](Interp&, ValueList& args, Kwargs&) {
            Value v = Value::List(args);
            if (self->has_last_ && Equals(self->last_, v)) return Value::Bool(false);
            self->last_ = v;
            self->has_last_ = true;
            return Value::Bool(true);
          }));
    } else {
      return false;
    }
    return true;
  }
  // loop(items): renders the loop body over `items` one level deeper (recursive loops only).
  bool IsCallable() const override { return true; }
  Value Call(Interp& in, ValueList& args, Kwargs& kwargs) override {
    if (!node_->recursive)
      throw OpError("loop() can only be called in a for loop marked 'recursive'");
    if (!kwargs.empty())
      throw OpError("loop() got an unexpected keyword argument '" + kwargs[0].first + "'");
    if (args.size() != 1)
      throw OpError("loop() takes exactly one argument (the items), " +
                    std::to_string(args.size()) + " given");
    Interp::DepthGuard depth(&in);
    Interp::TemplateSwitch sw(&in, tmpl_);
    std::string text;
    in.RenderLoop(*node_, outer_, args[0], depth0_ + 1, text);
    return Value::Str(std::move(text));
  }
  size_t index0 = 0;
  SourcePos pos;

 private:
  Value items_;
  const Node* node_;
  const Template* tmpl_;
  ScopePtr outer_;  // null unless recursive
  int64_t depth0_;
  Value last_;
  bool has_last_ = false;
};

// Rethrows `e` with a line "  <what> <file:line:col>" appended (at most 8 such lines).
[[noreturn]] void AppendTrace(const TemplateError& e, const char* what, const SourcePos& pos) {
  std::string msg = e.what();
  if (std::count(msg.begin(), msg.end(), '\n') < 8) {
    std::string where = FormatPos(pos);
    msg += "\n  " + std::string(what) + " " + where.substr(0, where.size() - 2);
  }
  throw TemplateError(msg);
}

}  // namespace

// ---- template inheritance ----
void BlockTable::Add(const Template& t) {
  for (const Node* b : t.blocks) blocks[b->name].push_back(BlockDef{b, &t});
  chain.push_back(&t);
}

std::string TemplateReference::Repr() const {
  return "<TemplateReference " + pystr::Repr(ctx_.leaf ? ctx_.leaf->load_name : "") + ">";
}

bool TemplateReference::GetAttr(const std::string& name, Value* out) const {
  if (!ctx_.blocks || !ctx_.blocks->Find(name)) return false;
  *out = Value::Obj(MakeRc<BlockReference>(ctx_, name, 0));
  return true;
}

Value BlockReference::Super(const RenderCtx& ctx, const std::string& name, size_t index,
                            const SourcePos& pos) {
  const std::vector<BlockDef>* defs = ctx.blocks ? ctx.blocks->Find(name) : nullptr;
  if (defs && index + 1 < defs->size())
    return Value::Obj(MakeRc<BlockReference>(ctx, name, index + 1));
  return Value::Undef("there is no parent block called " + pystr::Repr(name) + ".", pos);
}

bool BlockReference::GetAttr(const std::string& name, Value* out) const {
  if (name == "super") {
    const std::vector<BlockDef>* defs = ctx_.blocks ? ctx_.blocks->Find(name_) : nullptr;
    SourcePos pos;  // undefined super: reported at this definition's block tag
    if (defs && index_ < defs->size())
      pos = SourcePos{&(*defs)[index_].tmpl->name, (*defs)[index_].node->line,
                      (*defs)[index_].node->col};
    *out = Super(ctx_, name_, index_, pos);
  } else if (name == "name") {
    *out = Value::Str(name_);
  } else {
    return false;
  }
  return true;
}

Value BlockReference::Call(Interp& in, ValueList& args, Kwargs& kwargs) {
  if (!args.empty() || !kwargs.empty()) throw OpError("block '" + name_ + "' takes no arguments");
  std::string text;
  in.RenderBlock(ctx_, name_, index_, in.here(), text);
  return Value::Str(std::move(text));
}

// ---- interpreter: statements ----
Interp::~Interp() {
  // Break reference cycles (macros capture the scope they are defined in).
  for (auto& s : cleanup_) s->vars.clear();
  for (auto& ns : namespaces_) ns->attrs.clear();
}

Interp::DepthGuard::DepthGuard(Interp* i) : in(i) {
  if (++in->depth_ > kMaxDepth) {
    --in->depth_;
    throw OpError("maximum recursion depth exceeded (more than " + std::to_string(kMaxDepth) +
                  " nested macro calls/includes/imports/blocks/recursive loops)");
  }
}

Interp::FrameGuard::FrameGuard(Interp* i, const RenderCtx* ctx)
    : in(i),
      saved_check(i->out_check_),
      switched(ctx && (ctx->scope != i->ctx_.scope || ctx->blocks != i->ctx_.blocks ||
                       ctx->leaf != i->ctx_.leaf)) {
  in->out_check_ = nullptr;
  if (switched) {
    saved_ctx = std::move(in->ctx_);
    in->ctx_ = *ctx;
  }
}

Interp::FrameGuard::~FrameGuard() {
  in->out_check_ = saved_check;
  if (switched) in->ctx_ = std::move(saved_ctx);
}

void Interp::Fail(int line, int col, const std::string& msg) const {
  throw TemplateError(FormatPos(SourcePos{cur_file_, line, col}) + msg);
}

ScopePtr Interp::NewRootScope() { return MakeRc<Scope>(); }

void Interp::RenderTemplate(const Template& t, const ScopePtr& scope, std::string& out) {
  RenderCtx ctx;
  ctx.scope = scope;
  ctx.leaf = &t;
  if (!t.blocks.empty() || t.has_extends) {
    ctx.blocks = std::make_shared<BlockTable>();
    ctx.blocks->Add(t);
  }
  // Saves and restores the caller's context (also when an error propagates).
  struct Restore {
    Interp* in;
    RenderCtx ctx;
    RootState* check;
    ~Restore() {
      in->ctx_ = std::move(ctx);
      in->out_check_ = check;
    }
  } restore{this, std::move(ctx_), out_check_};
  ctx_ = std::move(ctx);
  RootState state;
  out_check_ = t.has_extends ? &state : nullptr;
  {
    TemplateSwitch sw(this, &t);
    RenderBody(t.body, scope, out);
  }
  // Jinja2 renders the parent's root after the child's, with the same context; the chain has
  // no cycles (RenderExtends checks), so this ends.
  while (state.parent) {
    const Template* parent = state.parent;
    const SourcePos from = state.pos;
    state = RootState();
    out_check_ = parent->has_extends ? &state : nullptr;
    try {
      TemplateSwitch sw(this, parent);
      RenderBody(parent->body, scope, out);
    } catch (const OpError& e) {
      throw TemplateError(FormatPos(from) + e.what());
    } catch (const TemplateError& e) {
      AppendTrace(e, "extended by", from);
    }
  }
}

void Interp::RenderExtends(const Node& n, const ScopePtr& scope) {
  if (!out_check_ || !ctx_.blocks)  // the parser allows extends only at the top level
    Fail(n.line, n.col, "internal error: 'extends' outside a template's top level");
  // Jinja2 raises this even when the second extends names the same template.
  if (out_check_->parent)
    Fail(n.line, n.col,
         "template extended multiple times (an earlier 'extends' already named " +
             pystr::Repr(out_check_->parent->load_name) + ")");
  Value name = Eval(*n.expr, scope);
  if (name.is_undefined()) ThrowUndefined(name);
  if (!name.is_string())
    Fail(n.expr->line, n.expr->col, "template name must be a string, got " + TypeName(name));
  const Template* t = nullptr;
  try {
    t = env_.Load(name.s());
  } catch (const OpError& e) {
    Fail(n.expr->line, n.expr->col, e.what());
  } catch (const TemplateError& e) {
    AppendTrace(e, "extended by", Pos(n.line, n.col));  // syntax error in the parent
  }
  if (!t) Fail(n.expr->line, n.expr->col, "template " + Repr(name) + " not found");
  BlockTable& table = *ctx_.blocks;
  for (const Template* c : table.chain) {
    if (c != t) continue;
    std::string cycle;
    for (const Template* c2 : table.chain) cycle += pystr::Repr(c2->load_name) + " -> ";
    Fail(n.expr->line, n.expr->col, "extends cycle: " + cycle + pystr::Repr(t->load_name));
  }
  out_check_->parent = t;
  out_check_->pos = Pos(n.line, n.col);
  table.Add(*t);
}

void Interp::RenderBlockNode(const Node& n, const ScopePtr& scope, std::string& out) {
  // Once the template has extended another, its top-level blocks are rendered by the parent.
  if (n.toplevel && out_check_ && out_check_->parent) return;
  const std::vector<BlockDef>* defs = ctx_.blocks ? ctx_.blocks->Find(n.name) : nullptr;
  if (!defs || defs->empty())
    Fail(n.line, n.col, "internal error: block '" + n.name + "' is not registered");
  if (n.required && defs->size() <= 1)
    Fail(n.line, n.col,
         "block '" + n.name + "' is required: a template extending " +
             pystr::Repr(defs->front().tmpl->load_name) + " must define it");
  if (n.scoped)  // Jinja2's context.derived(locals): the block sees the local variables
    RenderBlock(RenderCtx{scope, ctx_.blocks, ctx_.leaf}, n.name, 0, Pos(n.line, n.col), out);
  else
    RenderBlock(ctx_, n.name, 0, Pos(n.line, n.col), out);
}

void Interp::RenderBlock(const RenderCtx& ctx, const std::string& name, size_t index,
                         const SourcePos& from, std::string& out) {
  const std::vector<BlockDef>* defs = ctx.blocks ? ctx.blocks->Find(name) : nullptr;
  if (!defs || index >= defs->size())
    throw OpError("there is no block called " + pystr::Repr(name));
  const BlockDef def = (*defs)[index];
  // Like a Jinja2 block function: names resolve in the context (not in the caller's locals);
  // `super` is the next definition.
  auto scope = MakeRc<Scope>();
  scope->parent = ctx.scope;
  scope->Set(kSuperName(),
             BlockReference::Super(ctx, name, index,
                                   SourcePos{&def.tmpl->name, def.node->line, def.node->col}));
  try {
    DepthGuard depth(this);
    FrameGuard frame(this, &ctx);
    TemplateSwitch sw(this, def.tmpl);
    RenderBody(def.node->body, scope, out);
  } catch (const OpError& e) {
    throw TemplateError(FormatPos(from) + e.what());
  } catch (const TemplateError& e) {
    AppendTrace(e, ("in block '" + name + "' called from").c_str(), from);
  }
}

void Interp::RenderBody(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& n : body) {
    const bool dropped = out_check_ && out_check_->parent;  // content after an extends
    if (n->kind == Node::K::kText) {  // the two commonest nodes without a call
      if (!dropped) out += n->text;
    } else if (n->kind == Node::K::kPrint) {
      if (!dropped) Print(*n->expr, scope, out);
    } else {
      RenderNode(*n, scope, out);
    }
    if (out.size() >= kStreamChunk) CheckOutput(*n, out);
  }
}

void Interp::CheckOutput(const Node& n, std::string& out) {
  const size_t total = out.size() + (&out == stream_root_ ? streamed_ : 0);
  if (total > kMaxOutputBytes)
    Fail(n.line, n.col, "output exceeds " + std::to_string(kMaxOutputBytes >> 20) + " MiB");
  if (&out != stream_root_) return;
  (*sink_)(out);
  streamed_ += out.size();
  out.clear();
}

void Interp::FlushStream(std::string& root) {
  if (!root.empty()) (*sink_)(root);
  streamed_ += root.size();
  root.clear();
}

void Interp::Assign(const Expr& target, const Value& v, const ScopePtr& scope) {
  if (target.kind == Expr::K::kName) {
    scope->Set(target.name, target.hash, v);
  } else if (target.kind == Expr::K::kTuple) {
    if (v.is_seq() && v.size() == target.items.size()) {  // no copy of the sequence
      for (size_t i = 0; i < target.items.size(); ++i) Assign(*target.items[i], v.at(i), scope);
      return;
    }
    ValueList items = Iterate(v);
    if (items.size() < target.items.size())
      Fail(target.line, target.col,
           "not enough values to unpack (expected " + std::to_string(target.items.size()) +
               ", got " + std::to_string(items.size()) + ")");
    if (items.size() > target.items.size())
      Fail(target.line, target.col,
           "too many values to unpack (expected " + std::to_string(target.items.size()) + ")");
    for (size_t i = 0; i < items.size(); ++i) Assign(*target.items[i], items[i], scope);
  } else if (target.kind == Expr::K::kGetAttr) {
    const Expr& ns_name = *target.items[0];
    Value ns_tmp;
    const Value* found = FindName(ns_name, *scope);
    if (!found) {
      if (!scope->Find(ns_name.name, ns_name.hash, &ns_tmp))
        ns_tmp = LookupGlobal(ns_name.name, ns_name.line, ns_name.col);
      found = &ns_tmp;
    }
    const Value& ns = *found;
    if (ns.is_undefined()) ThrowUndefined(ns);
    Namespace* obj = ns.is_object() ? ns.obj()->AsNamespace() : nullptr;
    if (!obj)
      Fail(target.line, target.col,
           "cannot assign attribute on non-namespace object '" + ns_name.name + "'");
    obj->SetAttr(target.name, v);
  }
}

// {% set x %}...{% endset %} and {% filter f %}...{% endfilter %}.
void Interp::RenderBlockSet(const Node& n, const ScopePtr& scope, std::string& out) {
  auto inner = MakeRc<Scope>();
  inner->parent = scope;
  std::string text;
  if (n.kind == Node::K::kSetBlock) {
    FrameGuard frame(this, nullptr);  // a block set captures its output even after extends
    RenderBody(n.body, inner, text);
  } else {
    RenderBody(n.body, inner, text);
  }
  Value v = Value::Str(std::move(text));
  if (n.expr) {
    const Value* saved = block_input;
    block_input = &v;
    Value r = Eval(*n.expr, scope);
    block_input = saved;
    v = r;
  }
  if (n.kind == Node::K::kSetBlock) {
    Assign(*n.target, v, scope);
  } else if (!v.is_string()) {
    // Jinja2 joins filter-block results without str(): a non-string result is an error.
    Fail(n.line, n.col, "sequence item: expected str instance, " + TypeName(v) + " found");
  } else {
    try {
      AppendStr(out, v);
    } catch (const OpError& e) {
      Fail(n.line, n.col, e.what());
    }
  }
}

void Interp::RenderWith(const Node& n, const ScopePtr& scope, std::string& out) {
  ValueList values;
  for (const auto& v : n.values) values.push_back(Eval(*v, scope));
  auto inner = MakeRc<Scope>();
  inner->parent = scope;
  for (size_t i = 0; i < values.size(); ++i) Assign(*n.targets[i], values[i], inner);
  RenderBody(n.body, inner, out);
}

void Interp::RenderNode(const Node& n, const ScopePtr& scope, std::string& out) {
  switch (n.kind) {
    case Node::K::kText:
      if (out_check_ && out_check_->parent) return;  // content after an extends is dropped
      out += n.text;
      return;
    case Node::K::kPrint:
      if (out_check_ && out_check_->parent) return;
      Print(*n.expr, scope, out);
      return;
    case Node::K::kIf:
      for (size_t i = 0; i < n.conds.size(); ++i) {
        if (Cond(*n.conds[i], scope)) {
          RenderBody(n.bodies[i], scope, out);
          return;
        }
      }
      RenderBody(n.else_body, scope, out);
      return;
    case Node::K::kFor:
      RenderFor(n, scope, out);
      return;
    case Node::K::kSet:
      Assign(*n.target, Eval(*n.expr, scope), scope);
      return;
    case Node::K::kSetBlock:
    case Node::K::kFilterBlock:
      RenderBlockSet(n, scope, out);
      return;
    case Node::K::kMacro:
      scope->Set(n.name, n.hash, Value::Obj(MakeRc<Macro>(&n, cur_tmpl_, scope, n.name, ctx_)));
      Register(scope);
      return;
    case Node::K::kCallBlock:
      RenderCallBlock(n, scope, out);
      return;
    case Node::K::kInclude:
      RenderInclude(n, scope, out);
      return;
    case Node::K::kImport:
    case Node::K::kFromImport:
      RenderImport(n, scope);
      return;
    case Node::K::kWith:
      RenderWith(n, scope, out);
      return;
    case Node::K::kExtends:
      RenderExtends(n, scope);
      return;
    case Node::K::kBlock:
      RenderBlockNode(n, scope, out);
      return;
  }
}

void Interp::RenderFor(const Node& n, const ScopePtr& scope, std::string& out) {
  if (n.dictsort_loop && (env_.filters.empty() || !env_.filters.count(n.expr->name))) {
    const Expr& f = *n.expr;
    Value tmp;
    const Value& input = EvalRef(*f.items[0], scope, tmp);
    if (RenderSortedDictLoop(n, scope, input, out)) return;
    // Not a native dict with ASCII string keys: the filter itself (input evaluated once).
    ValueList args;
    Kwargs kwargs;
    Value items;
    try {
      here_ = Pos(f.line, f.col);
      items = ApplyFilter(f.name, input, args, kwargs, f.filter);
    } catch (const OpError& e) {
      Fail(f.line, f.col, e.what());
    }
    RenderLoop(n, scope, items, 0, out);
    return;
  }
  RenderLoop(n, scope, Eval(*n.expr, scope), 0, out);
}

bool Interp::RenderSortedDictLoop(const Node& n, const ScopePtr& scope, const Value& d,
                                  std::string& out) {
  const DictBox* dict = d.native_dict();
  if (!dict) return false;
  const Value keep = d;  // the dict stays alive whatever the body does
  const size_t count = dict->size();
  uint32_t small[16];
  std::vector<uint32_t> large;
  uint32_t* order = small;
  if (count > 16) {
    large.resize(count);
    order = large.data();
  }
  if (count == 0) {  // as RenderLoop
    if (!n.else_body.empty()) {
      auto inner = MakeRc<Scope>();
      inner->parent = scope;
      RenderBody(n.else_body, inner, out);
    }
    return true;
  }
  // Dicts from the same JSON shape have the same keys: their order is computed once. Interned
  // keys (immortal, one box per text) identify the key texts.
  Node::SortedKeys* cache = n.sorted_keys.get();
  bool cached = cache && cache->keys.size() == count;
  for (size_t i = 0; cached && i < count; ++i)
    cached = dict->begin()[i].key.interned() == cache->keys[i];
  if (cached) {
    std::copy(cache->order.begin(), cache->order.end(), order);
  } else {
    if (!SortedKeyOrder(*dict, order)) return false;
    bool interned = true;
    for (size_t i = 0; interned && i < count; ++i) interned = dict->begin()[i].key.interned();
    if (interned && count <= 64) {
      if (!cache) {
        n.sorted_keys = std::make_unique<Node::SortedKeys>();
        cache = n.sorted_keys.get();
      }
      cache->keys.resize(count);
      for (size_t i = 0; i < count; ++i) cache->keys[i] = dict->begin()[i].key.interned();
      cache->order.assign(order, order + count);
    }
  }
  const Expr& key_name = *n.target->items[0];
  const Expr& value_name = *n.target->items[1];
  ScopePtr iter_scope;
  for (size_t i = 0; i < count; ++i) {
    if (iter_scope && iter_scope.use_count() == 1) {
      iter_scope->vars.clear();
    } else {
      iter_scope = NewScope(scope);
    }
    if (++iterations_ > kMaxLoopIterations)
      Fail(n.line, n.col,
           "more than " + std::to_string(kMaxLoopIterations) + " loop iterations in one render");
    const DictBox::Entry& e = dict->begin()[order[i]];
    iter_scope->vars.push_back(Scope::Var{&key_name.name, key_name.hash, e.key});
    iter_scope->vars.push_back(Scope::Var{&value_name.name, value_name.hash, e.value});
    RenderBody(n.body, iter_scope, out);
  }
  Recycle(iter_scope);
  return true;
}

void Interp::RenderLoop(const Node& n, const ScopePtr& scope, const Value& seq, int64_t depth0,
                        std::string& out) {
  // The loop runs over the list/tuple itself (never copied); other iterables are materialized.
  Value items;
  if (seq.is_seq()) {
    items = seq;
  } else {
    try {
      items = Value::List(Iterate(seq));
    } catch (const OpError& e) {
      if (depth0 > 0) throw;  // loop(items): reported at the call
      Fail(n.expr->line, n.expr->col, e.what());
    }
  }
  if (n.cond) {
    ValueList kept;
    auto tmp = MakeRc<Scope>();
    tmp->parent = scope;
    for (size_t i = 0; i < items.size(); ++i) {
      Value item = items.at(i);
      tmp->vars.clear();
      Assign(*n.target, item, tmp);
      if (Cond(*n.cond, tmp)) kept.push_back(std::move(item));
    }
    items = Value::List(std::move(kept));
  }
  const size_t count = items.size();
  if (count == 0) {
    if (!n.else_body.empty()) {
      auto inner = MakeRc<Scope>();
      inner->parent = scope;
      RenderBody(n.else_body, inner, out);
    }
    return;
  }
  Rc<LoopContext> loop;  // only when the body can see `loop`
  Value loop_value;
  if (n.uses_loop) {
    loop = MakeRc<LoopContext>(items, &n, cur_tmpl_, n.recursive ? scope : ScopePtr(), depth0);
    loop->pos = Pos(n.line, n.col);
    loop_value = Value::Obj(loop);
  }
  const ListBox* native = items.native_list();
  const Expr& target = *n.target;
  const Name& loop_name = kLoopName();
  ScopePtr iter_scope;
  for (size_t i = 0; i < count; ++i) {
    if (iter_scope && iter_scope.use_count() == 1) {
      iter_scope->vars.clear();
    } else {  // first iteration, or the last one's scope was captured (e.g. by a macro)
      iter_scope = NewScope(scope);
    }
    if (++iterations_ > kMaxLoopIterations)
      Fail(n.line, n.col,
           "more than " + std::to_string(kMaxLoopIterations) + " loop iterations in one render");
    if (loop) {
      loop->index0 = i;
      iter_scope->vars.push_back(Scope::Var{&loop_name.str, loop_name.hash, loop_value});
    }
    if (target.kind == Expr::K::kName && target.hash != loop_name.hash)
      iter_scope->vars.push_back(
          Scope::Var{&target.name, target.hash, native ? (*native)[i] : items.at(i)});
    else
      Assign(target, native ? (*native)[i] : items.at(i), iter_scope);
    RenderBody(n.body, iter_scope, out);
  }
  Recycle(iter_scope);
}

void Interp::RenderCallBlock(const Node& n, const ScopePtr& scope, std::string& out) {
  const Expr& call = *n.expr;
  Value callee = Eval(*call.items[0], scope);
  ValueList args;
  Kwargs kwargs;
  EvalArgs(call, scope, args, kwargs);
  kwargs.emplace_back("caller", Value::Obj(MakeRc<Macro>(&n, cur_tmpl_, scope, "caller", ctx_)));
  Value r;
  try {
    CheckCallable(*call.items[0], callee);
    r = CallValue(callee, args, kwargs);
    AppendStr(out, r);
  } catch (const OpError& e) {
    Fail(call.line, call.col, e.what());
  }
}

void Interp::RenderInclude(const Node& n, const ScopePtr& scope, std::string& out) {
  const Template* t = n.include_cache;  // a constant name loaded before
  if (t) {
    RenderIncluded(n, *t, scope, out);
    return;
  }
  Value name = Eval(*n.expr, scope);
  auto load = [&](const Value& v) {
    if (v.is_undefined()) ThrowUndefined(v);
    if (!v.is_string())
      Fail(n.expr->line, n.expr->col, "template name must be a string, got " + TypeName(v));
    try {
      t = env_.Load(v.s());
    } catch (const OpError& e) {
      Fail(n.line, n.col, e.what());
    } catch (const TemplateError& e) {
      AppendTrace(e, "included from", Pos(n.line, n.col));  // syntax error in the included file
    }
  };
  if (name.is_seq()) {
    const size_t count = name.size();
    for (size_t i = 0; i < count && !t; ++i) load(name.at(i));
    if (!t && !n.ignore_missing) {
      if (count == 1)
        Fail(n.expr->line, n.expr->col, "template " + Repr(name.at(0)) + " not found");
      Fail(n.expr->line, n.expr->col, "none of the templates given were found: " + Repr(name));
    }
  } else {
    load(name);
    if (!t && !n.ignore_missing)
      Fail(n.expr->line, n.expr->col, "template " + Repr(name) + " not found");
    // A constant name always loads the same template (the environment keeps loaded files).
    if (t && n.expr->kind == Expr::K::kConst) n.include_cache = t;
  }
  if (!t) return;
  RenderIncluded(n, *t, scope, out);
}

void Interp::RenderIncluded(const Node& n, const Template& tmpl, const ScopePtr& scope,
                            std::string& out) {
  const Template* t = &tmpl;
  ScopePtr inner;
  if (n.with_context && !t->include_needs_scope) {
    inner = scope;  // it neither assigns names nor looks at `loop`: nothing to isolate
  } else {
    inner = MakeRc<Scope>();
    if (n.with_context) {
      inner->parent = scope;
      // Like Jinja2, included templates see the includer's variables but not its `loop`.
      if (hidden_loop_.is_none())
        hidden_loop_ = Value::Undef("undefined variable 'loop'", Pos(n.line, n.col));
      inner->Set(kLoopName(), hidden_loop_);
    }
  }
  try {
    DepthGuard depth(this);
    RenderTemplate(*t, inner, out);
  } catch (const OpError& e) {
    Fail(n.line, n.col, e.what());
  } catch (const TemplateError& e) {
    AppendTrace(e, "included from", Pos(n.line, n.col));
  }
}

void Interp::RenderImport(const Node& n, const ScopePtr& scope) {
  Value mod = ImportModule(n, scope);
  Register(scope);  // the module (or its macros) may reference this scope: break the cycle later
  if (n.kind == Node::K::kImport) {
    scope->Set(n.name, n.hash, mod);
    return;
  }
  auto* m = static_cast<Module*>(mod.obj());
  for (size_t k = 0; k < n.names.size(); ++k) {
    const std::string& name = n.names[k].first;
    const std::string& alias = n.names[k].second;
    Value v;
    if (!m->GetAttr(name, &v))
      v = Value::Undef("the template " + pystr::Repr(m->name) + " (imported on line " +
                           std::to_string(n.line) + ") does not export the requested name " +
                           pystr::Repr(name),
                       Pos(n.line, n.col));
    scope->Set(alias, n.alias_hashes[k], v);
  }
}

Value Interp::ImportModule(const Node& n, const ScopePtr& scope) {
  Value name = Eval(*n.expr, scope);
  const Template* t = nullptr;
  if (name.is_undefined()) ThrowUndefined(name);
  try {
    if (!name.is_string()) throw OpError("template name must be a string, got " + TypeName(name));
    t = env_.Load(name.s());
  } catch (const OpError& e) {
    Fail(n.expr->line, n.expr->col, e.what());
  } catch (const TemplateError& e) {
    AppendTrace(e, "imported from", Pos(n.line, n.col));  // syntax error in the imported file
  }
  if (!t) Fail(n.expr->line, n.expr->col, "template " + Repr(name) + " not found");
  auto mod = MakeRc<Module>();
  mod->name = name.s();
  mod->scope = MakeRc<Scope>();
  if (n.with_context) mod->scope->parent = scope;
  Register(mod->scope);
  try {
    DepthGuard depth(this);
    RenderTemplate(*t, mod->scope, mod->output);
  } catch (const OpError& e) {
    Fail(n.line, n.col, e.what());
  } catch (const TemplateError& e) {
    AppendTrace(e, "imported from", Pos(n.line, n.col));
  }
  return Value::Obj(mod);
}

}  // namespace msc::tmpl
