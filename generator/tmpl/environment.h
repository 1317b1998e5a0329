// msc::tmpl -- a Jinja2-compatible template engine.
//
// Output is byte-identical to Python's jinja2 (3.1) with the DEFAULT environment settings
// (trim_blocks=False, lstrip_blocks=False, keep_trailing_newline=False, autoescape off) and
// undefined=jinja2.StrictUndefined, for the supported subset below. Values are JSON
// (nlohmann::ordered_json, key order preserved) and behave like the Python objects json.loads
// produces (dict, list, str, int, float, bool, None); they print like Python's str().
//
// Syntax: {{ }}, {% %}, {# #} with '-' whitespace control; {% raw %}; literals (strings with
// Python escapes, ints incl. 0x/0o/0b/underscores, floats, lists, tuples, dicts, true/false/
// none in either case); + - * / // % ** ~, unary -/+, comparisons (chained), in / not in,
// and/or/not (returning operands), `a if c else b`; x.y, x['y'], x[1:3:2], negative indexes;
// calls with positional/keyword/*args/**kwargs; filters; `is` / `is not` tests.
// Statements: if/elif/else; for (tuple unpacking, `for x in y if c`, else, loop.index/index0/
// revindex/revindex0/first/last/length/previtem/nextitem/depth/cycle()/changed()); set (names,
// tuples, namespace attributes, block set with filters) with Jinja2's scoping (loop bodies,
// macros, includes and with-blocks are scopes; if-blocks are not); macro (defaults, keyword
// arguments, varargs, kwargs, caller); call (with caller arguments); include (list of names,
// ignore missing, with/without context); import ... as / from ... import (without context by
// default); filter blocks; with; print.
// Template inheritance (Jinja2's semantics): {% extends NAME %} (NAME any expression giving a
// template name, resolved like include; allowed at the top level and inside if-branches, so an
// extends may be conditional), {% block NAME [scoped] [required] %} ... {% endblock [NAME] %},
// blocks inside blocks, super() / super.super(), self.NAME(). A child's text and prints outside
// its blocks are dropped once it has extended (text before the extends is kept); its top-level
// set/macro/import run and are visible to the parent and to all blocks, which see the context
// (top-level variables + data), not the local variables where they are rendered, unless
// `scoped`. A `required` block must be overridden by some template extending its template.
// Templates reached by include/import render with their own blocks and may extend too.
// Recursive loops: {% for x in tree recursive %}...{{ loop(x.children) }}...{% endfor %}
// renders the body one level deeper (loop.depth / loop.depth0 count levels; the `if` filter and
// the else branch apply per level).
// Globals: range, dict, namespace, joiner, cycler.
// Filters: abs attr batch capitalize center count d default dictsort e escape first float
// forceescape format groupby indent int items join last length list lower map max min reject
// rejectattr replace reverse round safe select selectattr slice sort string sum title tojson
// trim truncate unique upper wordcount.
// Tests: defined undefined none boolean true false number integer float string mapping callable
// escaped sequence iterable divisibleby even odd eq equalto ne lt lessthan le gt greaterthan ge
// in sameas lower upper filter test.
// Python methods: str (upper lower title capitalize swapcase strip lstrip rstrip split rsplit
// splitlines startswith endswith replace join find rfind index count center ljust rjust zfill
// format partition removeprefix removesuffix is*), dict (items keys values get copy),
// list/tuple (count index copy).
// Markup: |e, |escape, |safe and |tojson return "Markup" strings that |e leaves alone and that
// escape the other operand of `+` (as markupsafe does); `~` and printing treat them as str.
//
// NOT supported (a tag gives the error "'<tag>' is not supported by this template engine"):
// autoescaping, extensions (do, break/continue, i18n), trim_blocks/lstrip_blocks, non-ASCII
// identifiers, the wordwrap/urlize/xmlattr/pprint/filesizeformat/striptags/urlencode/random
// filters, str.format field attribute/index access,
// integers beyond 64 bits (an error where Python would use big ints), case mapping beyond
// ASCII/Latin-1/Latin Extended-A/Greek/Cyrillic (no Greek final sigma), and mutating methods
// (list.append, dict.update). Filters that return generators/iterators in Jinja2 (map, select,
// reverse, ...) return lists here, so printing their result directly differs from Jinja2's
// "<generator object ...>". A block reference prints as "<BlockReference object>" (Jinja2 adds
// an address). A template that extends a template already in its extends chain is an error
// ("extends cycle: 'a.j2' -> 'b.j2' -> 'a.j2'"), where Jinja2 recurses until Python's recursion
// limit (or, with a conditional extends, may stop).
//
// Errors: every failure throws TemplateError whose message starts with "<file>:<line>:<col>: "
// (file = the template path as resolved under the search root, or the name given to
// RenderString; columns count characters from 1) followed by the problem, e.g.
//   templates/x.j2:3:7: undefined variable 'foo'
//   templates/x.j2:1:9: unknown filter 'bar'
//   templates/x.j2:9:1: expected 'endfor' or 'else', got end of template (unclosed 'for' opened at
//   line 2) templates/x.j2:2:4: 'dict object' has no attribute 'y'
// Errors inside included/imported templates or macros name the file and line where they
// happen, followed by lines "  included from a.j2:2:4" / "  in macro 'm' called from b.j2:5:3"
// / "  in block 'b' called from base.j2:4:3" / "  extended by child.j2:1:4" (an error in a
// parent template). Calling a value that is not callable names it:
//   t.j2:1:4: 'title' is not callable (a str)
// Like Jinja2, unknown filters/tests are reported when the template is loaded, except inside
// if-blocks and inline ifs, where they fail only when evaluated.
// Limits (errors instead of crashes or endless runs): macro calls, includes, imports, block
// renders and recursive loop levels nest at most 256 deep, templates at most 256
// blocks/expressions deep; range() holds at most 10^7 items; one render runs at most 10^8 loop
// iterations and builds at most 1 GiB of output.
// An Environment is not thread-safe: it, the Data it renders and everything a render makes
// belong to one thread at a time (reference counts are not atomic).
//
// How it is fast (tests/tmpl/bench.py: a 5,000-op render, whole process against Python's jinja2):
// templates are parsed once per Environment into a resolved tree (names and attribute names
// carry their hashes, attribute names are interned, operators their codes, filters and tests
// their builtin functions, literal lists/tuples/dicts of constants are constants, `loop` objects
// are made only for loops that can see them, includes that assign nothing render in the
// includer's scope, a constant include name is loaded once, `"...".format()` and `for k, v in
// d|dictsort` are recognized); values are 16 bytes with shared immutable payloads, so data is
// never copied (for loops run over the list itself; names and attribute paths are read in
// place; a dictsort loop visits the dict's entries in a sort order computed once per key
// sequence); every name lookup first tries the variable index where it was found last time,
// every attribute lookup the entry index, and JSON keys are interned process-wide (InternKey)
// so that comparing a key is comparing two pointers; scopes and small objects are recycled;
// macros, string filters, str.format and printed expressions write into the one output
// buffer, which Render with a Sink streams out in 64 KiB pieces. Data parsed from JSON text
// lives in an arena (on huge pages when large), parsed in one pass that predicts each key.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "generator/tmpl/error.h"

namespace msc::tmpl {

using Json = nlohmann::ordered_json;
// A callable filter/global: args are positional (for a filter args[0] is the piped value),
// kwargs is a JSON object. Passing an undefined value to it is an error (StrictUndefined);
// exceptions it throws become TemplateError "<file>:<line>:<col>: function 'f' failed: <what>".
using Function = std::function<Json(const std::vector<Json>& args, const Json& kwargs)>;

struct EnvData;
struct Template;
struct DataImpl;
class Value;

// Render data in the engine's own value model: built once (from JSON text or a JSON document),
// then read by any number of renders without conversion or copies (compact, one allocation
// arena for parsed text; dicts look keys up by hash). Copying a Data shares it. Prefer it to
// Json for large data read from a file or rendered often; a Json passed to Render is read in
// place instead (no conversion, slower lookups).
class Data {
 public:
  Data();  // null: a template without variables
  // Parses JSON text (RFC 8259, UTF-8; what both nlohmann::json and Python's json.loads accept;
  // integers beyond 64 bits are an error). `what` names the source in errors:
  //   TemplateError "<what>: invalid JSON: line 3, column 7: expected ',' or '}'".
  static Data ParseJson(std::string_view text, const std::string& what);
  static Data FromJson(const Json& j);  // deep copy of `j`
  // Shares a native value (value.h) the caller built, e.g. generate's template context: no
  // conversion, no copy. Like any Data it must be a dict or null to be rendered.
  static Data FromValue(const Value& v);
  // Values read from a Data must not outlive it; renders keep none after they return.
  ~Data();
  Data(const Data&);
  Data& operator=(const Data&);

 private:
  friend class Environment;
  std::shared_ptr<DataImpl> d_;
};

class Environment {
 public:
  // Templates are named relative to search_root as with jinja2.FileSystemLoader(search_root):
  // include/import/from-import names resolve against search_root, never relative to the
  // including file; a name with a ".." segment is an error.
  explicit Environment(std::string search_root);
  // The same over several folders, searched in order as jinja2.FileSystemLoader([a, b, ...]):
  // a name resolves to the first folder holding the file (generate: the backend's folder, then
  // templates/common, so a backend can override a shared template by having its own).
  explicit Environment(std::vector<std::string> search_path);
  ~Environment();
  Environment(Environment&&) noexcept;
  Environment& operator=(Environment&&) noexcept;

  void AddFilter(const std::string& name, Function f);  // overrides a builtin of that name
  void AddGlobal(const std::string& name, Json value);
  void AddFunction(const std::string& name, Function f);  // global callable

  // Renders the file `template_name` (under search_root). `data` must be a JSON object (or
  // null); its keys are the template's variables. Parsed templates are cached per Environment
  // (each file is read once; later edits of the file are not seen by this Environment).
  std::string Render(const std::string& template_name, const Json& data);
  // The same with Data (must be a dict or null: TemplateError otherwise).
  std::string Render(const std::string& template_name, const Data& data);
  // Streams the output instead of returning it (jinja2's Template.stream()): `sink` receives it
  // in order, in pieces of about kStreamChunk bytes as the render produces them and the rest when
  // it ends, so no buffer grows with the output. Concatenated, the pieces are what Render
  // returns. If the render fails, the pieces already given stay given and the error is thrown.
  using Sink = std::function<void(std::string_view piece)>;
  static constexpr size_t kStreamChunk = size_t{64} << 10;
  void Render(const std::string& template_name, const Data& data, const Sink& sink);
  // Renders template source text; `name` is used in error messages. Parses are cached by text.
  std::string RenderString(const std::string& source, const Json& data,
                           const std::string& name = "<string>");

 private:
  const Template& Find(const std::string& template_name);
  std::string JoinSearchPath() const;  // "a', 'b" for error messages
  // `reserve`: output capacity to start with (a large reserve only costs the pages written).
  // `sink`: stream the output to it (Render with a Sink); the returned string is then empty.
  std::string RenderParsed(const Template& t, const Value& data, size_t reserve = 0,
                           const Sink* sink = nullptr);
  std::unique_ptr<EnvData> d_;
};

}  // namespace msc::tmpl
