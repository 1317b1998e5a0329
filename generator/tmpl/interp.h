// Template interpreter: scopes, runtime objects and evaluation (internal header).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "generator/tmpl/ast.h"
#include "generator/tmpl/value.h"

namespace msc::tmpl {

using Function = std::function<Json(const std::vector<Json>& args, const Json& kwargs)>;

// A variable scope. Lookups walk parent links; a root scope may expose a JSON data object.
struct Scope {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Scope> parent;
  const Json* data = nullptr;        // template context (render data) for root scopes
  std::shared_ptr<void> data_owner;  // keeps `data` alive when it is owned

  bool Find(const std::string& name, Value* out) const;
  void Set(const std::string& name, Value v);
};
using ScopePtr = std::shared_ptr<Scope>;

class Interp;
using NativeFn = std::function<Value(Interp& in, ValueList& args, Kwargs& kwargs)>;

// Environment state shared by every render (owned by Environment).
struct EnvData {
  std::string search_root;
  std::unordered_map<std::string, Function> filters;  // user filters
  std::unordered_map<std::string, Value> globals;     // user globals and functions
  std::unordered_map<std::string, std::shared_ptr<const Template>> file_cache;
  std::unordered_map<std::string, std::shared_ptr<const Template>> string_cache;

  // Resolves `name` against search_root (jinja2 FileSystemLoader rules), loading and caching it.
  // Returns null if the file does not exist; throws OpError if the name escapes the root.
  std::shared_ptr<const Template> Load(const std::string& name);
  std::shared_ptr<const Template> FromString(const std::string& source, const std::string& name);
  // Throws msc::Error for filters/tests that do not exist (Jinja2 checks these at compile time).
  void Validate(const Template& t) const;
};

// ---- template inheritance ----
// One {% block %} definition: the node and the template it is written in.
struct BlockDef {
  const Node* node;
  const Template* tmpl;
};

// The blocks of one render (Jinja2's Context.blocks): for each name the definitions from the
// most derived template to the base (blocks[name][0] renders, super() goes one further), and
// the extends chain, leaf first (to report cycles). Built once per render of a template that
// has blocks or extends; extends appends the parent's blocks (Jinja2's visit_Extends).
struct BlockTable {
  std::unordered_map<std::string, std::vector<BlockDef>> blocks;
  std::vector<const Template*> chain;
  void Add(const Template& t);
  const std::vector<BlockDef>* Find(const std::string& name) const {
    auto it = blocks.find(name);
    return it == blocks.end() ? nullptr : &it->second;
  }
};

// What Jinja2's Context is for blocks and `self`: the scope that blocks see (the shared top-level
// variables of the extends chain over the render data; for a `scoped` block the local scope where
// it is rendered) and the block table. Copying it copies two shared pointers.
struct RenderCtx {
  ScopePtr scope;
  std::shared_ptr<BlockTable> blocks;  // null when the template has no blocks and no extends
  const Template* leaf = nullptr;      // the template whose render made this context
};

// Jinja2's per-template `parent_template`: set by {% extends %}; while it is set the template's
// top-level text, prints and top-level blocks produce no output.
struct RootState {
  const Template* parent = nullptr;
  SourcePos pos;  // the extends that set it
};

// `self` in a template: self.NAME() renders block NAME (the most derived definition).
class TemplateReference : public Object {
 public:
  explicit TemplateReference(RenderCtx ctx) : ctx_(std::move(ctx)) {}
  std::string TypeName() const override { return "TemplateReference"; }
  std::string Repr() const override;
  bool GetAttr(const std::string& name, Value* out) const override;

 private:
  RenderCtx ctx_;
};

// A callable block: `super` inside a block, self.NAME, super.super. Calling it renders
// definition `index` of block `name` and returns the text (a str: autoescaping is off).
class BlockReference : public Object {
 public:
  BlockReference(RenderCtx ctx, std::string name, size_t index)
      : ctx_(std::move(ctx)), name_(std::move(name)), index_(index) {}
  std::string TypeName() const override { return "BlockReference"; }
  bool GetAttr(const std::string& name, Value* out) const override;
  bool IsCallable() const override { return true; }
  Value Call(Interp& in, ValueList& args, Kwargs& kwargs) override;
  // `super` of definition `index` (index < number of definitions) as Jinja2's Context.super.
  static Value Super(const RenderCtx& ctx, const std::string& name, size_t index,
                     const SourcePos& pos);

 private:
  RenderCtx ctx_;
  std::string name_;
  size_t index_;
};

// ---- runtime objects ----
class Macro : public Object {
 public:
  Macro(const Node* node, const Template* tmpl, ScopePtr closure, std::string name, RenderCtx ctx)
      : node_(node),
        tmpl_(tmpl),
        closure_(std::move(closure)),
        name_(std::move(name)),
        ctx_(std::move(ctx)) {}
  std::string TypeName() const override { return "Macro"; }
  std::string Repr() const override;
  bool GetAttr(const std::string& name, Value* out) const override;
  bool IsCallable() const override { return true; }
  Value Call(Interp& in, ValueList& args, Kwargs& kwargs) override;
  const std::string& name() const { return name_; }

 private:
  const Node* node_;  // kMacro or kCallBlock
  const Template* tmpl_;
  ScopePtr closure_;
  std::string name_;
  RenderCtx ctx_;  // context of the defining template (blocks and `self` inside the macro)
};

class NativeFunction : public Object {
 public:
  NativeFunction(std::string name, NativeFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string TypeName() const override { return "builtin_function_or_method"; }
  std::string Repr() const override { return "<built-in function " + name_ + ">"; }
  bool IsCallable() const override { return true; }
  Value Call(Interp& in, ValueList& args, Kwargs& kwargs) override { return fn_(in, args, kwargs); }

 private:
  std::string name_;
  NativeFn fn_;
};

class Namespace : public Object {
 public:
  std::string TypeName() const override { return "Namespace"; }
  std::string Repr() const override;
  bool GetAttr(const std::string& name, Value* out) const override;
  void SetAttr(const std::string& name, Value v);
  std::vector<std::pair<std::string, Value>> attrs;
};

// Iterable produced by range(); prints as Python does: range(0, 3).
class Range : public Object {
 public:
  Range(int64_t start, int64_t stop, int64_t step) : start_(start), stop_(stop), step_(step) {}
  std::string TypeName() const override { return "range"; }
  std::string Repr() const override;
  ValueList Items() const;
  bool Iter(ValueList* out) const override {
    *out = Items();
    return true;
  }

 private:
  int64_t start_, stop_, step_;
};

// Imported template: exported top-level names; str() is the template's output.
class Module : public Object {
 public:
  std::string TypeName() const override { return "TemplateModule"; }
  std::string Repr() const override { return "<Template module " + name + ">"; }
  std::string Str() const override { return output; }
  bool GetAttr(const std::string& attr, Value* out) const override;
  std::string name;
  std::string output;
  ScopePtr scope;
};

// ---- interpreter ----
class Interp {
 public:
  explicit Interp(EnvData& env) : env_(env) {}
  ~Interp();

  // Renders a template with `scope` as its top-level scope (Jinja2's root render function):
  // if it runs {% extends %}, then renders the parent with the same scope, and so on up the
  // chain (a loop, not a recursion); the block table is shared by the chain.
  void RenderTemplate(const Template& t, const ScopePtr& scope, std::string& out);
  // Renders definition `index` of block `name` of `ctx` (Jinja2's blocks[name][index](context));
  // `from` is the call position for error traces.
  void RenderBlock(const RenderCtx& ctx, const std::string& name, size_t index,
                   const SourcePos& from, std::string& out);
  // Renders the for loop `n` over `seq` (depth0 > 0: a recursive call, loop(items)).
  void RenderLoop(const Node& n, const ScopePtr& scope, const Value& seq, int64_t depth0,
                  std::string& out);
  const RenderCtx& ctx() const { return ctx_; }
  void RenderBody(const Body& body, const ScopePtr& scope, std::string& out);
  Value Eval(const Expr& e, const ScopePtr& scope);

  Value CallValue(const Value& callee, ValueList& args, Kwargs& kwargs);
  Value ApplyFilter(const std::string& name, const Value& input, ValueList& args, Kwargs& kwargs);
  bool ApplyTest(const std::string& name, const Value& input, ValueList& args, Kwargs& kwargs);
  Value GetAttr(const Value& obj, const std::string& name);  // Jinja environment.getattr
  Value GetItem(const Value& obj, const Value& key);         // Jinja environment.getitem
  Value Lookup(const std::string& name, const Scope& scope, int line, int col);
  ScopePtr NewRootScope();  // globals only (imports without context)

  SourcePos Pos(int line, int col) const { return SourcePos{cur_file_, line, col}; }
  // Position of the operation being evaluated (for undefined values made by filters/getattr).
  const SourcePos& here() const { return here_; }
  const Template* current() const { return cur_tmpl_; }
  EnvData& env() { return env_; }
  void Register(const ScopePtr& s) {
    if (cleanup_.empty() || cleanup_.back() != s) cleanup_.push_back(s);
  }
  void Register(const std::shared_ptr<Namespace>& ns) { namespaces_.push_back(ns); }

  // Depth accounting for macro calls and includes (limit kMaxDepth).
  static constexpr int kMaxDepth = 256;
  // Guards against runaway templates: total loop iterations and size of any output buffer.
  static constexpr int64_t kMaxLoopIterations = 100'000'000;
  static constexpr size_t kMaxOutputBytes = size_t{1} << 30;
  struct DepthGuard {
    Interp* in;
    explicit DepthGuard(Interp* i);
    ~DepthGuard() { --in->depth_; }
  };
  // Enters a function-like frame (macro, caller, block, block set): its output is never
  // suppressed by an extends, and, given `ctx`, blocks and `self` inside refer to that context.
  struct FrameGuard {
    Interp* in;
    RootState* saved_check;
    RenderCtx saved_ctx;
    bool switched;
    FrameGuard(Interp* i, const RenderCtx* ctx);
    ~FrameGuard();
    FrameGuard(const FrameGuard&) = delete;
    FrameGuard& operator=(const FrameGuard&) = delete;
  };
  // Switches the "current template" used for error positions.
  struct TemplateSwitch {
    Interp* in;
    const Template* saved;
    TemplateSwitch(Interp* i, const Template* t) : in(i), saved(i->cur_tmpl_) { in->SetCurrent(t); }
    ~TemplateSwitch() { in->SetCurrent(saved); }
  };

  const Value* block_input = nullptr;  // value of kBlockInput while applying block filters

 private:
  friend class Macro;
  void SetCurrent(const Template* t) {
    cur_tmpl_ = t;
    cur_file_ = t ? &t->name : nullptr;
  }
  Value EvalImpl(const Expr& e, const ScopePtr& scope);
  Value EvalCall(const Expr& e, const ScopePtr& scope);
  void EvalArgs(const Expr& e, const ScopePtr& scope, ValueList& args, Kwargs& kwargs);
  Value EvalCompare(const Expr& e, const ScopePtr& scope);
  void RenderNode(const Node& n, const ScopePtr& scope, std::string& out);
  void RenderFor(const Node& n, const ScopePtr& scope, std::string& out);
  void RenderInclude(const Node& n, const ScopePtr& scope, std::string& out);
  void RenderImport(const Node& n, const ScopePtr& scope);
  void RenderCallBlock(const Node& n, const ScopePtr& scope, std::string& out);
  void RenderExtends(const Node& n, const ScopePtr& scope);
  void RenderBlockNode(const Node& n, const ScopePtr& scope, std::string& out);
  // Throws OpError "'title' is not callable (a str)" unless `fn` is callable or undefined.
  void CheckCallable(const Expr& callee, const Value& fn) const;
  void Assign(const Expr& target, const Value& v, const ScopePtr& scope);
  Value ImportModule(const Node& n, const ScopePtr& scope);
  [[noreturn]] void Fail(int line, int col, const std::string& msg) const;

  EnvData& env_;
  const Template* cur_tmpl_ = nullptr;
  const std::string* cur_file_ = nullptr;
  int depth_ = 0;
  int64_t iterations_ = 0;
  RenderCtx ctx_;                   // context of the template being rendered
  RootState* out_check_ = nullptr;  // set in the root frames of a template that has extends
  Value hidden_loop_;  // undefined `loop` shadowing the includer's loop inside includes
  SourcePos here_;
  std::vector<ScopePtr> cleanup_;                       // scopes holding macros (cycle breaking)
  std::vector<std::shared_ptr<Namespace>> namespaces_;  // namespaces (cycle breaking)
};

// Builtins (filters.cc, tests.cc, methods.cc, ops.cc).
using FilterImpl = Value (*)(Interp& in, const Value& v, ValueList& args, Kwargs& kwargs);
using TestImpl = bool (*)(Interp& in, const Value& v, ValueList& args, Kwargs& kwargs);
FilterImpl FindBuiltinFilter(const std::string& name);
TestImpl FindBuiltinTest(const std::string& name);
// Python methods of str/dict/list: returns false if `recv` has no method `name`.
bool HasMethod(const Value& recv, const std::string& name);
Value CallMethod(Interp& in, const Value& recv, const std::string& name, ValueList& args,
                 Kwargs& kwargs);
void AddBuiltinGlobals(std::unordered_map<std::string, Value>& globals);

// Operators (ops.cc).
Value BinaryOp(const std::string& op, const Value& a, const Value& b);
Value UnaryMinus(const Value& a);
Value Slice(const Value& v, const Value& start, const Value& stop, const Value& step);
std::string PercentFormat(const std::string& fmt, const Value& args);  // Python "fmt % args"

// Argument helpers for builtins: bind positional/keyword arguments to named parameters.
struct ArgSpec {
  const char* fn;                            // function name for messages
  std::initializer_list<const char*> names;  // parameter names in order
  size_t required = 0;                       // number of required leading parameters
};
// Returns one Value per parameter (undefined-free None where missing and optional) and sets
// `given[i]` for the parameters that were passed. Throws OpError on bad arguments.
std::vector<Value> BindArgs(const ArgSpec& spec, ValueList& args, Kwargs& kwargs,
                            std::vector<bool>* given = nullptr);
int64_t ToInt(const Value& v, const char* what);  // requires an int/bool

}  // namespace msc::tmpl
