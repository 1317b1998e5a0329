// Template interpreter: scopes, runtime objects and evaluation (internal header).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "generator/tmpl/ast.h"
#include "generator/tmpl/value.h"

namespace msc::tmpl {

using Function = std::function<Json(const std::vector<Json>& args, const Json& kwargs)>;
using StreamSink = std::function<void(std::string_view piece)>;  // Environment::Sink

// A vector keeping its first N elements inline (no allocation for small scopes).
template <class T, size_t N>
class SmallVec {
 public:
  SmallVec() = default;
  SmallVec(const SmallVec&) = delete;
  SmallVec& operator=(const SmallVec&) = delete;
  ~SmallVec() {
    clear();
    if (data_ != Inline()) ::operator delete(static_cast<void*>(data_));
  }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    for (size_t k = 0; k < size_; ++k) data_[k].~T();
    size_ = 0;
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
    for (size_t k = 0; k < size_; ++k) {
      new (fresh + k) T(std::move(data_[k]));
      data_[k].~T();
    }
    if (data_ != Inline()) ::operator delete(static_cast<void*>(data_));
    data_ = fresh;
    cap_ = n;
  }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    new (data_ + size_) T(std::move(v));
    ++size_;
  }

 private:
  T* Inline() { return reinterpret_cast<T*>(buf_); }
  alignas(T) unsigned char buf_[N * sizeof(T)];
  T* data_ = Inline();
  size_t size_ = 0;
  size_t cap_ = N;
};

// Up to kInlineArgs call arguments on the stack (a macro call's positional arguments).
constexpr size_t kInlineArgs = 8;
class InlineArgs {
 public:
  InlineArgs() = default;
  InlineArgs(const InlineArgs&) = delete;
  InlineArgs& operator=(const InlineArgs&) = delete;
  ~InlineArgs() {
    for (size_t k = 0; k < n_; ++k) data()[k].~Value();
  }
  void Push(Value v) { new (data() + n_++) Value(std::move(v)); }  // at most kInlineArgs
  Value* data() { return reinterpret_cast<Value*>(buf_); }
  size_t size() const { return n_; }

 private:
  alignas(Value) unsigned char buf_[kInlineArgs * sizeof(Value)];
  size_t n_ = 0;
};

// A variable scope. Lookups walk parent links; a root scope may expose the render data (a dict).
// Variable names are compared by hash first; a name passed to Set must outlive the scope (names
// come from the parsed template or are static).
struct Scope : RcObject {
  struct Var {
    const std::string* name;
    uint64_t hash;
    Value value;
  };
  SmallVec<Var, 4> vars;
  Rc<Scope> parent;
  Value data;  // root scopes: the template context (render data dict); None otherwise

  bool Find(const std::string& name, uint64_t hash, Value* out) const;
  bool Find(const Name& name, Value* out) const { return Find(name.str, name.hash, out); }
  // The variable's value in place (a scope variable or a native data dict entry), or null when
  // it is not there or only a JSON view has it (then Find). With `hint`, sets *hint to the index
  // in `vars` when the variable is one of this scope's own.
  const Value* FindRef(const std::string& name, uint64_t hash, uint32_t* hint = nullptr) const;
  void Set(const std::string& name, uint64_t hash, Value v);
  void Set(const Name& name, Value v) { Set(name.str, name.hash, std::move(v)); }
};
using ScopePtr = Rc<Scope>;

class Interp;
using NativeFn = std::function<Value(Interp& in, ValueList& args, Kwargs& kwargs)>;

// Environment state shared by every render (owned by Environment).
struct EnvData {
  // Folders searched in order (jinja2.FileSystemLoader([...])): the first that has the file wins.
  std::vector<std::string> search_path;
  std::unordered_map<std::string, Function> filters;  // user filters
  std::unordered_map<std::string, Value> globals;     // user globals and functions
  std::unordered_map<std::string, std::unique_ptr<const Template>> file_cache;  // never evicted
  std::unordered_map<std::string, std::shared_ptr<const Template>> string_cache;

  // Resolves `name` against each folder of search_path in turn (jinja2 FileSystemLoader rules),
  // loading and caching the first file found (the template lives as long as the environment).
  // Returns null if no folder has it; throws OpError if the name escapes the search path.
  const Template* Load(const std::string& name);
  std::shared_ptr<const Template> FromString(const std::string& source, const std::string& name);
  // Throws TemplateError for filters/tests that do not exist (Jinja2 checks these at compile time).
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
  // Renders the call's output straight into `out` (what Call returns as a str); the positional
  // arguments are args[0..nargs).
  void CallInto(Interp& in, const Value* args, size_t nargs, Kwargs& kwargs, std::string& out);
  Macro* AsMacro() override { return this; }
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
  Namespace* AsNamespace() override { return this; }
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
  // Streams the render's output: whenever `root` (the buffer the top-level template renders
  // into) holds kStreamChunk bytes or more after a statement, it goes to `sink` and is cleared.
  void StreamTo(std::string* root, const StreamSink* sink) {
    stream_root_ = root;
    sink_ = sink;
  }
  // Gives what `root` still holds to the sink (the end of a streamed render).
  void FlushStream(std::string& root);
  void RenderBody(const Body& body, const ScopePtr& scope, std::string& out);
  // The value of `e` in place when it is a constant, a variable or an attribute path over
  // native dicts (x.y.z) that resolves without computing anything (borrowed from the template,
  // a scope or the data; valid while the expression is evaluated). Null: Eval it.
  const Value* Peek(const Expr& e, const Scope& scope) const {
    if (e.kind == Expr::K::kConst) return &e.value;
    if (e.kind == Expr::K::kName) return FindName(e, scope);
    if (e.kind != Expr::K::kGetAttr) return nullptr;
    const Expr* chain[8];  // the attribute names, outermost first
    size_t n = 0;
    const Expr* base = &e;
    for (; base->kind == Expr::K::kGetAttr; base = base->items[0].get()) {
      if (n == 8 || (base->methods & kDictMethod)) return nullptr;  // d.items etc. are methods
      chain[n++] = base;
    }
    const Value* v = base->kind == Expr::K::kName    ? FindName(*base, scope)
                     : base->kind == Expr::K::kConst ? &base->value
                                                     : nullptr;
    while (v && n) {
      const DictBox* d = v->native_dict();
      if (!d) return nullptr;
      v = DictAttr(*d, *chain[--n]);
    }
    return v;
  }
  // The value of key a.name (a kGetAttr) in `d`, or null: the entry where a.name was found last
  // time is tried first (dicts built from the same JSON shape keep their keys in the same order).
  static const Value* DictAttr(const DictBox& d, const Expr& a) {
    if (a.slot_hint < d.size()) {
      const DictBox::Entry& e = d.begin()[a.slot_hint];
      const StrBox* k = e.key.interned();
      if (k && a.key ? k == a.key : DictBox::KeyIs(e.key, a.name, a.hash, a.key)) return &e.value;
    }
    const ptrdiff_t k = d.Find(a.name, a.hash, a.key);
    if (k < 0) return nullptr;
    a.slot_hint = static_cast<uint32_t>(k);
    return &d.begin()[k].value;
  }
  // The value of the name `e` (a kName) in place: Scope::FindRef, trying first the index in the
  // innermost scope where it was found last time (names are unique within a scope, so a match
  // there is the innermost binding).
  static const Value* FindName(const Expr& e, const Scope& scope) {
    const uint32_t h = e.var_hint;
    if (h < scope.vars.size()) {
      const Scope::Var& v = scope.vars.begin()[h];
      if (v.hash == e.hash && SameText(*v.name, e.name)) return &v.value;
    }
    return scope.FindRef(e.name, e.hash, &e.var_hint);
  }
  // Peek(e), else Eval(e) stored in `tmp`.
  const Value& EvalRef(const Expr& e, const ScopePtr& scope, Value& tmp) {
    if (const Value* v = Peek(e, *scope)) return *v;
    tmp = Eval(e, scope);
    return tmp;
  }
  // Evaluates `e`; an OpError becomes TemplateError at e's position. Constants and names are
  // handled inline (they cannot fail).
  Value Eval(const Expr& e, const ScopePtr& scope) {
    if (e.kind == Expr::K::kConst) return e.value;
    if (e.kind == Expr::K::kName) {
      if (const Value* v = FindName(e, *scope)) return *v;
      return EvalNameSlow(e, *scope);
    }
    if (e.kind == Expr::K::kGetAttr) {  // an attribute path read in place
      const Expr& base = *e.items[0];
      if (base.kind == Expr::K::kName && !(e.methods & kDictMethod)) {
        if (const Value* obj = FindName(base, *scope)) {  // name.attr: the name looked up once
          if (const DictBox* d = obj->native_dict())
            if (const Value* v = DictAttr(*d, e)) return *v;
          return EvalAttr(e, *obj);
        }
      } else if (const Value* v = Peek(e, *scope)) {
        return *v;
      }
    }
    return EvalChecked(e, scope);
  }

  // Truthy(Eval(e)) (if/elif conditions, `x if c`, `not c`, loop filters); comparisons by ==,
  // !=, in and not in are computed in place.
  bool Cond(const Expr& e, const ScopePtr& scope);
  // Calls `callee`. With `sink`, a macro renders into *sink instead of returning its output
  // (then *printed is set and the result is None).
  Value CallValue(const Value& callee, ValueList& args, Kwargs& kwargs, std::string* sink = nullptr,
                  bool* printed = nullptr);
  // Calls macro `m` with positional arguments args[0..nargs) and `kwargs`, rendering into `out`;
  // errors inside get a line "  in macro 'm' called from <here_>".
  void CallMacro(Macro& m, const Value* args, size_t nargs, Kwargs& kwargs, std::string& out);
  // `builtin`: the builtin filter `name` when already known (a user filter still overrides it).
  Value ApplyFilter(const std::string& name, const Value& input, ValueList& args, Kwargs& kwargs,
                    FilterImpl builtin = nullptr);
  bool ApplyTest(const std::string& name, const Value& input, ValueList& args, Kwargs& kwargs);
  Value GetAttr(const Value& obj, const std::string& name);  // Jinja environment.getattr
  Value GetItem(const Value& obj, const Value& key);         // Jinja environment.getitem
  Value Lookup(const std::string& name, const Scope& scope, int line, int col);
  // `self`, environment globals, else an undefined value (names not found in the scopes).
  Value LookupGlobal(const std::string& name, int line, int col);
  ScopePtr NewRootScope();  // globals only (imports without context)
  // A fresh scope under `parent`, reusing one a finished frame gave back (Recycle).
  ScopePtr NewScope(ScopePtr parent) {
    ScopePtr s;
    if (!free_scopes_.empty()) {
      s = std::move(free_scopes_.back());
      free_scopes_.pop_back();
    } else {
      s = MakeRc<Scope>();
    }
    s->parent = std::move(parent);
    return s;
  }
  // Gives a finished frame's scope back for reuse unless something still holds it (a macro
  // defined in it, a loop object...); `s` is null afterwards.
  void Recycle(ScopePtr& s) {
    if (s && s.use_count() == 1 && free_scopes_.size() < 64) {
      s->vars.clear();
      s->parent = nullptr;
      s->data = Value();
      free_scopes_.push_back(std::move(s));
    }
    s = nullptr;
  }

  SourcePos Pos(int line, int col) const { return SourcePos{cur_file_, line, col}; }
  // Position of the operation being evaluated (for undefined values made by filters/getattr).
  const SourcePos& here() const { return here_; }
  const Template* current() const { return cur_tmpl_; }
  EnvData& env() { return env_; }
  void Register(const ScopePtr& s) {
    if (cleanup_.empty() || cleanup_.back() != s) cleanup_.push_back(s);
  }
  void Register(const Rc<Namespace>& ns) { namespaces_.push_back(ns); }

  // Depth accounting for macro calls and includes (limit kMaxDepth).
  static constexpr int kMaxDepth = 256;
  // Guards against runaway templates: total loop iterations and size of any output buffer.
  static constexpr int64_t kMaxLoopIterations = 100'000'000;
  static constexpr size_t kMaxOutputBytes = size_t{1} << 30;
  static constexpr size_t kStreamChunk = size_t{64} << 10;  // Environment::kStreamChunk
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
  Value EvalChecked(const Expr& e, const ScopePtr& scope);
  // e (a kGetAttr) on the value `obj` of its base: what EvalChecked(e) computes.
  Value EvalAttr(const Expr& e, const Value& obj);
  Value EvalAttrOn(const Expr& e, const Value& obj);  // EvalAttr without the error position
  // A name FindName did not find: in a JSON view (Scope::Find), else LookupGlobal.
  Value EvalNameSlow(const Expr& e, const Scope& scope);
  Value EvalImpl(const Expr& e, const ScopePtr& scope);
  // EvalImpl's bulkier cases (kept out of it so that its frame stays small).
  Value EvalSeq(const Expr& e, const ScopePtr& scope);
  Value EvalDict(const Expr& e, const ScopePtr& scope);
  Value EvalGetItem(const Expr& e, const ScopePtr& scope);
  Value EvalFilter(const Expr& e, const ScopePtr& scope);
  Value EvalTest(const Expr& e, const ScopePtr& scope);
  Value EvalConcat(const Expr& e, const ScopePtr& scope);
  Value EvalCall(const Expr& e, const ScopePtr& scope, std::string* sink = nullptr,
                 bool* printed = nullptr);
  // {{ expr }}: appends str(expr) to out (macro calls and string filters write into it directly).
  // `at`: the expression whose position str() errors get (e's by default).
  void Print(const Expr& e, const ScopePtr& scope, std::string& out, const Expr* at = nullptr);
  void EvalArgs(const Expr& e, const ScopePtr& scope, ValueList& args, Kwargs& kwargs);
  Value EvalCompare(const Expr& e, const ScopePtr& scope);
  void RenderNode(const Node& n, const ScopePtr& scope, std::string& out);
  // After statement `n` left kStreamChunk bytes or more in `out`: streams the root buffer, checks
  // the size limit of the others.
  void CheckOutput(const Node& n, std::string& out);
  void RenderBlockSet(const Node& n, const ScopePtr& scope, std::string& out);
  void RenderWith(const Node& n, const ScopePtr& scope, std::string& out);
  void RenderFor(const Node& n, const ScopePtr& scope, std::string& out);
  // The loop of a Node::dictsort_loop over `d` (the filter's input) when it is a native dict
  // with ASCII string keys: the entries in dictsort's order, read in place. False otherwise
  // (nothing rendered).
  bool RenderSortedDictLoop(const Node& n, const ScopePtr& scope, const Value& d, std::string& out);
  void RenderInclude(const Node& n, const ScopePtr& scope, std::string& out);
  // Renders the template `t` that include `n` loaded.
  void RenderIncluded(const Node& n, const Template& t, const ScopePtr& scope, std::string& out);
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
  std::vector<ScopePtr> cleanup_;          // scopes holding macros (cycle breaking)
  std::vector<Rc<Namespace>> namespaces_;  // namespaces (cycle breaking)
  std::vector<ScopePtr> free_scopes_;      // recycled scopes (NewScope)
  std::string* stream_root_ = nullptr;     // StreamTo
  const StreamSink* sink_ = nullptr;
  size_t streamed_ = 0;  // bytes given to sink_ so far
};

// dictsort's default order (keys case-folded, stable) of a dict whose keys are all ASCII strings:
// order[0..d.size()) gets the entry indexes. False (order unspecified) when some key is not an
// ASCII string.
bool SortedKeyOrder(const DictBox& d, uint32_t* order);  // filters.cc

// Builtins (filters.cc, tests.cc, methods.cc, ops.cc).
FilterImpl FindBuiltinFilter(const std::string& name);
FilterAppendImpl FindBuiltinFilterAppend(const std::string& name);  // null: none
TestImpl FindBuiltinTest(const std::string& name);
// Python methods of str/dict/list: returns false if `recv` has no method `name`.
bool HasMethod(const Value& recv, const std::string& name);
Value CallMethod(Interp& in, const Value& recv, const std::string& name, ValueList& args,
                 Kwargs& kwargs);
void AddBuiltinGlobals(std::unordered_map<std::string, Value>& globals);

// Operators (ops.cc).
Value BinaryOp(BinOp op, const Value& a, const Value& b);
Value UnaryMinus(const Value& a);
Value Slice(const Value& v, const Value& start, const Value& stop, const Value& step);
std::string PercentFormat(const std::string& fmt, const Value& args);  // Python "fmt % args"
// Python's fmt.format(*args, **kwargs) appended to `out` (format.cc).
void StrFormatTo(std::string& out, std::string_view fmt, const Value* args, size_t nargs,
                 const Kwargs& kwargs);
// The same with the arguments given as items[0..n) (a tuple's items), or, with `mapping`, as the
// dict items[0]; appends to `out`.
void PercentFormatTo(std::string& out, const std::string& fmt, const Value* items, size_t n,
                     bool mapping);

// Argument helpers for builtins: bind positional/keyword arguments to named parameters.
struct ArgSpec {
  const char* fn;                            // function name for messages
  std::initializer_list<const char*> names;  // parameter names in order
  size_t required = 0;                       // number of required leading parameters
};
// Which parameters were passed (bit i: parameter i).
struct ArgFlags {
  uint32_t bits = 0;
  bool operator[](size_t i) const { return (bits >> i) & 1u; }
};
// The bound parameters: one value per parameter (None where missing and optional), referring
// to the call's arguments (valid while they are).
class BoundArgs {
 public:
  static constexpr size_t kMax = 4;  // the most parameters of a builtin (truncate)
  BoundArgs() : v_{&None(), &None(), &None(), &None()} {}
  const Value& operator[](size_t i) const { return *v_[i]; }
  void Set(size_t i, const Value& v) { v_[i] = &v; }

 private:
  static const Value& None() {
    static const Value none;
    return none;
  }
  const Value* v_[kMax];
};
// Binds `args`/`kwargs` to spec's parameters and sets `given`. Throws OpError on bad arguments.
BoundArgs BindArgs(const ArgSpec& spec, ValueList& args, Kwargs& kwargs, ArgFlags* given = nullptr);
int64_t ToInt(const Value& v, const char* what);  // requires an int/bool

}  // namespace msc::tmpl
