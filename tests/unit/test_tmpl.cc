// Unit tests for the Jinja2-compatible template engine (generator/tmpl).
// Expected outputs were checked against Python's jinja2 3.1 (StrictUndefined, default settings).
#include <doctest/doctest.h>

#include <unistd.h>
#include <chrono>

#include <filesystem>
#include <fstream>
#include <string>

#include "generator/tmpl/environment.h"
#include "generator/tmpl/value.h"

namespace fs = std::filesystem;
using msc::tmpl::Environment;
using msc::tmpl::Json;

namespace {

std::string R(const std::string& src, const Json& data = Json::object()) {
  Environment env("");
  return env.RenderString(src, data, "t.j2");
}

// Message of the msc::tmpl::TemplateError thrown while rendering `src` ("" if nothing was thrown).
std::string Err(const std::string& src, const Json& data = Json::object()) {
  Environment env("");
  try {
    env.RenderString(src, data, "t.j2");
  } catch (const msc::tmpl::TemplateError& e) {
    return e.what();
  }
  return "";
}

// A temporary template folder, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("msc_tmpl_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void Write(const std::string& name, const std::string& text) const {
    fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string Name(const std::string& name) const { return (path / name).string(); }
};

}  // namespace

TEST_CASE("tmpl: printing values like Python str()") {
  CHECK(R("Hello {{ name }}!", {{"name", "World"}}) == "Hello World!");
  CHECK(R("{{ [1, 'a', none, 1.5, true] }}") == "[1, 'a', None, 1.5, True]");
  CHECK(R("{{ {'a': 1, 'b': [2]} }} {{ (1,) }} {{ () }} {{ (1, 'x') }}") ==
        "{'a': 1, 'b': [2]} (1,) () (1, 'x')");
  CHECK(R("{{ x }}", {{"x", {{"k", nullptr}}}}) == "{'k': None}");
  CHECK(R("{{ [\"it's\", 'say \"hi\"', 'both\\'\"'] }}") ==
        "[\"it's\", 'say \"hi\"', 'both\\'\"']");
  CHECK(R("{{ ['\\n', '\\x01', 'caf\\u00e9'] }}") == "['\\n', '\\x01', 'café']");
  CHECK(R("{{ true }} {{ False }} {{ none }} {{ None }}") == "True False None None");
  CHECK(R("{{ a, b }}", {{"a", 1}, {"b", "x"}}) == "(1, 'x')");
}

TEST_CASE("tmpl: float formatting follows Python repr") {
  CHECK(R("{{ 1.0 }} {{ 0.1 }} {{ 1e-5 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }}") ==
        "1.0 0.1 1e-05 1e+20 1e+16 1000000000000000.0 0.0001");
  CHECK(R("{{ 0.1 + 0.2 }} {{ 1 / 3 }} {{ -0.0 }} {{ 1e308 * 10 }} {{ 'nan'|float }}") ==
        "0.30000000000000004 0.3333333333333333 -0.0 inf nan");
  CHECK(R("{{ x }} {{ y }}", {{"x", 2.0}, {"y", 1e-7}}) == "2.0 1e-07");
}

TEST_CASE("tmpl: arithmetic has Python int/float semantics") {
  CHECK(R("{{ 7 / 2 }} {{ 8 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }}") ==
        "3.5 4.0 3 -4 2 -2");
  CHECK(R("{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }}") == "1024 0.5 64 4");
  CHECK(R("{{ 7.5 % -2 }} {{ -7.5 // 2 }} {{ true + true }} {{ 'ab' * 3 }} {{ [1] * 2 }}") ==
        "-0.5 -4.0 2 ababab [1, 1]");
  CHECK(R("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' ~ 1 ~ none ~ 2.0 }}") == "7 9 a1None2.0");
  CHECK(R("{{ '%s-%03d|%5.2f|%x' % ('a', 7, 3.14159, 255) }}") == "a-007| 3.14|ff");
  CHECK(Err("{{ 1 / 0 }}") == "t.j2:1:6: division by zero");
  CHECK(Err("{{ 2 ** 70 }}") ==
        "t.j2:1:6: integer overflow: results beyond 64 bits are not supported");
  CHECK(Err("{{ 'a' + 1 }}") == "t.j2:1:8: can only concatenate str (not \"int\") to str");
}

TEST_CASE("tmpl: comparisons, logic and inline if") {
  CHECK(R("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ [1] == (1,) }} {{ 2 in [1, 2] }} {{ "
          "'x' not in 'abc' }}") == "True False True False True True");
  CHECK(R("{{ 0 or 'd' }} {{ 'x' and 'y' }} {{ '' and 'y' }} {{ not [] }}") == "d y  True");
  CHECK(R("{{ 'a' if x else 'b' }} [{{ 'shown' if not x }}] [{{ 1 if x }}]", {{"x", false}}) ==
        "b [shown] []");
}

TEST_CASE("tmpl: attribute, item and slice access") {
  Json d = {{"d", {{"a", 1}, {"l", {10, 20, 30}}}}, {"s", "hello"}};
  CHECK(R("{{ d.a }} {{ d['a'] }} {{ d.l.0 }} {{ d.l[-1] }} {{ d.l[1:] }} {{ d.l[::-1] }} {{ "
          "s[::-1] }} {{ s[1:3] }}",
          d) == "1 1 10 30 [20, 30] [30, 20, 10] olleh el");
  CHECK(R("{{ d.nope is defined }} {{ d.l[7] is defined }} {{ d.nope|default('x') }}", d) ==
        "False False x");
  CHECK(R("{{ 'h\\u00e9llo'[1] }} {{ 'h\\u00e9llo'|length }}") == "é 5");
  // Python attribute lookup wins over keys for `.`: d.items is the dict method.
  CHECK(R("{{ x['items'] }} {{ x.items()|list }}", {{"x", {{"items", 1}}}}) == "1 [('items', 1)]");
}

TEST_CASE("tmpl: whitespace control and trailing newline") {
  CHECK(R("a  {{- 'b' -}}  c") == "abc");
  CHECK(R("<{%- if true %} x {% endif -%}>") == "< x >");
  CHECK(R("a {#- comment -#} b") == "ab");
  CHECK(R("line\n") == "line");
  CHECK(R("line\n\n") == "line\n");
  CHECK(R("a\r\nb\rc") == "a\nb\nc");
  CHECK(R("{% for x in [1, 2] %}\n{{ x }}\n{% endfor %}") == "\n1\n\n2\n");
  CHECK(R("{% raw %}{{ x }}{% endraw %}") == "{{ x }}");
}

TEST_CASE("tmpl: for loops") {
  Json d = {{"items", {"a", "b", "c"}}};
  CHECK(R("{% for x in items %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first "
          "}}{{ loop.last }}{{ loop.length }}|{% endfor %}",
          d) == "103TrueFalse3|212FalseFalse3|321FalseTrue3|");
  CHECK(R("{% for x in items %}{{ loop.cycle('o', 'e') }}{{ loop.previtem|default('-') }}{{ "
          "loop.nextitem|default('-') }} {% endfor %}",
          d) == "o-b eac ob- ");
  CHECK(R("{% for x in items if x != 'b' %}{{ loop.index }}{{ x }}{% endfor %}", d) == "1a2c");
  CHECK(R("{% for x in [] %}no{% else %}empty{% endfor %}") == "empty");
  CHECK(R("{% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}{{ v }}{% endfor %}") == "b1a2");
  CHECK(R("{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}") == "123");
  CHECK(R("{% for i in range(2, 10, 3) %}{{ i }}{% endfor %} {{ range(3) }}") == "258 range(0, 3)");
  CHECK(R("{% for x in items %}{{ loop }}{% endfor %}", d) ==
        "<LoopContext 1/3><LoopContext 2/3><LoopContext 3/3>");
}

TEST_CASE("tmpl: set scoping and namespaces") {
  CHECK(R("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}") ==
        "231");
  CHECK(R("{% if true %}{% set y = 'leak' %}{% endif %}{{ y }}") == "leak");
  CHECK(R("{% set a, b = 1, 2 %}{{ b }}{{ a }}") == "21");
  CHECK(R("{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor "
          "%}{{ ns.n }} {{ ns }}") == "6 <Namespace {'n': 6}>");
  CHECK(R("{% set b | upper %}hi {{ 1 }}{% endset %}{{ b }}") == "HI 1");
  CHECK(R("{% with a = 5 %}{{ a }}{% endwith %}{{ a is defined }}") == "5False");
  CHECK(Err("{% set a, b = [1] %}") == "t.j2:1:8: not enough values to unpack (expected 2, got 1)");
  CHECK(Err("{% set x = 1 %}{% set x.y = 2 %}") ==
        "t.j2:1:23: cannot assign attribute on non-namespace object 'x'");
}

TEST_CASE("tmpl: macros and call blocks") {
  CHECK(R("{% macro g(n, greet='Hi') %}{{ greet }} {{ n }}{% endmacro %}{{ g('a') }}|{{ g('b', "
          "'Yo') }}|{{ g(greet='Hey', n='c') }}") == "Hi a|Yo b|Hey c");
  CHECK(R("{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, k=3) }}") ==
        "1(2,){'k': 3}");
  CHECK(R("{% macro m(a, b=a * 2) %}{{ b }}{% endmacro %}{{ m(4) }}") == "8");
  CHECK(R("{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}") ==
        "[in]");
  CHECK(R("{% macro each(l) %}{% for x in l %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) "
          "each([1, 2]) %}<{{ v }}>{% endcall %}") == "<1><2>");
  CHECK(
      R("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}") ==
      "321");
  CHECK(R("{% macro m() %}{{ top }}{% endmacro %}{% set top = 'late' %}{{ m() }}") == "late");
  CHECK(Err("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}") ==
        "t.j2:1:34: macro 'm' takes not more than 1 argument(s)");
  CHECK(Err("{% macro m(a) %}{% endmacro %}{{ m(b=1) }}") ==
        "t.j2:1:34: macro 'm' takes no keyword argument 'b'");
  CHECK(Err("{% macro m(a) %}{{ a }}{% endmacro %}{{ m() }}") ==
        "t.j2:1:4: parameter 'a' was not provided\n  in macro 'm' called from t.j2:1:41");
  std::string deep = Err("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}");
  CHECK_MESSAGE(deep.find("t.j2:1:20: maximum recursion depth exceeded") == 0, deep);
}

TEST_CASE("tmpl: filters") {
  Json people = {{"people", {{{"name", "bob"}, {"age", 31}}, {{"name", "al"}, {"age", 25}}}}};
  CHECK(R("{{ ['b', 'A', 'c']|sort|join(',') }} {{ [3, 1]|sort(reverse=true) }} {{ ['a', 'A', "
          "'b']|unique|list }}") == "A,b,c [3, 1] ['a', 'b']");
  CHECK(R("{{ people|map(attribute='name')|join('/') }} {{ people|sort(attribute='age')|first }}",
          people) == "bob/al {'name': 'al', 'age': 25}");
  CHECK(R("{{ people|selectattr('age', 'gt', 30)|map(attribute='name')|list }} {{ "
          "people|sum(attribute='age') }}",
          people) == "['bob'] 56");
  CHECK(R("{{ [1, 2, 3, 4]|select('even')|list }} {{ [1, 2, 3]|reject('odd')|list }} {{ "
          "['a']|map('upper')|list }}") == "[2, 4] [2] ['A']");
  CHECK(R("{{ 'hello world'|title }} {{ 'abc'|upper }} {{ ' x '|trim }} {{ 'aXa'|replace('a', 'b') "
          "}} {{ 'ab'|capitalize }}") == "Hello World ABC x bXb Ab");
  CHECK(R("{{ '42'|int + 1 }} {{ '4.7'|int }} {{ 'x'|int(-1) }} {{ '2.5'|float }} {{ 2.5|round }} "
          "{{ 2.675|round(2) }} {{ 2.1|round(method='ceil') }}") == "43 4 -1 2.5 2.0 2.67 3.0");
  CHECK(R("{{ [3, 9, 1]|max }} {{ [3, 9, 1]|min }} {{ [1.5, 2]|sum }} {{ -3|abs }} {{ 'abc'|length "
          "}} {{ [1, 2]|first }} {{ [1, 2]|last }}") == "9 1 3.5 3 3 1 2");
  CHECK(R("{{ missing|default('d') }} {{ ''|default('e', true) }} {{ none|d('n') }}") ==
        "d e None");
  CHECK(R("{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(1, "
          "blank=true) }}") == "a\n  b\n\n  c|  a\n  b|a\n \n b");
  CHECK(R("{{ {'b': 1, 'a': [1, 2.5, none], 'c': '<&\\''}|tojson }}") ==
        "{\"a\": [1, 2.5, null], \"b\": 1, \"c\": \"\\u003c\\u0026\\u0027\"}");
  CHECK(R("{{ {'k': [1]}|tojson(2) }} {{ 'é'|tojson }}") ==
        "{\n  \"k\": [\n    1\n  ]\n} \"\\u00e9\"");
  CHECK(R("{{ '%s=%d'|format('x', 5) }} {{ '{:>4}|{:.2f}'.format('r', 3.14159) }}") ==
        "x=5    r|3.14");
  CHECK(R("{{ [1, 2, 3]|batch(2)|list }} {{ {'b': 1, 'a': 2}|dictsort }}") ==
        "[[1, 2], [3]] [('a', 2), ('b', 1)]");
  CHECK(R("{% filter upper %}x{{ 'y' }}{% endfilter %}") == "XY");
  CHECK(R("{% for k, g in [{'t': 'b', 'n': 1}, {'t': 'a', 'n': 2}, {'t': 'b', 'n': "
          "3}]|groupby('t') %}{{ k }}{{ g|map(attribute='n')|list }}{% endfor %}") ==
        "a[2]b[1, 3]");
  CHECK(R("{{ '<'|e|e }} {{ '<'|forceescape|forceescape }} {{ ('<'|e) + '>' }} {{ ('<'|e) ~ '>' "
          "}}") == "&lt; &amp;lt; &lt;&gt; &lt;>");
}

TEST_CASE("tmpl: tests with `is`") {
  CHECK(R("{{ x is defined }}{{ y is defined }}{{ y is undefined }}{{ none is none }}{{ 1 is "
          "number }}{{ 1 is integer }}{{ 1.0 is float }}",
          {{"x", 1}}) == "TrueFalseTrueTrueTrueTrueTrue");
  CHECK(R("{{ 's' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 'x' is sequence }}{{ true "
          "is boolean }}{{ true is true }}{{ 0 is false }}") == "TrueTrueTrueTrueTrueTrueFalse");
  CHECK(R("{{ 6 is divisibleby 3 }}{{ 3 is even }}{{ 3 is odd }}{{ 1 is eq 1 }}{{ 1 is ne 1 }}{{ 1 "
          "is lt 2 }}{{ 2 is ge 3 }}{{ 2 is in [2] }}{{ none is sameas none }}") ==
        "TrueFalseTrueTrueFalseTrueFalseTrueTrue");
  CHECK(R("{{ 5 is not even }}") == "True");
}

TEST_CASE("tmpl: Python methods on str and dict") {
  CHECK(R("{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(none, 1) }} {{ "
          "'x.y.z'.rsplit('.', 1) }}") ==
        "['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['x.y', 'z']");
  CHECK(R("{{ 'Hi'.upper() }}{{ 'Hi'.lower() }} {{ 'abc'.startswith('ab') }} {{ "
          "'abc'.endswith(('x', 'c')) }} {{ ' p '.strip() }} {{ '-'.join(['a', 'b']) }} {{ "
          "'aa'.replace('a', 'b', 1) }}") == "HIhi True True p a-b ba");
  CHECK(R("{{ d.get('a') }} {{ d.get('z', 0) }} {{ d.keys()|list }} {{ d.values()|list }} {{ "
          "d.items() }}",
          {{"d", {{"a", 1}}}}) == "1 0 ['a'] [1] dict_items([('a', 1)])");
}

TEST_CASE("tmpl: StrictUndefined errors name file, line, column and the name") {
  CHECK(Err("a\n  {{ foo }}") == "t.j2:2:6: undefined variable 'foo'");
  CHECK(Err("{{ d.y }}", {{"d", {{"a", 1}}}}) == "t.j2:1:6: 'dict object' has no attribute 'y'");
  CHECK(Err("{{ d.y.z }}", {{"d", {{"a", 1}}}}) == "t.j2:1:6: 'dict object' has no attribute 'y'");
  CHECK(Err("{{ l[3] }}", {{"l", {1}}}) == "t.j2:1:5: list object has no element 3");
  CHECK(Err("{% for x in nope %}{% endfor %}") == "t.j2:1:13: undefined variable 'nope'");
  CHECK(Err("{% if nope %}{% endif %}") == "t.j2:1:7: undefined variable 'nope'");
  CHECK(Err("{{ nope ~ 'x' }}") == "t.j2:1:4: undefined variable 'nope'");
  CHECK(Err("{{ nope|upper }}") == "t.j2:1:4: undefined variable 'nope'");
  CHECK(Err("{% set v = nope %}{{ v }}") == "t.j2:1:12: undefined variable 'nope'");
  CHECK(Err("{% set v = nope %}ok").empty());  // assigning an undefined value is fine
  CHECK(Err("{{ [1]|first(2) }}") == "t.j2:1:8: first() takes at most 0 argument(s) (1 given)");
}

TEST_CASE("tmpl: syntax errors") {
  CHECK(Err("{{ x | bar }}") == "t.j2:1:8: unknown filter 'bar'");
  CHECK(Err("{% if x %}{{ x|bar }}{% endif %}", {{"x", 1}}) ==
        "t.j2:1:16: unknown filter 'bar'");                    // fails when run
  CHECK(Err("{% if false %}{{ x|bar }}{% endif %}").empty());  // like jinja2: not run, no error
  CHECK(Err("{{ 1 is bogus }}") == "t.j2:1:9: unknown test 'bogus'");
  CHECK(Err("{% for x in l %}abc") ==
        "t.j2:1:20: expected 'endfor' or 'else', got end of template (unclosed 'for' opened at "
        "line 1)");
  CHECK(Err("{% if 1 %}{% for x in l %}{% endif %}") ==
        "t.j2:1:30: expected 'endfor' or 'else', got 'endif' (unclosed 'for' opened at line 1)");
  CHECK(Err("{% macro m() %}") ==
        "t.j2:1:16: expected 'endmacro', got end of template (unclosed 'macro' opened at line 1)");
  CHECK(Err("{% endfor %}") == "t.j2:1:4: unexpected 'endfor' (no block is open)");
  CHECK(Err("{% bogus %}") == "t.j2:1:4: unknown tag 'bogus'");
  CHECK(Err("{{ 1 +* 2 }}") == "t.j2:1:7: unexpected '*'");
  CHECK(Err("{{ 'abc }}") == "t.j2:1:4: unexpected char '''");
  CHECK(Err("{{ 1 }") == "t.j2:1:6: unexpected '}'");
  CHECK(Err("{{ x") == "t.j2:1:5: expected end of print statement, got end of template");
  CHECK(Err("{# open") == "t.j2:1:1: missing end of comment tag");
  CHECK(Err("{% raw %}x") == "t.j2:1:1: missing end of raw directive");
  CHECK(Err("{% macro m(a=1, b) %}{% endmacro %}") ==
        "t.j2:1:17: non-default argument follows default argument");
  CHECK(Err("{% from 'x' import _p %}") ==
        "t.j2:1:20: names starting with an underline can not be imported");
  CHECK(Err("{% autoescape true %}{% endautoescape %}") ==
        "t.j2:1:4: 'autoescape' is not supported by this template engine");
  CHECK(Err("{% for x in [] recursive if x %}{% endfor %}") ==
        "t.j2:1:26: expected end of statement block, got 'if'");
  // Deep nesting is an error, not a crash.
  std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  CHECK(Err(deep).find("template is nested too deeply") != std::string::npos);
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += "{% if 1 %}";
  CHECK(Err(blocks).find("template is nested too deeply") != std::string::npos);
}

TEST_CASE("tmpl: include, import and from-import resolve against the search root") {
  TempDir dir;
  dir.Write(
      "main.j2",
      "[{% include 'sub/a.j2' %}]{% for item in [1, 2] %}{% include 'item.j2' %}{% endfor %}\n");
  dir.Write("sub/a.j2", "a:{% include 'b.j2' %}");  // "b.j2" is root/b.j2, not sub/b.j2
  dir.Write("b.j2", "root-b");
  dir.Write("sub/b.j2", "WRONG");
  dir.Write("item.j2", "<{{ item }}{{ loop is defined }}>");
  dir.Write("lib.j2", "{% set v = 2 %}{% macro hi(n) %}hi {{ n }} v{{ v }}{% endmacro %}body");
  dir.Write("use.j2",
            "{% import 'lib.j2' as lib %}{% from 'lib.j2' import hi as h %}{{ lib.hi(1) }}|{{ h(2) "
            "}}|{{ lib.v }}|{{ lib }}|{{ data_var is defined }}");
  dir.Write("lib_ctx.j2", "{% macro m() %}{{ data_var is defined }}{% endmacro %}");
  dir.Write("ctx.j2",
            "{% from 'lib_ctx.j2' import m %}{% import 'lib_ctx.j2' as c with context %}{{ m() "
            "}}{{ c.m() }}");
  Environment env(dir.path.string());
  CHECK(env.Render("main.j2", Json::object()) == "[a:root-b]<1False><2False>");
  CHECK(env.Render("use.j2", {{"data_var", 1}}) == "hi 1 v2|hi 2 v2|2|body|True");
  CHECK(env.Render("ctx.j2", {{"data_var", 1}}) ==
        "FalseTrue");  // imports are without context by default
  CHECK(env.Render("./sub//a.j2", Json::object()) == "a:root-b");
}

TEST_CASE("tmpl: errors inside included and imported files name that file") {
  TempDir dir;
  dir.Write("main.j2", "x\n{% include 'inc.j2' %}");
  dir.Write("inc.j2", "line1\n  {{ missing_in_inc }}");
  dir.Write("mac.j2", "{% macro m() %}\n{{ nope }}{% endmacro %}");
  dir.Write("use.j2", "{% from 'mac.j2' import m %}\n\n{{ m() }}");
  dir.Write("esc.j2", "{% include '../outside.j2' %}");
  dir.Write("nf.j2", "{% include 'nothere.j2' %}");
  dir.Write("bad.j2", "ok\n{% for x in y %}");
  dir.Write("incbad.j2", "{% include 'bad.j2' %}");
  Environment env(dir.path.string());
  auto err = [&](const std::string& name) -> std::string {
    try {
      env.Render(name, Json::object());
    } catch (const msc::tmpl::TemplateError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(err("main.j2") == dir.Name("inc.j2") +
                              ":2:6: undefined variable 'missing_in_inc'\n  included from " +
                              dir.Name("main.j2") + ":2:4");
  CHECK(err("use.j2") == dir.Name("mac.j2") +
                             ":2:4: undefined variable 'nope'\n  in macro 'm' called from " +
                             dir.Name("use.j2") + ":3:4");
  CHECK(err("esc.j2") ==
        dir.Name("esc.j2") + ":1:4: template name '../outside.j2' escapes the search root");
  CHECK(err("nf.j2") == dir.Name("nf.j2") + ":1:12: template 'nothere.j2' not found");
  CHECK(err("incbad.j2") == dir.Name("bad.j2") +
                                ":2:17: expected 'endfor' or 'else', got end of template (unclosed "
                                "'for' opened at line 2)\n"
                                "  included from " +
                                dir.Name("incbad.j2") + ":1:4");
  CHECK(err("missing.j2") ==
        "missing.j2: template not found (search path '" + dir.path.string() + "')");
  CHECK(err("../x.j2") == "../x.j2: template name '../x.j2' escapes the search root");
}

TEST_CASE("tmpl: a search path resolves each name to the first folder that has it") {
  TempDir dir;
  dir.Write("backend/main.j2", "{% include 'shared.j2' %}|{% include 'both.j2' %}");
  dir.Write("backend/both.j2", "backend's");
  dir.Write("common/shared.j2", "{% include 'both.j2' %}+common");
  dir.Write("common/both.j2", "common's");
  const std::string backend = (dir.path / "backend").string(),
                    common = (dir.path / "common").string();
  Environment env(std::vector<std::string>{backend, common});
  // A file in a later folder includes by name too, so it sees the earlier folder's override.
  CHECK(env.Render("main.j2", Json::object()) == "backend's+common|backend's");
  CHECK(env.Render("shared.j2", Json::object()) == "backend's+common");
  try {
    env.Render("none.j2", Json::object());
    FAIL("expected an error");
  } catch (const msc::tmpl::TemplateError& e) {
    CHECK(std::string(e.what()) ==
          "none.j2: template not found (search path '" + backend + "', '" + common + "')");
  }
}

TEST_CASE("tmpl: recursive includes hit the depth limit instead of crashing") {
  TempDir dir;
  dir.Write("loop.j2", "{% include 'loop.j2' %}");
  Environment env(dir.path.string());
  try {
    env.Render("loop.j2", Json::object());
    FAIL("expected an error");
  } catch (const msc::tmpl::TemplateError& e) {
    CHECK(std::string(e.what()).find("maximum recursion depth exceeded") != std::string::npos);
  }
}

TEST_CASE("tmpl: user filters, globals and functions") {
  Environment env("");
  env.AddFilter("ident", [](const std::vector<Json>& args, const Json&) {
    std::string s = args.at(0).get<std::string>();
    for (char& c : s)
      if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    return Json(s);
  });
  env.AddFilter("suffix", [](const std::vector<Json>& args, const Json& kwargs) {
    return Json(args.at(0).get<std::string>() + kwargs.value("sep", "_") +
                args.at(1).get<std::string>());
  });
  env.AddGlobal("version", Json{{"major", 1}, {"minor", 2}});
  env.AddFunction("add", [](const std::vector<Json>& args, const Json&) {
    return Json(args.at(0).get<int>() + args.at(1).get<int>());
  });
  env.AddFunction("boom", [](const std::vector<Json>&, const Json&) -> Json {
    throw std::runtime_error("kaput");
  });
  CHECK(
      env.RenderString(
          "{{ 'a-b.c'|ident }} {{ 'x'|suffix('y', sep='.') }} {{ version.minor }} {{ add(2, 3) }}",
          Json::object()) == "a_b_c x.y 2 5");
  CHECK(env.RenderString("{{ ['a b']|map('ident')|list }}", Json::object()) == "['a_b']");
  try {
    env.RenderString("\n {{ boom() }}", Json::object(), "f.j2");
    FAIL("expected an error");
  } catch (const msc::tmpl::TemplateError& e) {
    CHECK(std::string(e.what()) == "f.j2:2:5: function 'boom' failed: kaput");
  }
}

TEST_CASE("tmpl: render data must be an object; parsed templates are cached") {
  Environment env("");
  CHECK_THROWS_AS(env.RenderString("x", Json::array()), msc::tmpl::TemplateError);
  CHECK(env.RenderString("{{ 1 }}", nullptr) == "1");

  TempDir dir;
  dir.Write("op.j2", "{{ node.name }}={{ node.op|upper }}({{ node.inputs|join(', ') }})\n");
  Environment fenv(dir.path.string());
  Json node = {{"node", {{"name", "n0"}, {"op", "add"}, {"inputs", {"a", "b"}}}}};
  CHECK(fenv.Render("op.j2", node) == "n0=ADD(a, b)");
  dir.Write("op.j2", "changed");  // the parsed template is cached per Environment
  CHECK(fenv.Render("op.j2", node) == "n0=ADD(a, b)");
  auto start = std::chrono::steady_clock::now();
  std::string last;
  for (int i = 0; i < 10000; ++i) {
    node["node"]["name"] = "n" + std::to_string(i);
    last = fenv.Render("op.j2", node);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(last == "n9999=ADD(a, b)");
  CHECK(secs < 5.0);  // ~10 us per render when cached; generous for loaded CI machines
}

TEST_CASE("tmpl: template inheritance (extends, block, super, self)") {
  TempDir dir;
  dir.Write("base.j2",
            "{% set who = 'base' %}<{% block head %}H{% endblock %}|{% block body %}B"
            "{% block inner %}i{% endblock %}{% endblock body %}|{{ who }}>");
  dir.Write("mid.j2",
            "{% extends 'base.j2' %}ignored{% block head %}mid+{{ super() }}{% endblock %}"
            "{% block inner %}I{{ super() }}{% endblock %}");
  dir.Write("child.j2",
            "pre {% extends 'mid.j2' %}{% set who = 'child' %}{% block head %}c:{{ super() }}:"
            "{{ super.super() }}:{{ self.inner() }}{% endblock %}");
  Environment env(dir.path.string());
  CHECK(env.Render("base.j2", Json::object()) == "<H|Bi|base>");
  CHECK(env.Render("mid.j2", Json::object()) == "<mid+H|BIi|base>");
  // Text before the extends is kept, text after it outside blocks is dropped; the base's
  // top-level set runs after the child's (one shared context).
  CHECK(env.Render("child.j2", Json::object()) == "pre <c:mid+H:H:Ii|BIi|base>");
  // RenderString templates extend files of the search root; blocks render in place without one.
  CHECK(env.RenderString("{% extends 'base.j2' %}{% block inner %}{{ x }}{% endblock %}",
                         {{"x", 5}}) == "<H|B5|base>");
  CHECK(R("{% block a %}A{% endblock %}{{ self.a() }}{% block b scoped %}{% endblock %}") == "AA");
  // Scoped blocks see the loop variables where they are rendered; plain blocks do not.
  CHECK(R("{% for i in [1, 2] %}{% block s scoped %}{{ i }}{% endblock %}{% block p %}{{ i is "
          "defined }}{% endblock %}{% endfor %}") == "1False2False");
  // An extends inside an if: only when it runs does the template become a child.
  dir.Write("cond.j2",
            "{% if wrap %}{% extends 'base.j2' %}{% endif %}[{% block inner %}c{% "
            "endblock %}]");
  CHECK(env.Render("cond.j2", {{"wrap", true}}) == "<H|Bc|base>");
  CHECK(env.Render("cond.j2", {{"wrap", false}}) == "[c]");
}

TEST_CASE("tmpl: template inheritance errors") {
  TempDir dir;
  dir.Write("req.j2", "[{% block must required %}{# override me #}{% endblock %}]");
  dir.Write("req_child.j2", "{% extends 'req.j2' %}");
  dir.Write("req_ok.j2", "{% extends 'req.j2' %}{% block must %}ok{% endblock %}");
  dir.Write("a.j2", "{% extends 'b.j2' %}");
  dir.Write("b.j2", "{% extends 'a.j2' %}");
  dir.Write("self.j2", "{% extends 'self.j2' %}");
  dir.Write("twice.j2", "{% extends 'req_ok.j2' %}{% extends 'req_ok.j2' %}");
  dir.Write("base.j2", "x\n{% block b %}{% endblock %}");
  dir.Write("err_child.j2", "{% extends 'base.j2' %}\n{% block b %}{{ nope }}{% endblock %}");
  dir.Write("missing.j2", "{% extends 'nothere.j2' %}");
  Environment env(dir.path.string());
  auto err = [&](const std::string& name) -> std::string {
    try {
      env.Render(name, Json::object());
    } catch (const msc::tmpl::TemplateError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(env.Render("req_ok.j2", Json::object()) == "[ok]");
  CHECK(err("req.j2") == dir.Name("req.j2") +
                             ":1:5: block 'must' is required: a template extending 'req.j2' must "
                             "define it");
  CHECK(err("req_child.j2") == dir.Name("req.j2") +
                                   ":1:5: block 'must' is required: a template extending "
                                   "'req.j2' must define it\n  extended by " +
                                   dir.Name("req_child.j2") + ":1:4");
  // Cycles are reported (Jinja2 recurses until Python's recursion limit).
  CHECK(err("a.j2") == dir.Name("b.j2") +
                           ":1:12: extends cycle: 'a.j2' -> 'b.j2' -> 'a.j2'\n  extended by " +
                           dir.Name("a.j2") + ":1:4");
  CHECK(err("self.j2") == dir.Name("self.j2") + ":1:12: extends cycle: 'self.j2' -> 'self.j2'");
  CHECK(err("twice.j2") == dir.Name("twice.j2") +
                               ":1:29: template extended multiple times (an earlier 'extends' "
                               "already named 'req_ok.j2')");
  CHECK(err("err_child.j2") ==
        dir.Name("err_child.j2") + ":2:17: undefined variable 'nope'\n  in block 'b' called from " +
            dir.Name("base.j2") + ":2:4\n  extended by " + dir.Name("err_child.j2") + ":1:4");
  CHECK(err("missing.j2") == dir.Name("missing.j2") + ":1:12: template 'nothere.j2' not found");
  CHECK(Err("{% block a %}{{ super() }}{% endblock %}") ==
        "t.j2:1:4: there is no parent block called 'a'.\n  in block 'a' called from t.j2:1:4");
  CHECK(Err("{% block a %}{% endblock %}{% block a %}{% endblock %}") ==
        "t.j2:1:31: block 'a' defined twice (first at line 1)");
  CHECK(Err("{% for x in [] %}{% extends 'b.j2' %}{% endfor %}") ==
        "t.j2:1:21: 'extends' must be at the top level of the template (it may be inside 'if', "
        "not inside for/with/macro/call/filter/set/block)");
  CHECK(Err("{% block a required %}x{% endblock %}") ==
        "t.j2:1:4: required block 'a' may only contain whitespace or comments");
  CHECK(Err("{% block a-b %}{% endblock %}") ==
        "t.j2:1:11: block names must be valid identifiers and may not contain hyphens (use '_')");
  std::string deep = Err("{% block a %}{{ self.a() }}{% endblock %}");
  CHECK_MESSAGE(deep.find("t.j2:1:22: maximum recursion depth exceeded") == 0, deep);
}

TEST_CASE("tmpl: recursive for loops") {
  Json tree = {{"tree",
                {{{"n", "a"}, {"c", {{{"n", "a1"}, {"c", Json::array()}}}}},
                 {{"n", "b"}, {"c", Json::array()}}}}};
  CHECK(R("{% for x in tree recursive %}{{ x.n }}{{ loop.depth }}{{ loop.depth0 }}{{ loop.index "
          "}}/{{ loop.length }}({{ loop(x.c) }}){% endfor %}",
          tree) == "a101/2(a1211/1())b102/2()");
  CHECK(R("{% for x in tree recursive %}{{ x.n }}[{{ loop(x.c) }}]{% else %}-{% endfor %}", tree) ==
        "a[a1[-]]b[-]");
  CHECK(R("{% for x in [[1, [2]], 3] recursive %}{% if x is iterable %}{{ loop(x) }}{% else %}{{ "
          "x }}{% endif %}{% endfor %}") == "123");
  CHECK(Err("{% for x in [1] %}{{ loop([]) }}{% endfor %}") ==
        "t.j2:1:22: loop() can only be called in a for loop marked 'recursive'");
  CHECK(Err("{% for x in [1] recursive %}{{ loop(5) }}{% endfor %}") ==
        "t.j2:1:32: 'int' object is not iterable");
  CHECK(Err("{% for x in [1] recursive %}{{ loop() }}{% endfor %}") ==
        "t.j2:1:32: loop() takes exactly one argument (the items), 0 given");
  std::string deep = Err("{% for x in [1] recursive %}{{ loop([x]) }}{% endfor %}");
  CHECK_MESSAGE(deep.find("t.j2:1:32: maximum recursion depth exceeded") == 0, deep);
}

TEST_CASE("tmpl: calling a value that is not callable names the expression") {
  Json d = {{"title", "T"}, {"n", 3}, {"node", {{"attrs", {{"k", 1}}}}}, {"l", {nullptr}}};
  CHECK(Err("{{ title() }}", d) == "t.j2:1:4: 'title' is not callable (a str)");
  CHECK(Err("{{ n() }}", d) == "t.j2:1:4: 'n' is not callable (an int)");
  CHECK(Err("{{ node.attrs.k() }}", d) == "t.j2:1:15: 'node.attrs.k' is not callable (an int)");
  CHECK(Err("{{ l[0]() }}", d) == "t.j2:1:5: 'l[0]' is not callable (None)");
  CHECK(Err("{% call title() %}{% endcall %}", d) == "t.j2:1:9: 'title' is not callable (a str)");
  CHECK(Err("{{ (n + 1)() }}", d) == "t.j2:1:7: 'int' object is not callable");
  CHECK(Err("{{ nope() }}", d) == "t.j2:1:4: undefined variable 'nope'");
}

// ---- render data parsed into the engine's own values (tmpl::Data) ----
namespace {

std::string RD(const std::string& src, const std::string& json) {
  TempDir dir;
  dir.Write("t.j2", src);
  Environment env(dir.path.string());
  return env.Render("t.j2", msc::tmpl::Data::ParseJson(json, "data.json"));
}

std::string ParseErr(const std::string& json) {
  try {
    msc::tmpl::Data::ParseJson(json, "data.json");
  } catch (const msc::tmpl::TemplateError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("tmpl: Data::ParseJson reads JSON as Python's json.loads does") {
  // Key order, duplicate keys (first position, last value: Python's dict), nesting.
  CHECK(RD("{{ d }}", R"({"d": {"b": 1, "a": 2, "b": 3}})") == "{'b': 3, 'a': 2}");
  CHECK(RD("{{ l }} {{ l|length }}", R"({"l": [1, [2, {"x": null}], true, false]})") ==
        "[1, [2, {'x': None}], True, False] 4");
  // Numbers: ints stay ints (-0 is 0), floats print like Python repr (beyond range: inf).
  CHECK(
      RD("{{ a }} {{ b }} {{ c }} {{ d }} {{ e }} {{ f }}",
         R"({"a": -0, "b": 1e-05, "c": 2.50, "d": 1E400, "e": -9223372036854775808, "f": 1e16})") ==
      "0 1e-05 2.5 inf -9223372036854775808 1e+16");
  // Strings: escapes, surrogate pairs, raw UTF-8.
  CHECK(RD("{{ s }}|{{ s|length }}", R"({"s": "a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00é"})") ==
        "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9|12");
  // A UTF-8 byte order mark is skipped; null data renders like an empty context.
  CHECK(RD("{{ x }}", "\xef\xbb\xbf{\"x\": 1}") == "1");
  CHECK(RD("plain", "null") == "plain");
  // Large objects are indexed (lookups by hash) and keep duplicates' rules.
  std::string big = "{\"d\": {";
  for (int i = 0; i < 40; ++i) big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  big += "\"k7\": 70}}";
  CHECK(RD("{{ d.k0 }} {{ d.k7 }} {{ d['k39'] }} {{ d|length }} {{ d.k40 is defined }}", big) ==
        "0 70 39 40 False");
}

TEST_CASE("tmpl: Data::ParseJson errors name the file, line and column") {
  CHECK(ParseErr("{\"a\": 1,}") ==
        "data.json: invalid JSON: line 1, column 9: expected a string key");
  CHECK(ParseErr("{\"a\": 1}\n x") ==
        "data.json: invalid JSON: line 2, column 2: unexpected data after the JSON value");
  CHECK(ParseErr("{\"a\": [1, 2}") ==
        "data.json: invalid JSON: line 1, column 12: expected ',' or ']'");
  CHECK(ParseErr("{\"a\": 01}") ==
        "data.json: invalid JSON: line 1, column 8: expected ',' or '}'");
  CHECK(ParseErr("{\"a\": NaN}") ==
        "data.json: invalid JSON: line 1, column 7: unexpected character 'N' (expected a value)");
  CHECK(ParseErr("{\"a\": 9223372036854775808}") ==
        "data.json: invalid JSON: line 1, column 7: integer 9223372036854775808 is out of the "
        "supported 64-bit range");
  CHECK(ParseErr("{\"a\": \"x\ny\"}") ==
        "data.json: invalid JSON: line 1, column 9: control character U+000A in a string (must be "
        "escaped)");
  CHECK(ParseErr("{\"a\": \"\\ud800\"}") ==
        "data.json: invalid JSON: line 1, column 14: high surrogate in a \\u escape without its "
        "low surrogate");
  CHECK(ParseErr("{\"a\": \"\xff\"}") ==
        "data.json: invalid JSON: line 1, column 8: invalid UTF-8 in a string");
  CHECK(ParseErr("{\"a\": \"abc") ==
        "data.json: invalid JSON: line 1, column 11: unterminated string");
  CHECK(ParseErr("") ==
        "data.json: invalid JSON: line 1, column 1: unexpected end of input (expected "
        "a value)");
  CHECK(ParseErr(std::string(1001, '[')) ==
        "data.json: invalid JSON: line 1, column 1001: nesting too deep (more than 1000 levels)");
  // The render data must be an object (or null).
  TempDir dir;
  dir.Write("t.j2", "x");
  Environment env(dir.path.string());
  try {
    env.Render("t.j2", msc::tmpl::Data::ParseJson("[1]", "data.json"));
    FAIL("expected an error");
  } catch (const msc::tmpl::TemplateError& e) {
    CHECK(std::string(e.what()) ==
          dir.Name("t.j2") + ": render data must be a JSON object, got array");
  }
}

TEST_CASE("tmpl: Data renders exactly like the same Json") {
  TempDir dir;
  dir.Write("m.j2", "{% macro f(n) %}{{ n.name|upper }}:{{ n.attrs|dictsort }}{% endmacro %}");
  dir.Write("t.j2",
            "{% from 'm.j2' import f %}{% set ns = namespace(t=0) %}"
            "{% for n in nodes %}{% set ns.t = ns.t + n.flops %}{{ loop.index }} {{ f(n) }} "
            "{{ n.inputs|join(',') }} {{ (n.flops / 3)|round(2) }} {{ '{:,}'.format(n.flops) }} "
            "{{ n.attrs|tojson }}\n{% endfor %}{{ ns.t }} "
            "{{ nodes|map(attribute='op')|unique|sort|list }}");
  Json data = {{"nodes", Json::array()}};
  for (int i = 0; i < 50; ++i)
    data["nodes"].push_back({{"name", "n" + std::to_string(i)},
                             {"op", i % 3 ? "Add" : "conv"},
                             {"inputs", {"x", "n" + std::to_string(i / 2)}},
                             {"attrs", {{"k", i}, {"pad", "same"}, {"eps", 1e-5}}},
                             {"flops", i * 123457}});
  Environment env(dir.path.string());
  const std::string from_json = env.Render("t.j2", data);
  CHECK(env.Render("t.j2", msc::tmpl::Data::ParseJson(data.dump(), "data")) == from_json);
  CHECK(env.Render("t.j2", msc::tmpl::Data::FromJson(data)) == from_json);
  CHECK(from_json.find("50 N49:[('eps', 1e-05), ('k', 49), ('pad', 'same')] x,n24 2016464.33 "
                       "6,049,393 {\"eps\": 1e-05, \"k\": 49, \"pad\": \"same\"}") !=
        std::string::npos);
}

TEST_CASE("tmpl: frames reuse scopes without leaking values between calls") {
  // Macro scopes are recycled after each call; loop scopes after each iteration unless captured.
  CHECK(R("{% macro m(a, b=2) %}{{ a }}{{ b }}{% if c is defined %}!{% endif %}{% endmacro %}"
          "{% for i in range(3) %}{{ m(i) }}{{ m(i, b=i * 10) }}|{% endfor %}") ==
        "0200|12110|22220|");
  CHECK(R("{% macro outer(x) %}[{{ caller(x) }}]{% endmacro %}"
          "{% for i in [1, 2] %}{% call(y) outer(i) %}{% for j in [y, y + 1] %}{{ j }}"
          "{% endfor %}{% endcall %}{% endfor %}") == "[12][23]");
  CHECK(R("{% for i in [1, 2] %}{% macro m() %}<{{ i }}>{% endmacro %}{{ m() }}{% endfor %}") ==
        "<1><2>");
  // A template included in a loop sees the loop's variables, not `loop` itself.
  TempDir dir;
  dir.Write("inc.j2", "{{ x }}");
  dir.Write("inc_loop.j2", "{{ loop is defined }}");
  dir.Write("t.j2",
            "{% for x in [1, 2] %}{% include 'inc.j2' %}{% include 'inc_loop.j2' %}{% endfor %}");
  Environment env(dir.path.string());
  CHECK(env.Render("t.j2", Json::object()) == "1False2False");
}

#if MSC_TMPL_ASAN
#include <sanitizer/asan_interface.h>
// The small-block pool must be off under ASan (value.h MSC_TMPL_ASAN): a block freed by
// PoolFree is then poisoned, so a use after free of an engine object is reported. With the pool
// on (clang does not define __SANITIZE_ADDRESS__), the block would sit unpoisoned on a free list.
TEST_CASE("under AddressSanitizer a freed template-engine block is poisoned") {
  void* p = msc::tmpl::PoolAlloc(32);
  CHECK_FALSE(__asan_address_is_poisoned(p));
  msc::tmpl::PoolFree(p, 32);
  CHECK(__asan_address_is_poisoned(p));
}
#endif

// ---- compiled-form shortcuts (issue 9: the 5,000-op render) ----
TEST_CASE("tmpl: Render with a Sink streams the same text in pieces") {
  TempDir dir;
  // ~200 KB of output: several pieces of about Environment::kStreamChunk bytes.
  dir.Write("big.j2",
            "{% macro row(i) %}{{ '%05d'|format(i) }} {{ 'x' * 90 }}\n{% endmacro %}"
            "{% for i in range(2000) %}{{ row(i) }}{% endfor %}end");
  dir.Write("small.j2", "{{ a }}-{{ b }}");
  dir.Write("fails.j2", "{% for i in range(2000) %}{{ 'y' * 100 }}{% endfor %}{{ nope }}");
  Environment env(dir.path.string());
  const msc::tmpl::Data data = msc::tmpl::Data::ParseJson(R"({"a": 1, "b": "two"})", "d");
  std::vector<std::string> pieces;
  auto sink = [&](std::string_view p) { pieces.emplace_back(p); };
  env.Render("big.j2", data, sink);
  std::string joined;
  for (const auto& p : pieces) joined += p;
  CHECK(joined == env.Render("big.j2", data));
  CHECK(pieces.size() >= 3);
  for (size_t i = 0; i + 1 < pieces.size(); ++i) {
    CHECK(pieces[i].size() >= Environment::kStreamChunk);
    CHECK(pieces[i].size() < Environment::kStreamChunk + 200);  // flushed after each statement
  }
  pieces.clear();
  env.Render("small.j2", data, sink);  // small output: one piece at the end
  REQUIRE(pieces.size() == 1);
  CHECK(pieces[0] == "1-two");
  // An error after some pieces were given: they stay given, the error is thrown.
  pieces.clear();
  try {
    env.Render("fails.j2", data, sink);
    FAIL("expected an error");
  } catch (const msc::tmpl::TemplateError& e) {
    CHECK(std::string(e.what()) == dir.Name("fails.j2") + ":1:57: undefined variable 'nope'");
  }
  CHECK(pieces.size() >= 3);
}

TEST_CASE("tmpl: interned keys are one immortal string per text") {
  using msc::tmpl::HashStr;
  using msc::tmpl::InternKey;
  using msc::tmpl::Value;
  const msc::tmpl::StrBox* a = InternKey("shape", HashStr("shape"));
  REQUIRE(a != nullptr);
  CHECK(InternKey(std::string("sha") + "pe", HashStr("shape")) == a);
  CHECK(InternKey("shapes", HashStr("shapes")) != a);
  CHECK(a->hash == HashStr("shape"));
  const std::string long_key(msc::tmpl::kMaxInternedText + 1, 'k');
  CHECK(InternKey(long_key, HashStr(long_key)) == nullptr);
  // Values of interned strings are strings like any other, shared without counting.
  Value k = Value::Key("shape");
  CHECK(k.is_string());
  CHECK(k.s() == "shape");
  CHECK(k.interned() == a);
  Value copy = k;
  CHECK(copy.interned() == a);
  CHECK(msc::tmpl::Equals(copy, Value::Str("shape")));
  CHECK(Value::Key(long_key).interned() == nullptr);
  CHECK(Value::Key(long_key).s() == long_key);
  CHECK(Value::Str("shape").interned() == nullptr);
  // Dicts keyed by interned and by plain strings find each other's keys.
  msc::tmpl::ValueDict items;
  items.emplace_back(Value::Key("shape"), Value::Int(1));
  items.emplace_back(Value::Str("dtype"), Value::Int(2));
  Value d = Value::Dict(std::move(items));
  Value out;
  CHECK(d.Get(std::string("shape"), &out));
  CHECK(out.i() == 1);
  CHECK(d.Get(Value::Key("dtype"), &out));
  CHECK(out.i() == 2);
  CHECK_FALSE(d.Get(std::string("nope"), &out));
  // JSON keys are interned, so a template's `x.shape` matches them by pointer.
  CHECK(RD("{{ x.shape }} {{ x['shape'] }} {{ x.get('shape') }} {{ x.dtype is defined }}",
           R"({"x": {"dtype": "f32", "shape": [1, 2]}})") == "[1, 2] [1, 2] [1, 2] True");
  const std::string long_json = "{\"x\": {\"" + long_key + "\": 5}}";
  CHECK(RD("{{ x." + long_key + " }} {{ x|length }}", long_json) == "5 1");
}

TEST_CASE("tmpl: dictsort loops read the dict in place, with the filter's semantics") {
  const std::string t =
      "{% for k, v in d|dictsort %}{{ k }}={{ v }};{% else %}none{% endfor %}|"
      "{% for k, v in d|dictsort(reverse=true) %}{{ k }}{% endfor %}";
  const std::string json = R"({"d": {"b": 1, "B": 2, "a": 3, "_": 4}})";
  // (case-folded keys; equal ones keep their order, reversed or not, as Python's sorted does)
  const std::string expected = "_=4;a=3;b=1;B=2;|bBa_";
  CHECK(RD(t, json) == expected);                   // native data
  CHECK(R(t, Json::parse(json)) == expected);       // JSON views: the filter itself
  CHECK(R(t, {{"d", Json::object()}}) == "none|");  // empty
  CHECK(Err(t, {{"d", Json::array({1})}}) == "t.j2:1:18: dictsort requires a mapping, got list");
  CHECK(Err("{% for k, v in nope|dictsort %}{% endfor %}") ==
        "t.j2:1:16: undefined variable 'nope'");
  // A user filter named dictsort replaces the builtin in loops too.
  TempDir dir;
  dir.Write("t.j2", "{% for k, v in d|dictsort %}{{ k }}{{ v }}{% endfor %}");
  Environment env(dir.path.string());
  env.AddFilter("dictsort", [](const std::vector<Json>&, const Json&) {
    return Json::array({Json::array({"x", 1})});
  });
  CHECK(env.Render("t.j2", msc::tmpl::Data::ParseJson(json, "d")) == "x1");
}

TEST_CASE("tmpl: macro signatures, cached includes and str.format in place") {
  CHECK(Err("{% macro m(a, b, a) %}{% endmacro %}") ==
        "t.j2:1:18: duplicate argument 'a' in the signature");
  CHECK(Err("{% macro m(x) %}{% endmacro %}{% call(y, y) m(1) %}{% endcall %}") ==
        "t.j2:1:42: duplicate argument 'y' in the signature");
  // A constant include name is loaded once; each render still sees the current variables.
  TempDir dir;
  dir.Write("inc.j2", "<{{ x }}>");
  dir.Write("t.j2", "{% for x in xs %}{% include 'inc.j2' %}{% endfor %}");
  Environment env(dir.path.string());
  CHECK(env.Render("t.j2", {{"xs", {1, 2}}}) == "<1><2>");
  CHECK(env.Render("t.j2", {{"xs", {"a"}}}) == "<a>");
  // "literal".format(...) printed straight into the output, with Python's rules.
  CHECK(R("{{ '{:,}|{:>4}|{!r}|{x}'.format(1234567, 'ab', 'q', x=none) }}") ==
        "1,234,567|  ab|'q'|None");
  CHECK(R("{{ '[{}]'.format('a' if false) }}") == "[]");
  CHECK(Err("{{ '[{:>3}]'.format('a' if false) }}") ==
        "t.j2:1:14: unsupported format string passed to Undefined.__format__");
  CHECK(Err("{{ '{} {}'.format(1) }}") ==
        "t.j2:1:12: Replacement index 1 out of range for positional args tuple");
}
