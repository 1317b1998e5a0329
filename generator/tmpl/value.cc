#include "generator/tmpl/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <new>

#include <sys/mman.h>

#include "generator/tmpl/error.h"
#include "generator/tmpl/pystr.h"

namespace msc::tmpl {

std::string FormatPos(const SourcePos& pos) {
  std::string out = pos.file ? *pos.file : std::string("<template>");
  if (pos.line > 0) {
    out += ":" + std::to_string(pos.line);
    if (pos.col > 0) out += ":" + std::to_string(pos.col);
  }
  return out + ": ";
}

thread_local int ValueDepthGuard::depth_ = 0;

ValueDepthGuard::ValueDepthGuard() {
  if (++depth_ > kMaxValueDepth) {
    --depth_;
    throw OpError("maximum recursion depth exceeded (value nested more than " +
                  std::to_string(kMaxValueDepth) + " levels deep)");
  }
}

namespace {
thread_local std::vector<const void*> g_repr_active;
}  // namespace

ReprGuard::ReprGuard(const void* id) : id_(id) {
  if (!id_) return;
  for (const void* p : g_repr_active)
    if (p == id_) recursive_ = true;
  if (!recursive_) g_repr_active.push_back(id_);
}

ReprGuard::~ReprGuard() {
  if (id_ && !recursive_) g_repr_active.pop_back();
}

std::string Object::Repr() const { return "<" + TypeName() + " object>"; }
bool Object::GetAttr(const std::string&, Value*) const { return false; }
Value Object::Call(Interp&, ValueList&, Kwargs&) {
  throw OpError("'" + TypeName() + "' object is not callable");
}

// ---- small-block pool (value.h; off under AddressSanitizer) ----
#if MSC_TMPL_ASAN
void* PoolAlloc(size_t bytes) { return ::operator new(bytes); }
void PoolFree(void* p, size_t) { ::operator delete(p); }
#else
namespace {

constexpr size_t kPoolMax = 256;
constexpr size_t kPoolClasses = kPoolMax / 16;
constexpr size_t kPoolChunk = 16 << 10;  // bytes carved into blocks of one class at a time

// Free blocks per size class, carved from chunks that are never freed (a block goes back to the
// list of the thread freeing it, never to operator delete). So a block may move between threads
// (an Environment built in one thread and dropped in another) and stay valid; what a thread's
// lists hold when it ends stays allocated (bounded by the peak of small objects alive at once).
struct Pool {
  void* head[kPoolClasses] = {};
};
thread_local Pool g_pool;

}  // namespace

void* PoolAlloc(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > kPoolMax) return ::operator new(bytes);
  const size_t c = (bytes - 1) / 16;
  Pool& pool = g_pool;
  if (!pool.head[c]) {  // carve a new chunk into free blocks
    const size_t size = (c + 1) * 16;
    char* chunk = static_cast<char*>(::operator new(kPoolChunk));
    for (size_t off = kPoolChunk / size * size; off >= size;) {
      off -= size;
      *reinterpret_cast<void**>(chunk + off) = pool.head[c];
      pool.head[c] = chunk + off;
    }
  }
  void* p = pool.head[c];
  pool.head[c] = *static_cast<void**>(p);
  return p;
}

void PoolFree(void* p, size_t bytes) {
  if (!p) return;
  if (bytes == 0) bytes = 1;
  if (bytes > kPoolMax) {
    ::operator delete(p);
    return;
  }
  const size_t c = (bytes - 1) / 16;
  Pool& pool = g_pool;
  *static_cast<void**>(p) = pool.head[c];
  pool.head[c] = p;
}
#endif

// ---- payloads ----
namespace {

struct UndefBox : RcBase {
  explicit UndefBox(UndefinedInfo i) : RcBase(BoxKind::kUndef), info(std::move(i)) {}
  static void* operator new(size_t n) { return PoolAlloc(n); }
  static void operator delete(void* p, size_t n) { PoolFree(p, n); }
  UndefinedInfo info;
};

const ListBox& ListOf(const RcBase* rc) { return *static_cast<const ListBox*>(rc); }
const DictBox& DictOf(const RcBase* rc) { return *static_cast<const DictBox*>(rc); }

}  // namespace

void RcBase::Destroy() const {
  switch (kind_) {
    case BoxKind::kStr:
      delete static_cast<const StrBox*>(this);
      return;
    case BoxKind::kList: {
      auto* l = const_cast<ListBox*>(static_cast<const ListBox*>(this));
      const size_t n = l->n;
      for (uint32_t k = 0; k < n; ++k) l->items()[k].~Value();
      PoolFree(static_cast<void*>(l), sizeof(ListBox) + n * sizeof(Value));
      return;
    }
    case BoxKind::kDict: {
      auto* d = const_cast<DictBox*>(static_cast<const DictBox*>(this));
      const size_t n = d->n, cap = d->cap;
      for (uint32_t k = 0; k < n; ++k) d->entries()[k].~Entry();
      PoolFree(static_cast<void*>(d),
               sizeof(DictBox) + n * sizeof(DictBox::Entry) + cap * sizeof(uint32_t));
      return;
    }
    case BoxKind::kUndef:
      delete static_cast<const UndefBox*>(this);
      return;
    case BoxKind::kVirtual:
      delete static_cast<const RcObject*>(this);
      return;
  }
}

// ---- interned keys ----
namespace {

// Open-addressing table of the interned boxes (a power of two slots, at most half full). It and
// its boxes live until the process ends (never destroyed: renders in other threads may still
// read them while the process exits).
struct InternTable {
  std::mutex mu;
  std::vector<const StrBox*> slots;
  size_t count = 0;
};

InternTable& Interns() {
  static InternTable* table = new InternTable;
  return *table;
}

}  // namespace

const StrBox* InternKey(std::string_view text, uint64_t hash) {
  if (text.size() > kMaxInternedText) return nullptr;
  InternTable& t = Interns();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.slots.empty()) t.slots.assign(256, nullptr);
  size_t mask = t.slots.size() - 1;
  size_t p = hash & mask;
  for (; t.slots[p]; p = (p + 1) & mask)
    if (t.slots[p]->hash == hash && SameText(t.slots[p]->s, text)) return t.slots[p];
  if (t.count >= kMaxInterned) return nullptr;
  auto* box = new (::operator new(sizeof(StrBox))) StrBox(std::string(text));
  box->hash = hash;  // set once here: never written after (boxes are shared between threads)
  box->AddRef();     // (never released)
  t.slots[p] = box;
  if (++t.count * 2 > t.slots.size()) {
    std::vector<const StrBox*> old = std::move(t.slots);
    t.slots.assign(old.size() * 2, nullptr);
    mask = t.slots.size() - 1;
    for (const StrBox* b : old) {
      if (!b) continue;
      size_t q = b->hash & mask;
      while (t.slots[q]) q = (q + 1) & mask;
      t.slots[q] = b;
    }
  }
  return box;
}

// ---- arena ----
Arena::~Arena() {
  for (StrBox* s : strings_) s->~StrBox();
  for (char* b : blocks_) ::operator delete(static_cast<void*>(b));
  if (mapped_) munmap(mapped_, mapped_size_);
}

void Arena::Reserve(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  if (mapped_ || bytes < kHuge) return;
  bytes = (bytes + kHuge - 1) & ~(kHuge - 1);
  const size_t size = bytes + kHuge;  // room to align to a huge page
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return;
  mapped_ = p;
  mapped_size_ = size;
  char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + kHuge - 1) &
                                          ~static_cast<uintptr_t>(kHuge - 1));
#ifdef MADV_HUGEPAGE
  madvise(aligned, bytes, MADV_HUGEPAGE);
#endif
  cur_ = aligned;
  left_ = bytes;
}

void* Arena::AllocBlock(size_t bytes) {
  const size_t block = std::max<size_t>(bytes, size_t{256} << 10);
  cur_ = static_cast<char*>(::operator new(block));
  blocks_.push_back(cur_);
  left_ = block;
  void* p = cur_;
  cur_ += bytes;
  left_ -= bytes;
  return p;
}

void Arena::AdoptString(StrBox* box) {
  Adopt(box);
  if (box->s.capacity() > 15) strings_.push_back(box);  // not in the SSO buffer: heap text
}

ListBox* ListBox::Make(size_t n, Arena* arena, Value* from) {
  if (n > UINT32_MAX) throw OpError("list too large");
  const size_t bytes = sizeof(ListBox) + n * sizeof(Value);
  void* mem = arena ? arena->Alloc(bytes) : PoolAlloc(bytes);
  auto* box = new (mem) ListBox();
  box->n = static_cast<uint32_t>(n);
  if (from) {
    for (size_t k = 0; k < n; ++k) new (box->items() + k) Value(std::move(from[k]));
  } else {
    for (size_t k = 0; k < n; ++k) new (box->items() + k) Value();
  }
  if (arena) arena->Adopt(box);
  return box;
}

DictBox* DictBox::Make(size_t n, Arena* arena, bool construct) {
  if (n > UINT32_MAX / 4) throw OpError("dict too large");
  size_t cap = 0;
  if (n > kIndexFrom) {
    cap = 16;
    while (cap < n * 2) cap <<= 1;
  }
  const size_t bytes = sizeof(DictBox) + n * sizeof(Entry) + cap * sizeof(uint32_t);
  void* mem = arena ? arena->Alloc(bytes) : PoolAlloc(bytes);
  auto* box = new (mem) DictBox();
  box->n = static_cast<uint32_t>(n);
  box->cap = static_cast<uint32_t>(cap);
  if (construct)
    for (size_t k = 0; k < n; ++k) new (box->entries() + k) Entry();
  if (arena) arena->Adopt(box);
  return box;
}

void DictBox::BuildIndex() {
  if (!cap) return;
  uint32_t* index = reinterpret_cast<uint32_t*>(entries() + n);
  std::fill(index, index + cap, 0u);
  for (uint32_t k = 0; k < n; ++k) {
    const Value& key = begin()[k].key;
    if (!key.is_string()) continue;
    size_t p = key.str_hash() & (cap - 1);
    while (index[p]) p = (p + 1) & (cap - 1);
    index[p] = k + 1;
  }
}

// ---- values ----
Value Value::Str(std::string s) { return Boxed(Kind::kString, new StrBox(std::move(s))); }

Value Value::Key(std::string_view text) {
  if (const StrBox* box = InternKey(text, HashStr(text))) return Interned(box);
  return Str(std::string(text));
}

Value Value::Markup(std::string s) {
  Value v = Str(std::move(s));
  v.markup_ = true;
  return v;
}

Value Value::List(ValueList items) {
  ListBox* box = ListBox::Make(items.size());
  for (size_t k = 0; k < items.size(); ++k) box->items()[k] = std::move(items[k]);
  return Boxed(Kind::kList, box);
}

Value Value::Tuple(ValueList items) {
  Value v = List(std::move(items));
  v.kind_ = Kind::kTuple;
  return v;
}

Value Value::Pair(Value a, Value b) {
  ListBox* box = ListBox::Make(2);
  box->items()[0] = std::move(a);
  box->items()[1] = std::move(b);
  return Boxed(Kind::kTuple, box);
}

Value Value::Dict(ValueDict items) {
  DictBox* box = DictBox::Make(items.size());
  for (size_t k = 0; k < items.size(); ++k) {
    box->entries()[k].key = std::move(items[k].first);
    box->entries()[k].value = std::move(items[k].second);
  }
  box->BuildIndex();
  return Boxed(Kind::kDict, box);
}

Value Value::Obj(Rc<Object> obj) {
  Value v;
  v.kind_ = Kind::kObject;
  v.boxed_ = true;
  v.rc_ = static_cast<RcObject*>(obj.release());  // the reference moves into v
  return v;
}

Value Value::Undef(std::string message, SourcePos pos, bool lenient) {
  return Boxed(Kind::kUndefined, new UndefBox(UndefinedInfo{std::move(message), pos, lenient}));
}

const UndefinedInfo& Value::undef() const { return static_cast<const UndefBox*>(rc_)->info; }

const std::string& Value::JsonStr(const Json* j) { return *j->get_ptr<const std::string*>(); }

Value Value::ViewJson(const Json& j) {
  Value v;
  switch (j.type()) {
    case Json::value_t::boolean:
      return Bool(j.get<bool>());
    case Json::value_t::number_integer:
      return Int(j.get<int64_t>());
    case Json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX))
        throw OpError("integer " + std::to_string(u) + " is out of the supported 64-bit range");
      return Int(static_cast<int64_t>(u));
    }
    case Json::value_t::number_float:
      return Float(j.get<double>());
    case Json::value_t::string:
      v.kind_ = Kind::kString;
      break;
    case Json::value_t::array:
      v.kind_ = Kind::kList;
      break;
    case Json::value_t::object:
      v.kind_ = Kind::kDict;
      break;
    default:
      return v;  // null, binary, discarded -> None
  }
  v.json_ = true;
  v.j_ = &j;
  return v;
}

double Value::f() const {
  if (kind_ == Kind::kFloat) return f_;
  return static_cast<double>(i());
}

size_t Value::size() const {
  if (json_) return json().size();
  if (kind_ == Kind::kDict) return DictOf(rc_).n;
  return ListOf(rc_).n;
}

Value Value::at(size_t index) const {
  if (json_) return ViewJson(json()[index]);
  return ListOf(rc_)[index];
}

bool Value::Get(const std::string& key, Value* out) const {
  return Get(std::string_view(key), HashStr(key), out);
}

bool Value::Get(std::string_view key, uint64_t hash, Value* out) const {
  if (json_) {
    const Json& j = json();
    auto it = j.find(key);
    if (it == j.end()) return false;
    *out = ViewJson(*it);
    return true;
  }
  const DictBox& d = DictOf(rc_);
  ptrdiff_t k = d.Find(key, hash);
  if (k < 0) return false;
  *out = d.begin()[k].value;
  return true;
}

bool Value::Get(const Value& key, Value* out) const {
  if (key.is_undefined()) ThrowUndefined(key);
  if (key.is_string()) return Get(std::string_view(key.s()), key.str_hash(), out);
  if (json_) return false;
  for (const auto& e : DictOf(rc_)) {
    if (Equals(e.key, key)) {
      *out = e.value;
      return true;
    }
  }
  return false;
}

ValueDict Value::Items() const {
  ValueDict out;
  if (!json_) {
    const DictBox& d = DictOf(rc_);
    out.reserve(d.n);
    for (const auto& e : d) out.emplace_back(e.key, e.value);
    return out;
  }
  out.reserve(json().size());
  for (auto it = json().begin(); it != json().end(); ++it)
    out.emplace_back(Str(it.key()), ViewJson(it.value()));
  return out;
}

ValueList Value::Keys() const {
  ValueList out;
  if (json_) {
    for (auto it = json().begin(); it != json().end(); ++it) out.push_back(Str(it.key()));
  } else {
    for (const auto& e : DictOf(rc_)) out.push_back(e.key);
  }
  return out;
}

Json Value::ToJson() const {
  if (json_) return json();
  ValueDepthGuard guard;
  switch (kind_) {
    case Kind::kNone:
      return nullptr;
    case Kind::kBool:
      return b_;
    case Kind::kInt:
      return i_;
    case Kind::kFloat:
      return f_;
    case Kind::kString:
      return s();
    case Kind::kList:
    case Kind::kTuple: {
      Json arr = Json::array();
      for (const Value& v : ListOf(rc_)) arr.push_back(v.ToJson());
      return arr;
    }
    case Kind::kDict: {
      Json obj = Json::object();
      for (const auto& e : DictOf(rc_)) {
        std::string key = e.key.is_string() ? e.key.s() : ToStr(e.key);
        obj[key] = e.value.ToJson();
      }
      return obj;
    }
    case Kind::kUndefined:
      ThrowUndefined(*this);
    case Kind::kObject:
      break;
  }
  throw OpError("Object of type " + TypeName(*this) + " is not JSON serializable");
}

void ThrowUndefined(const Value& v) {
  const UndefinedInfo& u = v.undef();
  throw TemplateError(FormatPos(u.pos) + u.message);
}

std::string TypeName(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return "StrictUndefined";
    case Value::Kind::kNone:
      return "NoneType";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kString:
      return "str";
    case Value::Kind::kList:
      return "list";
    case Value::Kind::kTuple:
      return "tuple";
    case Value::Kind::kDict:
      return "dict";
    case Value::Kind::kObject:
      return v.obj()->TypeName();
  }
  return "object";
}

bool Truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return false;
      ThrowUndefined(v);
    case Value::Kind::kNone:
      return false;
    case Value::Kind::kBool:
      return v.b();
    case Value::Kind::kInt:
      return v.i() != 0;
    case Value::Kind::kFloat:
      return v.f() != 0.0;
    case Value::Kind::kString:
      return !v.s().empty();
    case Value::Kind::kList:
    case Value::Kind::kTuple:
    case Value::Kind::kDict:
      return v.size() != 0;
    case Value::Kind::kObject:
      return true;
  }
  return true;
}

namespace {
void AppendRepr(std::string& out, const Value& v);

void AppendSeq(std::string& out, const Value& v) {
  ValueDepthGuard guard;
  bool tuple = v.is_tuple();
  ReprGuard active(v.identity());
  if (active.recursive()) {
    out += tuple ? "(...)" : "[...]";
    return;
  }
  out += tuple ? '(' : '[';
  size_t n = v.size();
  for (size_t k = 0; k < n; ++k) {
    if (k) out += ", ";
    AppendRepr(out, v.at(k));
  }
  if (tuple && n == 1) out += ',';
  out += tuple ? ')' : ']';
}

void AppendDict(std::string& out, const Value& v) {
  ValueDepthGuard guard;
  ReprGuard active(v.identity());
  if (active.recursive()) {
    out += "{...}";
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& kv : v.Items()) {
    if (!first) out += ", ";
    first = false;
    AppendRepr(out, kv.first);
    out += ": ";
    AppendRepr(out, kv.second);
  }
  out += '}';
}

void AppendRepr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      out += "Undefined";
      return;
    case Value::Kind::kString:
      out += v.is_markup() ? "Markup(" + pystr::Repr(v.s()) + ")" : pystr::Repr(v.s());
      return;
    case Value::Kind::kObject:
      out += v.obj()->Repr();
      return;
    default:
      AppendStr(out, v);
  }
}
}  // namespace

void AppendStr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return;
      ThrowUndefined(v);
    case Value::Kind::kNone:
      out += "None";
      return;
    case Value::Kind::kBool:
      out += v.b() ? "True" : "False";
      return;
    case Value::Kind::kInt: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof(buf), v.i());
      out.append(buf, static_cast<size_t>(r.ptr - buf));
      return;
    }
    case Value::Kind::kFloat:
      pystr::AppendFloatRepr(out, v.f());
      return;
    case Value::Kind::kString:
      out += v.s();
      return;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      AppendSeq(out, v);
      return;
    case Value::Kind::kDict:
      AppendDict(out, v);
      return;
    case Value::Kind::kObject:
      out += v.obj()->Str();
      return;
  }
}

std::string ToStr(const Value& v) {
  if (v.is_string()) return v.s();
  std::string out;
  AppendStr(out, v);
  return out;
}

std::string Repr(const Value& v) {
  std::string out;
  AppendRepr(out, v);
  return out;
}

bool Equals(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) return SameText(a.s(), b.s());  // the common case
  if (a.is_lenient_undefined() || b.is_lenient_undefined())
    return a.is_undefined() && b.is_undefined() &&
           a.is_lenient_undefined() == b.is_lenient_undefined();
  if (a.is_undefined()) ThrowUndefined(a);
  if (b.is_undefined()) ThrowUndefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.f() == b.f();
    return a.i() == b.i();
  }
  if (a.kind() != b.kind()) return false;
  if (a.identity() && a.identity() == b.identity())
    return true;  // same object (Python's `is` shortcut)
  ValueDepthGuard guard;
  switch (a.kind()) {
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kString:
      return SameText(a.s(), b.s());
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      if (a.size() != b.size()) return false;
      for (size_t k = 0; k < a.size(); ++k)
        if (!Equals(a.at(k), b.at(k))) return false;
      return true;
    }
    case Value::Kind::kDict: {
      if (a.size() != b.size()) return false;
      for (const auto& kv : a.Items()) {
        Value other;
        if (!b.Get(kv.first, &other) || !Equals(kv.second, other)) return false;
      }
      return true;
    }
    default:
      return a.identity() == b.identity();
  }
}

int Compare(const Value& a, const Value& b, const char* op) {
  if (a.is_string() && b.is_string()) {  // the common case first
    int c = a.s().compare(b.s());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_undefined()) ThrowUndefined(a);
  if (b.is_undefined()) ThrowUndefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.f(), y = b.f();
      return x < y ? -1 : x > y ? 1 : 0;  // NaN compares "equal" here; callers check NaN
    }
    return a.i() < b.i() ? -1 : a.i() > b.i() ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.s().compare(b.s());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_seq() && a.kind() == b.kind()) {
    ValueDepthGuard guard;
    size_t n = std::min(a.size(), b.size());
    for (size_t k = 0; k < n; ++k) {
      Value x = a.at(k), y = b.at(k);
      if (!Equals(x, y)) return Compare(x, y, op);
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  throw OpError(std::string("'") + op + "' not supported between instances of '" + TypeName(a) +
                "' and '" + TypeName(b) + "'");
}

bool Contains(const Value& container, const Value& item) {
  if (container.is_undefined()) ThrowUndefined(container);
  if (item.is_undefined()) ThrowUndefined(item);
  switch (container.kind()) {
    case Value::Kind::kString:
      if (!item.is_string())
        throw OpError("'in <string>' requires string as left operand, not " + TypeName(item));
      return container.s().find(item.s()) != std::string::npos;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      for (size_t k = 0; k < container.size(); ++k)
        if (Equals(container.at(k), item)) return true;
      return false;
    case Value::Kind::kDict: {
      Value unused;
      return container.Get(item, &unused);
    }
    case Value::Kind::kObject: {
      ValueList items;
      if (container.obj()->Iter(&items)) {
        for (const Value& x : items)
          if (Equals(x, item)) return true;
        return false;
      }
      break;
    }
    default:
      break;
  }
  throw OpError("argument of type '" + TypeName(container) + "' is not iterable");
}

ValueList Iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return {};
      ThrowUndefined(v);
    case Value::Kind::kString: {
      ValueList out;
      const std::string& s = v.s();
      std::vector<size_t> b = pystr::Boundaries(s);
      out.reserve(b.size());
      for (size_t k = 0; k + 1 < b.size(); ++k)
        out.push_back(Value::Str(s.substr(b[k], b[k + 1] - b[k])));
      return out;
    }
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      ValueList out;
      out.reserve(v.size());
      for (size_t k = 0; k < v.size(); ++k) out.push_back(v.at(k));
      return out;
    }
    case Value::Kind::kDict:
      return v.Keys();
    case Value::Kind::kObject: {
      ValueList out;
      if (v.obj()->Iter(&out)) return out;
      break;
    }
    default:
      break;
  }
  throw OpError("'" + TypeName(v) + "' object is not iterable");
}

int64_t Len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      if (v.is_lenient_undefined()) return 0;
      ThrowUndefined(v);
    case Value::Kind::kString:
      return static_cast<int64_t>(pystr::Length(v.s()));
    case Value::Kind::kList:
    case Value::Kind::kTuple:
    case Value::Kind::kDict:
      return static_cast<int64_t>(v.size());
    case Value::Kind::kObject: {
      ValueList out;
      if (v.obj()->Iter(&out)) return static_cast<int64_t>(out.size());
      break;
    }
    default:
      break;
  }
  throw OpError("object of type '" + TypeName(v) + "' has no len()");
}

std::string HashKey(const Value& v) {
  if (v.is_number()) {
    double d = v.f();
    if (v.is_float() && d != std::floor(d)) return "n" + pystr::FloatRepr(d);
    if (v.is_float() && std::fabs(d) < 9.2e18) return "n" + std::to_string(static_cast<int64_t>(d));
    if (v.is_float()) return "n" + pystr::FloatRepr(d);
    return "n" + std::to_string(v.i());
  }
  if (v.is_string()) return "s" + std::to_string(v.s().size()) + ":" + v.s();
  if (v.is_undefined()) ThrowUndefined(v);
  if (v.is_list() || v.is_dict()) throw OpError("unhashable type: '" + TypeName(v) + "'");
  if (v.is_tuple()) {
    ValueDepthGuard guard;
    std::string key = "t(";
    for (size_t k = 0; k < v.size(); ++k) key += HashKey(v.at(k)) + ",";
    return key + ")";
  }
  if (v.is_object()) return "o" + std::to_string(reinterpret_cast<uintptr_t>(v.identity()));
  return "r" + Repr(v);
}

}  // namespace msc::tmpl
