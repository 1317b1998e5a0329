// Runtime values of the template engine (internal header).
//
// A Value is one of Python's types as Jinja2 sees them: Undefined, None, bool, int (int64),
// float, str (UTF-8), list, tuple, dict, or an engine object (macro, namespace, loop, ...).
//
// Representation (16 bytes): a kind, flags and one word: bool/int/float, a pointer to a borrowed
// JSON node, or an intrusively reference-counted payload (StrBox/ListBox/DictBox/UndefBox/Object).
// Copying a Value never copies its contents: strings, lists and dicts are immutable once built
// and shared by every copy (counts are not atomic: an Environment and everything it renders
// belong to one thread). Data comes either as views into an nlohmann JSON document (read in
// place) or as native payloads built once by ParseJsonValue (environment.h's Data) in an arena;
// lists and dicts keep their items in the same allocation, and dict keys carry their hash.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "generator/tmpl/error.h"

namespace msc::tmpl {

using Json = nlohmann::ordered_json;
class Value;
class Interp;
class Macro;
class Namespace;
struct StrBox;

// Raised by operations that do not know the template position; the renderer catches it and
// throws TemplateError prefixed with the file:line:col of the expression being evaluated.
class OpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SourcePos {
  const std::string* file = nullptr;
  int line = 0;
  int col = 0;
};
std::string FormatPos(const SourcePos& pos);  // "file:line:col: "

// ---- small-block pool ----
// Per-thread free lists of small blocks (16-byte size classes up to 256 bytes, carved from
// 16 KiB chunks): a render makes and drops many short-lived small objects (strings, scopes,
// argument lists), and a free-list pop/push is much cheaper than malloc/free. Blocks above 256
// bytes use operator new. Under AddressSanitizer the pool is bypassed so that use-after-free
// stays detectable.
// 1 when AddressSanitizer instruments this build: the pool is then off (PoolAlloc/PoolFree are
// operator new/delete), so that ASan sees every use after free and overflow of engine objects.
// GCC defines __SANITIZE_ADDRESS__; clang 14 only answers __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define MSC_TMPL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSC_TMPL_ASAN 1
#endif
#endif
#ifndef MSC_TMPL_ASAN
#define MSC_TMPL_ASAN 0
#endif
void* PoolAlloc(size_t bytes);
void PoolFree(void* p, size_t bytes);

// std::allocator-compatible allocator over the pool (ValueList, ValueDict, Kwargs).
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(size_t n) { return static_cast<T*>(PoolAlloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { PoolFree(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const PoolAllocator<U>&) const {
    return false;
  }
};

// ---- intrusive reference counting ----
// Base of every heap payload: a reference count and the payload kind (which tells Destroy how to
// free it; no vtable for data payloads). Not thread-safe (see the header comment). A payload
// allocated in an Arena starts with one reference that is never released: it is freed with the
// arena, never on its own.
enum class BoxKind : uint8_t { kStr, kList, kDict, kUndef, kVirtual };

class RcBase {
 public:
  explicit RcBase(BoxKind k) : kind_(k) {}
  RcBase(const RcBase&) = delete;
  RcBase& operator=(const RcBase&) = delete;
  void AddRef() const { ++refs_; }
  void Release() const {
    if (--refs_ == 0) Destroy();
  }
  uint32_t refs() const { return refs_; }
  BoxKind box_kind() const { return kind_; }

 protected:
  ~RcBase() = default;  // payloads are freed by Destroy(), never through an RcBase*

 private:
  friend class Arena;
  void Destroy() const;  // value.cc
  mutable uint32_t refs_ = 0;
  BoxKind kind_;
};

// Base of reference-counted objects with virtual methods (engine objects, scopes).
class RcObject : public RcBase {
 public:
  RcObject() : RcBase(BoxKind::kVirtual) {}
  virtual ~RcObject() = default;
  static void* operator new(size_t n) { return PoolAlloc(n); }
  static void operator delete(void* p, size_t n) { PoolFree(p, n); }
};

// Owning pointer to an RcBase-derived T (like std::shared_ptr, with the count in the object).
template <class T>
class Rc {
 public:
  Rc() = default;
  Rc(std::nullptr_t) {}  // NOLINT: implicit like shared_ptr
  explicit Rc(T* p) : p_(p) {
    if (p_) p_->AddRef();
  }
  Rc(const Rc& o) : p_(o.p_) {
    if (p_) p_->AddRef();
  }
  Rc(Rc&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Rc(const Rc<U>& o) : p_(o.get()) {  // NOLINT: implicit upcast
    if (p_) p_->AddRef();
  }
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Rc(Rc<U>&& o) noexcept : p_(o.release()) {}  // NOLINT: implicit upcast
  ~Rc() {
    if (p_) p_->Release();
  }
  Rc& operator=(Rc o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  T* get() const { return p_; }
  T& operator*() const { return *p_; }
  T* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Rc& o) const { return p_ == o.p_; }
  bool operator!=(const Rc& o) const { return p_ != o.p_; }
  uint32_t use_count() const { return p_ ? p_->refs() : 0; }
  T* release() {  // gives up ownership without releasing
    T* p = p_;
    p_ = nullptr;
    return p;
  }

 private:
  T* p_ = nullptr;
};

template <class T, class... A>
Rc<T> MakeRc(A&&... a) {
  return Rc<T>(new T(std::forward<A>(a)...));
}

using ValueList = std::vector<Value, PoolAllocator<Value>>;
using ValueDict = std::vector<std::pair<Value, Value>, PoolAllocator<std::pair<Value, Value>>>;
using Kwargs =
    std::vector<std::pair<std::string, Value>, PoolAllocator<std::pair<std::string, Value>>>;

// Hash of a string key (64 bits, 8 bytes per step); dict lookups by string compare it first.
inline uint64_t HashStr(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  if (n >= 4) {  // two (overlapping) 4-byte loads cover 4..7 bytes
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    w = (uint64_t{a} << 32) | b;
  } else if (n > 0) {
    w = uint64_t{static_cast<unsigned char>(p[0])} |
        uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
        uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
  }
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  h *= 0x9E3779B97F4A7C15ull;
  h ^= h >> 32;
  return h | 1;  // never 0: 0 marks "not computed"
}

// s == t for short strings without a library call.
__attribute__((always_inline)) inline bool SameText(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    if (n > 16) return std::memcmp(p, q, n) == 0;
    uint64_t x0, y0, x1, y1;  // two (overlapping) 8-byte words cover 8..16 bytes
    std::memcpy(&x0, p, 8);
    std::memcpy(&y0, q, 8);
    std::memcpy(&x1, p + n - 8, 8);
    std::memcpy(&y1, q + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  if (n >= 4) {
    uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, p, 4);
    std::memcpy(&y0, q, 4);
    std::memcpy(&x1, p + n - 4, 4);
    std::memcpy(&y1, q + n - 4, 4);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  for (size_t k = 0; k < n; ++k)
    if (p[k] != q[k]) return false;
  return true;
}

// A name with its hash, computed once (names the engine binds itself: loop, caller, ...).
struct Name {
  std::string str;
  uint64_t hash = 0;
  Name() = default;
  explicit Name(std::string s) : str(std::move(s)), hash(HashStr(str)) {}
};

// A native str.
struct StrBox : RcBase {
  explicit StrBox(std::string v) : RcBase(BoxKind::kStr), s(std::move(v)) {}
  explicit StrBox(std::string_view v) : RcBase(BoxKind::kStr), s(v) {}
  static void* operator new(size_t n) { return PoolAlloc(n); }
  static void* operator new(size_t, void* where) { return where; }  // placement (arena)
  static void operator delete(void* p, size_t n) { PoolFree(p, n); }
  uint64_t Hash() const {
    if (!hash) hash = HashStr(s);
    return hash;
  }
  std::string s;
  mutable uint64_t hash = 0;  // HashStr(s), computed on first use as a dict key
};

// The interned string of `text` (HashStr `hash`): one box per distinct text in the process,
// never freed and never reference counted (Value::Interned), its hash set. Dict keys parsed from
// JSON and the attribute names of templates are interned, so that an attribute lookup compares
// two pointers. Returns null for texts longer than kMaxInternedText bytes or once kMaxInterned
// texts are interned (such keys are compared by hash and text). Thread-safe.
constexpr size_t kMaxInternedText = 64;
constexpr size_t kMaxInterned = size_t{1} << 16;
const StrBox* InternKey(std::string_view text, uint64_t hash);

// Engine objects: macros, namespaces, loop contexts, bound methods, modules, functions.
class Object : public RcObject {
 public:
  virtual std::string TypeName() const = 0;  // Python-ish type name used in messages
  virtual std::string Repr() const;          // repr(); default "<TypeName object>"
  virtual std::string Str() const { return Repr(); }
  virtual bool GetAttr(const std::string& name, Value* out) const;  // false: no attribute
  virtual bool IsCallable() const { return false; }
  virtual Value Call(Interp& in, ValueList& args, Kwargs& kwargs);
  virtual bool Iter(ValueList* out) const {
    (void)out;
    return false;
  }  // false: not iterable
  virtual Macro* AsMacro() { return nullptr; }
  virtual Namespace* AsNamespace() { return nullptr; }
};

struct UndefinedInfo {
  std::string message;   // e.g. "undefined variable 'foo'"
  SourcePos pos;         // where the undefined value was produced
  bool lenient = false;  // jinja2.Undefined (from `a if c` without else): prints as ''
};

struct ListBox;
struct DictBox;
class Arena;

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kTuple,
    kDict,
    kObject
  };

  Value() : i_(0) {}
  Value(const Value& o) {
    Assign(o);
    if (boxed_) rc_->AddRef();
  }
  Value(Value&& o) noexcept {
    Assign(o);
    o.boxed_ = false;
  }
  Value& operator=(const Value& o) {
    if (o.boxed_) o.rc_->AddRef();
    if (boxed_) rc_->Release();
    Assign(o);
    return *this;
  }
  Value& operator=(Value&& o) noexcept {
    if (this != &o) {
      if (boxed_) rc_->Release();
      Assign(o);
      o.boxed_ = false;
    }
    return *this;
  }
  ~Value() {
    if (boxed_) rc_->Release();
  }

  static Value Bool(bool b) {
    Value v;
    v.kind_ = Kind::kBool;
    v.b_ = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v;
    v.kind_ = Kind::kInt;
    v.i_ = i;
    return v;
  }
  static Value Float(double d) {
    Value v;
    v.kind_ = Kind::kFloat;
    v.f_ = d;
    return v;
  }
  static Value Str(std::string s);
  static Value Markup(std::string s);  // a str already HTML-escaped/safe (markupsafe.Markup)
  static Value List(ValueList items);
  static Value Tuple(ValueList items);
  static Value Pair(Value a, Value b);  // the 2-tuple (a, b)
  static Value Dict(ValueDict items);   // keys must be unique
  static Value Obj(Rc<Object> obj);
  static Value Undef(std::string message, SourcePos pos, bool lenient = false);
  // A view of JSON data, read in place: j must outlive every value derived from it (scalars are
  // converted; strings, lists and dicts stay views).
  static Value ViewJson(const Json& j);
  // A dict key: the interned string of `text` when it can be (InternKey; attribute lookups of
  // it then compare pointers), else Str(text). For the keys of dicts templates read by name.
  static Value Key(std::string_view text);
  // The interned string `box` (InternKey): shared by every copy without reference counting.
  static Value Interned(const StrBox* box) {
    Value v;
    v.kind_ = Kind::kString;
    v.rc_ = reinterpret_cast<RcBase*>(const_cast<StrBox*>(box));
    return v;
  }
  // A value owning (a payload of) `box` (a StrBox/ListBox/DictBox made by value.cc/Arena).
  static Value Boxed(Kind kind, const RcBase* box) {
    Value v;
    v.kind_ = kind;
    v.boxed_ = true;
    v.rc_ = const_cast<RcBase*>(box);
    v.rc_->AddRef();
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_lenient_undefined() const { return kind_ == Kind::kUndefined && undef().lenient; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool;
  }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_markup() const { return kind_ == Kind::kString && markup_; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_seq() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_object() const { return kind_ == Kind::kObject; }

  bool b() const { return b_; }
  int64_t i() const { return kind_ == Kind::kBool ? (b_ ? 1 : 0) : i_; }  // bool or int
  double f() const;                                                       // any number as double
  const std::string& s() const {                                          // string
    return json_ ? JsonStr(j_) : static_cast<const StrBox*>(rc_)->s;
  }
  uint64_t str_hash() const {  // HashStr(s()), cached for native strings
    return json_ ? HashStr(s()) : static_cast<const StrBox*>(rc_)->Hash();
  }
  // The box of an interned string (Interned), else null: two interned strings are equal exactly
  // when their boxes are the same.
  const StrBox* interned() const {
    return kind_ == Kind::kString && !json_ && !boxed_
               ? reinterpret_cast<const StrBox*>(static_cast<const RcBase*>(rc_))
               : nullptr;
  }
  size_t size() const;           // list/tuple/dict element count
  Value at(size_t index) const;  // list/tuple element
  // The elements of a native list/tuple (null for a JSON view): iteration without copies.
  // (reinterpret_cast: the payload types are only declared here; RcBase is their first and only
  // base, at offset 0.)
  const ListBox* native_list() const {
    return !json_ && (kind_ == Kind::kList || kind_ == Kind::kTuple)
               ? reinterpret_cast<const ListBox*>(rc_)
               : nullptr;
  }
  const DictBox* native_dict() const {  // a native dict's payload (null for a JSON view)
    return !json_ && kind_ == Kind::kDict ? reinterpret_cast<const DictBox*>(rc_) : nullptr;
  }
  bool Get(const std::string& key, Value* out) const;  // dict lookup
  // Dict lookup of a string key whose HashStr() is `hash`.
  bool Get(std::string_view key, uint64_t hash, Value* out) const;
  bool Get(const Value& key, Value* out) const;  // dict lookup by any key
  ValueDict Items() const;                       // dict items in order
  ValueList Keys() const;
  Object* obj() const { return static_cast<Object*>(static_cast<RcObject*>(rc_)); }
  const UndefinedInfo& undef() const;
  const void* identity() const {  // for `is sameas` on containers (and interned strings)
    return json_                              ? static_cast<const void*>(j_)
           : boxed_ || kind_ == Kind::kString ? static_cast<const void*>(rc_)
                                              : nullptr;
  }

  Json ToJson() const;  // OpError for values JSON cannot hold (undefined, macros...)

 private:
  static const std::string& JsonStr(const Json* j);
  // Copies o's representation (16 bytes: two word moves instead of five field copies; every
  // member is a plain scalar, so the bytes are the value).
  void Assign(const Value& o) {
    std::memcpy(static_cast<void*>(this), static_cast<const void*>(&o), sizeof(Value));
  }
  const Json& json() const { return *j_; }
  Kind kind_ = Kind::kNone;
  bool json_ = false;    // payload (string/list/dict) is the borrowed Json node j_
  bool markup_ = false;  // string is Markup: |e leaves it alone, + escapes the other operand
  bool boxed_ = false;   // payload is the counted box rc_
  union {
    bool b_;
    int64_t i_;
    double f_;
    const Json* j_;
    RcBase* rc_;
  };
};

static_assert(sizeof(Value) == 16, "a Value is a tag word and a payload word");

// A native list/tuple: the items follow the header in the same allocation.
struct alignas(alignof(Value)) ListBox : RcBase {
  uint32_t n = 0;
  const Value* begin() const { return reinterpret_cast<const Value*>(this + 1); }
  const Value* end() const { return begin() + n; }
  Value* items() { return reinterpret_cast<Value*>(this + 1); }
  size_t size() const { return n; }
  const Value& operator[](size_t k) const { return begin()[k]; }
  // A box for `n` items, default-constructed or, with `from`, moved from from[0..n) (arena:
  // allocated there, never freed alone).
  static ListBox* Make(size_t n, Arena* arena = nullptr, Value* from = nullptr);

 private:
  ListBox() : RcBase(BoxKind::kList) {}
};

// A native dict: n entries (insertion order) after the header, then, for dicts of more than
// kIndexFrom entries, an open-addressing index over the string keys' hashes (slot: entry + 1,
// 0 = empty), so a string lookup is O(1) whatever the size.
struct alignas(alignof(Value)) DictBox : RcBase {
  struct Entry {
    Value key;
    Value value;
  };
  static constexpr size_t kIndexFrom = 8;
  uint32_t n = 0;
  uint32_t cap = 0;  // index slots (a power of two), 0 without an index
  const Entry* begin() const { return reinterpret_cast<const Entry*>(this + 1); }
  const Entry* end() const { return begin() + n; }
  Entry* entries() { return reinterpret_cast<Entry*>(this + 1); }
  size_t size() const { return n; }
  // Index of the entry with string key `key` (HashStr `hash`; `interned`: its InternKey box, or
  // null), or -1.
  ptrdiff_t Find(std::string_view key, uint64_t hash, const StrBox* interned = nullptr) const {
    if (cap) {
      const uint32_t* index = reinterpret_cast<const uint32_t*>(end());
      for (size_t p = hash & (cap - 1);; p = (p + 1) & (cap - 1)) {
        const uint32_t slot = index[p];
        if (!slot) return -1;
        if (KeyIs(begin()[slot - 1].key, key, hash, interned)) return slot - 1;
      }
    }
    for (uint32_t k = 0; k < n; ++k)
      if (KeyIs(begin()[k].key, key, hash, interned)) return k;
    return -1;
  }
  // Whether entry k has the string key `key` (HashStr `hash`, InternKey box `interned` or null).
  bool KeyAt(size_t k, std::string_view key, uint64_t hash,
             const StrBox* interned = nullptr) const {
    return KeyIs(begin()[k].key, key, hash, interned);
  }
  // A box for `n` entries, default-constructed; call BuildIndex() once they are set. Repeated
  // keys are the caller's to avoid.
  // (construct=false: the caller placement-news every entry's key and value.)
  static DictBox* Make(size_t n, Arena* arena = nullptr, bool construct = true);
  void BuildIndex();
  // Whether `k` is the string `key` (HashStr `hash`, InternKey box `interned` or null).
  static bool KeyIs(const Value& k, std::string_view key, uint64_t hash, const StrBox* interned) {
    if (const StrBox* b = k.interned()) {
      if (interned) return b == interned;  // both interned: equal texts share the box
      return b->hash == hash && SameText(b->s, key);
    }
    return k.is_string() && k.str_hash() == hash && SameText(k.s(), key);
  }

 private:
  DictBox() : RcBase(BoxKind::kDict) {}
};

static_assert(sizeof(ListBox) % alignof(Value) == 0, "list items follow the header");
static_assert(sizeof(DictBox) % alignof(Value) == 0, "dict entries follow the header");

// Bump allocator owning the payloads of parsed data (ParseJsonValue): one block per many
// payloads, freed all at once. Values from it must not outlive it.
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();
  void* Alloc(size_t bytes) {  // 8-byte aligned
    bytes = (bytes + 7) & ~size_t{7};
    if (bytes > left_) return AllocBlock(bytes);
    void* p = cur_;
    cur_ += bytes;
    left_ -= bytes;
    return p;
  }
  // Expects about `bytes` of payloads: one block of that size (big ones on huge pages where the
  // system offers them: fewer page faults).
  void Reserve(size_t bytes);
  // Takes a payload just constructed in Alloc()'d memory: it gets the arena's reference.
  template <class T>
  T* Adopt(T* box) {
    box->refs_ = 1;
    return box;
  }
  void AdoptString(StrBox* box);  // also runs ~StrBox when the arena goes (heap text)

 private:
  void* AllocBlock(size_t bytes);  // Alloc when the current block is full
  std::vector<char*> blocks_;
  std::vector<StrBox*> strings_;  // with text beyond the inline (SSO) buffer
  void* mapped_ = nullptr;        // Reserve()'s mapping, if any
  size_t mapped_size_ = 0;
  char* cur_ = nullptr;
  size_t left_ = 0;
};

// Parses JSON text (RFC 8259; UTF-8) into native values allocated in `arena`: objects become
// dicts (key order kept; a repeated key keeps its first position and its last value, as
// Python's json does), arrays lists, numbers int (64-bit; beyond is an error) or float. Throws
// OpError "line L, column C: <problem>" on invalid input.
Value ParseJsonValue(std::string_view text, Arena* arena);
// Deep conversion of a JSON document into native (heap) values.
Value FromJsonDeep(const Json& j);

// Guards recursion over nested values (printing, comparing, converting): more than
// kMaxValueDepth levels is an OpError, like Python's RecursionError, instead of a stack overflow.
constexpr int kMaxValueDepth = 1000;
class ValueDepthGuard {
 public:
  ValueDepthGuard();
  ~ValueDepthGuard() { --depth_; }
  ValueDepthGuard(const ValueDepthGuard&) = delete;
  ValueDepthGuard& operator=(const ValueDepthGuard&) = delete;

 private:
  static thread_local int depth_;
};

// Python's Py_ReprEnter: marks a container as being printed so that printing it again from
// inside itself yields "[...]" / "{...}" instead of recursing forever.
class ReprGuard {
 public:
  explicit ReprGuard(const void* id);
  ~ReprGuard();
  ReprGuard(const ReprGuard&) = delete;
  ReprGuard& operator=(const ReprGuard&) = delete;
  bool recursive() const { return recursive_; }

 private:
  const void* id_;
  bool recursive_ = false;
};

// Python semantics helpers. All throw TemplateError for undefined operands (StrictUndefined) and
// OpError for type errors.
[[noreturn]] void ThrowUndefined(const Value& v);
std::string TypeName(const Value& v);  // "int", "str", "dict", ...
bool Truthy(const Value& v);
void AppendStr(std::string& out, const Value& v);  // str(v)
std::string ToStr(const Value& v);
std::string Repr(const Value& v);
bool Equals(const Value& a, const Value& b);
// Equals with the common case (two strings) inline.
inline bool EqualsFast(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) {
    if (a.identity() == b.identity()) return true;  // the same string (or interned text)
    return SameText(a.s(), b.s());
  }
  return Equals(a, b);
}
// Three-way comparison for <, <=, >, >= (op names the operator for the TypeError message).
int Compare(const Value& a, const Value& b, const char* op = "<");
bool Contains(const Value& container, const Value& item);  // `item in container`
// Contains with a native list/tuple of the container read in place.
inline bool ContainsFast(const Value& container, const Value& item) {
  if (const ListBox* l = item.is_undefined() ? nullptr : container.native_list()) {
    for (const Value& x : *l)
      if (EqualsFast(x, item)) return true;
    return false;
  }
  return Contains(container, item);
}
ValueList Iterate(const Value& v);    // iter(v) materialized
int64_t Len(const Value& v);          // len(v)
std::string HashKey(const Value& v);  // equal values (1 == 1.0 == True) give equal keys

}  // namespace msc::tmpl
