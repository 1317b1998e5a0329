// Abstract syntax tree of a parsed template (internal header).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "generator/tmpl/value.h"

namespace msc::tmpl {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// Builtin filter/test implementations (filters.cc, builtin_tests.cc), resolved at parse time.
using FilterImpl = Value (*)(Interp& in, const Value& v, ValueList& args, Kwargs& kwargs);
using TestImpl = bool (*)(Interp& in, const Value& v, ValueList& args, Kwargs& kwargs);
// A builtin filter returning a str, writing it to `out` instead (`{{ x|join(", ") }}`).
using FilterAppendImpl = void (*)(Interp& in, const Value& v, ValueList& args, Kwargs& kwargs,
                                  std::string& out);

// Binary and comparison operators, resolved at parse time.
enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow };
enum class CmpOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };
const char* BinOpName(BinOp op);  // "+", "-", ...
const char* CmpOpName(CmpOp op);  // "==", "<", ... ("in", "not in")

// Which receivers have a Python method of a given name (Jinja2's getattr prefers a str/dict/
// list method over a dict key of the same name): bits of MethodMask(name).
enum : uint8_t { kStrMethod = 1, kDictMethod = 2, kListMethod = 4, kTupleMethod = 8 };
uint8_t MethodMask(const std::string& name);  // methods.cc

struct Expr {
  enum class K : uint8_t {
    kConst,       // value
    kName,        // name
    kList,        // items
    kTuple,       // items
    kDict,        // items: key, value, key, value, ...
    kGetAttr,     // items[0] . name
    kGetItem,     // items[0] [ items[1] ]
    kSlice,       // items[0..2] (start, stop, step; null when omitted) -- only as GetItem index
    kCall,        // items[0](args...)
    kFilter,      // items[0] | name(args...); items[0] == null inside filter blocks
    kTest,        // items[0] is name(args...)
    kNeg,         // -items[0]
    kPos,         // +items[0]
    kNot,         // not items[0]
    kBinary,      // items[0] name items[1]   name in + - * / // % **
    kConcat,      // items joined with ~
    kCompare,     // items[0] ops[0] items[1] ops[1] items[2] ...
    kAnd,         // items[0] and items[1]
    kOr,          // items[0] or items[1]
    kCond,        // items[1] if items[0] else items[2] (items[2] may be null)
    kBlockInput,  // the rendered body of a filter block / block set
  };
  K kind = K::kConst;
  int line = 0;
  int col = 0;
  Value value;                  // kConst
  std::string name;             // kName, kGetAttr, kFilter, kTest, kBinary
  uint64_t hash = 0;            // kName, kGetAttr: HashStr(name)
  uint8_t methods = 0;          // kGetAttr: MethodMask(name)
  const StrBox* key = nullptr;  // kGetAttr: InternKey(name) (null: not interned)
  bool str_format = false;      // kCall: "literal".format(...) (printed in place)
  // kGetAttr: the entry index where `name` was last found in a native dict (dicts built from
  // the same JSON shape keep their keys in the same order: checked first).
  mutable uint32_t slot_hint = 0;
  // kName: the index in the innermost scope's variables where the name was last found there
  // (Interp::FindName tries it first).
  mutable uint32_t var_hint = 0;
  BinOp op = BinOp::kAdd;                    // kBinary
  FilterImpl filter = nullptr;               // kFilter: the builtin filter `name` (null: none)
  FilterAppendImpl filter_append = nullptr;  // kFilter: its appending form, if it has one
  TestImpl test = nullptr;                   // kTest: the builtin test `name` (null: none)
  std::vector<ExprPtr> items;                // operands
  std::vector<CmpOp> ops;                    // kCompare operators
  // Call arguments (kCall, kFilter, kTest): positional args, keyword args, *args, **kwargs.
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  ExprPtr dyn_args;
  ExprPtr dyn_kwargs;
};

struct Node;
struct Template;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct MacroParam {
  std::string name;
  uint64_t hash = 0;      // HashStr(name)
  ExprPtr default_value;  // may be null
};

struct Node {
  enum class K : uint8_t {
    kText,         // text
    kPrint,        // expr
    kIf,           // conds[i] -> bodies[i]; else_body
    kFor,          // target in expr [if cond] body / else_body
    kSet,          // target = expr
    kSetBlock,     // target (name or ns.attr), optional filter expr (kBlockInput based), body
    kMacro,        // name(params) body
    kCallBlock,    // expr (a kCall), params (caller's), body
    kInclude,      // expr, ignore_missing, with_context
    kImport,       // expr as name, with_context
    kFromImport,   // expr import names (name, alias), with_context
    kFilterBlock,  // expr (filter chain on kBlockInput), body
    kWith,         // targets[i] = values[i], body
    kExtends,      // expr (parent template name)
    kBlock,        // name, body, scoped, required, toplevel
  };
  K kind = K::kText;
  int line = 0;
  int col = 0;
  std::string text;            // kText
  std::string name;            // kMacro name, kImport alias
  uint64_t hash = 0;           // HashStr(name)
  ExprPtr expr;                // main expression
  ExprPtr target;              // assignment target (kName, kTuple of targets, kGetAttr for ns.attr)
  ExprPtr cond;                // kFor filter condition
  std::vector<ExprPtr> conds;  // kIf conditions
  std::vector<Body> bodies;    // kIf bodies (parallel to conds)
  Body body;
  Body else_body;
  std::vector<MacroParam> params;
  std::vector<std::pair<std::string, std::string>> names;  // kFromImport (name, alias)
  std::vector<uint64_t> alias_hashes;                      // kFromImport: HashStr(alias)
  std::vector<ExprPtr> targets;                            // kWith
  std::vector<ExprPtr> values;                             // kWith
  bool ignore_missing = false;
  bool with_context = false;
  bool recursive = false;  // kFor: `recursive` (the body may call loop(items))
  // kFor: whether the body can see `loop` (names it, or has a block that a child template's
  // scoped block could override); otherwise no loop object is made.
  bool uses_loop = true;
  // kFor: `for k, v in EXPR|dictsort` (two different names, no `loop`, no filter condition, not
  // recursive): over a native dict with ASCII string keys the entries are visited in sorted order
  // in place (Interp::RenderSortedDictLoop) instead of building the list of pairs.
  bool dictsort_loop = false;
  // dictsort_loop: the order found for the last dict whose keys were all interned (key boxes
  // in entry order, then the sorted entry indexes), reused for dicts with the same keys.
  struct SortedKeys {
    std::vector<const void*> keys;
    std::vector<uint32_t> order;
  };
  mutable std::unique_ptr<SortedKeys> sorted_keys;
  // kInclude with a constant name: the template it loaded (the environment keeps it).
  mutable const Template* include_cache = nullptr;
  bool scoped = false;    // kBlock: sees the local variables where it is rendered
  bool required = false;  // kBlock: must be overridden by a template extending this one
  // kBlock: rendered at the top level of the template (not inside a for/macro/block/...), so
  // skipped once the template has run an `extends` (Jinja2's frame.toplevel).
  bool toplevel = false;
  // kMacro / kCallBlock: whether the body references caller / varargs / kwargs.
  bool uses_caller = false;
  bool uses_varargs = false;
  bool uses_kwargs = false;
};

bool MentionsLoop(const Body& body);  // parser.cc: some expression in `body` names `loop`

// A parsed template. `name` is the path used in error messages; `load_name` the name it was
// loaded by (e.g. "base.j2"; equal to `name` for templates rendered from a string).
struct Template {
  std::string name;
  std::string load_name;
  Body body;
  std::vector<const Node*> blocks;  // every {% block %} at any depth, in source order
  bool has_extends = false;         // has an {% extends %} (always at the top level)
  // Whether an include with context must give it a scope of its own: it assigns names at its
  // top level (set, macro, import), has blocks or extends, or names `loop` (which an included
  // template must not see). Otherwise it renders directly in the includer's scope.
  bool include_needs_scope = true;
};

}  // namespace msc::tmpl
