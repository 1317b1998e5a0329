"""Seeded random generator of Jinja2 expressions/templates for differential testing.

Expressions are generated type-directed (number, string, list, dict, bool) so most of them
evaluate without errors; some deliberately mix types. Each generated case is one small
template rendered with DATA.
"""
import random

DATA = {
    "n": 7, "m": -3, "z": 0, "f": 2.5, "g": -0.1, "big": 123456789, "tiny": 1e-07,
    "s": "Hello World", "t": "a,b,,c", "e": "", "u": "  padded\tText \n", "q": "it's \"q\"",
    "uni": "caf\u00e9 \u20ac",
    "lst": [3, 1, 2], "words": ["pear", "Apple", "fig", "apple"], "fl": [1.5, -2.25, 0.1],
    "mixed": [1, "a", None, True, 2.0], "empty": [],
    "d": {"b": 2, "a": 1, "c": [1, 2]}, "nested": {"x": {"y": [10, 20, {"z": "deep"}]}},
    "people": [{"name": "bob", "age": 31, "tags": ["x"]}, {"name": "Al", "age": 25, "tags": []},
               {"name": "cy", "age": 31, "tags": ["y", "z"]}],
    "flag": True, "off": False, "nil": None,
}

NUM_VARS = ["n", "m", "z", "f", "g", "big", "tiny", "lst[0]", "lst[-1]", "fl[1]", "d.a", "d['b']",
            "people[0].age", "nested.x.y[1]"]
STR_VARS = ["s", "t", "e", "u", "q", "uni", "words[1]", "people[1].name", "nested.x.y[2].z", "d.c|string"]
LIST_VARS = ["lst", "words", "fl", "mixed", "empty", "d.c", "people", "nested.x.y", "[1, 2, 3]",
             "['b', 'a']", "(1, 'x')", "range(4)|list", "d.keys()|list", "d.values()|list", "d.items()|list"]
DICT_VARS = ["d", "nested", "nested.x", "{'k': 1, 'j': [2]}", "people[0]", "{}"]
BOOL_VARS = ["flag", "off", "true", "false", "nil is none", "n is odd", "s is string"]

NUM_LITS = ["0", "1", "2", "3", "7", "10", "-4", "0.5", "1.25", "2.0", "1e-05", "3e3", "0.1", "100",
            "1_000", "0x1F", "0o17", "0b101", "1e20", "1.5e-10", "12345.678"]
STR_LITS = ["'a'", '"b c"', "'x\"y'", '"it\'s"', "'\\n'", "'tab\\there'", "''", "'%s-%d'", "'A_b-c d'",
            "'\\u00e9t\\u00e9'", "'  sp  '", "'0042'", "'3.75'", "'abc'", "'a,b,c'"]

NUM_FILTERS = ["abs", "int", "float", "round", "round(1)", 'round(2, "floor")', 'round(method="ceil")']
STR_FILTERS = ["upper", "lower", "title", "capitalize", "trim", "reverse", "string", "e", "center(9)",
               "truncate(5, leeway=0)", "indent(2)", "indent(2, true)", "indent(3, first=true, blank=true)"]
STR_METHODS = ["upper()", "lower()", "strip()", "lstrip()", "rstrip()", "title()", "capitalize()",
               "swapcase()", "zfill(6)", 'ljust(8, "*")', "rjust(8)", 'center(7, "-")',
               'replace("a", "A")', 'strip("Hd")']
LIST_FILTERS = ["sort", "reverse", "unique", "list", "sort(reverse=true)", "sort(case_sensitive=true)",
                "batch(2)", "slice(2)", 'map("string")', "select", "reject"]
PEOPLE_FILTERS = ['map(attribute="name")', 'sort(attribute="age")', 'sort(attribute="age,name")',
                  'selectattr("age", "gt", 26)', 'rejectattr("tags")', 'map(attribute="tags")',
                  'selectattr("name", "in", ["bob", "cy"])', 'unique(attribute="age")',
                  'map(attribute="nope", default=0)', 'sort(attribute="name", reverse=true)',
                  'map(attribute="tags.0", default="-")']
NUMLIST_FILTERS = ['select("odd")', 'reject("even")', 'select("gt", 1)', 'reject("divisibleby", 3)',
                   'map("abs")', 'map("float")']
TESTS = ["defined", "undefined", "none", "number", "integer", "float", "string", "mapping", "iterable",
         "sequence", "boolean", "true", "false", "callable", "lower", "upper"]
NUM_TESTS = ["even", "odd", "divisibleby 3", "divisibleby(2)", "eq 7", "ne(2)", "lt 3", "ge(0)", "in [1, 2, 7]"]
STR_PREDICATES = ['startswith("H")', 'endswith(("d", "c"))', "isdigit()", "isupper()", "islower()",
                  "isalpha()", "isspace()"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, seq):
        return self.r.choice(seq)

    def num(self, d):
        if d <= 0 or self.r.random() < 0.3:
            return self.pick(NUM_LITS + NUM_VARS)
        c = self.r.randrange(12)
        a, b = self.num(d - 1), self.num(d - 1)
        if c == 0:
            return "(%s %s %s)" % (a, self.pick(["+", "-", "*"]), b)
        if c == 1:
            return "(%s %s %s)" % (a, self.pick(["/", "//", "%"]), self.pick(["2", "3", "-2", "0.5", "7", "1.5"]))
        if c == 2:  # (negative base) ** 0.5 is complex in Python: not supported
            base = self.pick(["2", "3", "-2", "1.5", "0.5", "10"])
            exps = ["0", "1", "2", "3", "-1", "-2"] + ([] if base.startswith("-") else ["0.5"])
            return "(%s ** %s)" % (base, self.pick(exps))
        if c == 3:
            return "(%s|length)" % self.str(d - 1)
        if c == 4:
            return "(%s|length)" % self.list(d - 1)
        if c == 5:
            return "(%s|%s)" % (a, self.pick(NUM_FILTERS))
        if c == 6:
            return "(-%s)" % a
        if c == 7:
            return "(%s|%s)" % (self.pick(["[1, 2, 3]", "lst", "fl", "[0.5, 0.25]", "[]"]),
                                self.pick(["sum", "max", "min", "sum(start=10)"]))
        if c == 8:
            return "(%s|%s)" % (self.str(d - 1), self.pick(["int", "float", "int(5)", "float(1.5)", "wordcount"]))
        if c == 9:
            return "(people|sum(attribute='age'))"
        if c == 10:
            return "(%s if %s else %s)" % (a, self.bool(d - 1), b)
        return "(%s.count('a'))" % self.str(d - 1)

    def str(self, d):
        if d <= 0 or self.r.random() < 0.3:
            return self.pick(STR_LITS + STR_VARS)
        c = self.r.randrange(15)
        a = self.str(d - 1)
        if c == 0:
            return "(%s ~ %s)" % (a, self.any(d - 1))
        if c == 1:
            return "(%s|%s)" % (a, self.pick(STR_FILTERS))
        if c == 2:
            return "(%s|join(%s))" % (self.list(d - 1), self.pick(["", "', '", "'-'"]))
        if c == 3:
            return "(%s|string)" % self.any(d - 1)
        if c == 4:
            return "(%s.%s)" % (a, self.pick(STR_METHODS))
        if c == 5:
            return "(%s|replace(%s, %s))" % (a, self.pick(['"l"', '"o"', '" "', '""']), self.pick(['"L"', '""', '"__"']))
        if c == 6:
            return "(%s * %s)" % (self.pick(STR_LITS), self.pick(["0", "1", "3", "-1"]))
        if c == 7:
            return "(%s|tojson)" % self.any(d - 1)
        if c == 8:
            return "('%%s|%%5.2f|%%-4d|%%x|%%r' %% (%s, %s, %s, %s, %s))" % (
                self.any(d - 1), self.num(d - 1), self.num(d - 1), self.pick(["255", "n", "16", "-3"]), self.any(d - 1))
        if c == 9:
            return "(%s[%s])" % (a, self.pick(["0", "-1", "1:3", "::-1", ":2", "2:", "::2", "-3:"]))
        if c == 10:
            return "(%s if %s else %s)" % (a, self.bool(d - 1), self.str(d - 1))
        if c == 11:
            return "('{}-{:>6}-{:.2f}'.format(%s, %s, %s))" % (self.any(d - 1), a, self.num(d - 1))
        if c == 12:
            return "(%s|string)" % self.list(d - 1)
        if c == 13:
            return "(%s.split(%s)|join('/'))" % (a, self.pick(["", '","', '" "', "none, 1"]))
        return "(%s|tojson(indent=2))" % self.dict(d - 1)

    def list(self, d):
        if d <= 0 or self.r.random() < 0.35:
            return self.pick(LIST_VARS)
        c = self.r.randrange(10)
        if c == 0:
            return "[%s]" % ", ".join(self.any(d - 1) for _ in range(self.r.randrange(4)))
        if c == 1:
            return "(%s|%s|list)" % (self.list(d - 1), self.pick(LIST_FILTERS))
        if c == 2:
            return "(%s + %s)" % (self.list(d - 1), self.list(d - 1))
        if c == 3:
            return "(%s[%s])" % (self.list(d - 1), self.pick(["1:", ":2", "::-1", "1:3", "::2", "-2:"]))
        if c == 4:
            return "(people|%s|list)" % self.pick(PEOPLE_FILTERS)
        if c == 5:
            return "(%s|list)" % self.str(d - 1)
        if c == 6:
            return "(%s|%s|list)" % (self.pick(["lst", "fl", "[1, 2, 3, 4]", "range(10)"]), self.pick(NUMLIST_FILTERS))
        if c == 7:
            return "(%s|dictsort%s)" % (self.dict(d - 1), self.pick(["", "(reverse=true)", '(by="value")']))
        if c == 8:
            return "(words|sort%s|unique|list)" % self.pick(["", "(reverse=true)", "(case_sensitive=true)"])
        return "(range(%s)|list)" % self.pick(["3", "1, 5", "10, 0, -3", "0"])

    def dict(self, d):
        if d <= 0 or self.r.random() < 0.6:
            return self.pick(DICT_VARS)
        items = ", ".join("%s: %s" % (self.pick(STR_LITS[:6]), self.any(d - 1)) for _ in range(self.r.randrange(3)))
        return "{%s}" % items

    def bool(self, d):
        if d <= 0 or self.r.random() < 0.3:
            return self.pick(BOOL_VARS)
        c = self.r.randrange(9)
        if c == 0:
            return "(%s %s %s)" % (self.num(d - 1), self.pick(["==", "!=", "<", "<=", ">", ">="]), self.num(d - 1))
        if c == 1:
            return "(%s %s %s)" % (self.str(d - 1), self.pick(["==", "<", ">=", "!="]), self.str(d - 1))
        if c == 2:
            return "(%s %s %s)" % (self.any(d - 1), self.pick(["in", "not in"]), self.list(d - 1))
        if c == 3:
            return "(%s %s %s)" % (self.any(d - 1), self.pick(["and", "or"]), self.any(d - 1))
        if c == 4:
            return "(not %s)" % self.any(d - 1)
        if c == 5:
            return "(%s is %s)" % (self.any(d - 1), self.pick(TESTS))
        if c == 6:
            return "(%s is %s)" % (self.num(d - 1), self.pick(NUM_TESTS))
        if c == 7:
            return "(%s < %s < %s)" % (self.num(d - 1), self.num(d - 1), self.num(d - 1))
        return "(%s.%s)" % (self.str(d - 1), self.pick(STR_PREDICATES))

    def any(self, d):
        return self.r.choice([self.num, self.str, self.list, self.dict, self.bool])(d)


    # ---- statement-level templates ----
    def text(self):
        return self.pick(["", " ", "  ", "\n", " \n  ", "\n\n", "x", " y ", "\t", "a\n b", "\n  \n"])

    def tag(self, body, kind="%"):
        left = self.pick(["", "", "-", "+"]) if kind == "%" else self.pick(["", "", "-"])
        right = self.pick(["", "", "-"])
        close = {"%": "%}", "{": "}}", "#": "#}"}[kind]
        return "{" + kind + left + " " + body + " " + right + close

    def block(self, d):
        """A random sequence of text, prints, comments, ifs, fors, sets and macros."""
        parts = []
        for _ in range(self.r.randint(1, 4)):
            parts.append(self.text())
            c = self.r.randrange(8)
            if c == 0 or d <= 0:
                parts.append(self.tag(self.any(1), "{"))
            elif c == 1:
                parts.append(self.tag("comment", "#"))
            elif c == 2:
                parts.append(self.tag("if " + self.bool(1)) + self.block(d - 1) +
                             (self.tag("elif " + self.bool(1)) + self.block(d - 1) if self.r.random() < 0.3 else "") +
                             (self.tag("else") + self.block(d - 1) if self.r.random() < 0.5 else "") + self.tag("endif"))
            elif c == 3:
                parts.append(self.tag("for item in " + self.list(1)) + self.text() + self.tag("loop.index ~ ':' ~ item", "{") +
                             self.block(d - 1) + self.tag("endfor"))
            elif c == 4:
                parts.append(self.tag("set v%d = %s" % (d, self.any(1))) + self.text() + self.tag("v%d" % d, "{"))
            elif c == 5:
                parts.append(self.tag("macro mm(a, b=%s)" % self.num(0)) + self.text() + self.tag("a ~ '/' ~ b", "{") +
                             self.text() + self.tag("endmacro") + self.text() +
                             self.tag("mm(%s)" % self.str(1), "{") + self.tag("mm(1, b=%s)" % self.str(0), "{"))
            elif c == 6:
                parts.append(self.tag("filter " + self.pick(["upper", "trim", "indent(2)", "replace('a', 'b')", "center(30)"])) +
                             self.block(d - 1) + self.tag("endfilter"))
            else:
                parts.append(self.tag("set ns = namespace(k=0)") + self.tag("for i in range(3)") +
                             self.tag("set ns.k = ns.k + i") + self.text() + self.tag("endfor") + self.tag("ns.k", "{"))
        parts.append(self.text())
        return "".join(parts)


def generate(count, seed=1234):
    g = Gen(seed)
    out = []
    for i in range(count):
        kind = i % 8
        if kind >= 6:
            out.append(g.block(2))
            continue
        if kind == 0:
            src = "{{ %s }}" % g.num(3)
        elif kind == 1:
            src = "{{ %s }}" % g.str(3)
        elif kind == 2:
            src = "{{ %s }}" % g.list(3)
        elif kind == 3:
            src = "{{ %s }}" % g.bool(3)
        elif kind == 4:
            src = "{{ %s }}|{{ %s }}" % (g.any(3), g.any(2))
        else:
            src = ("{%% for x in %s %%}{{ loop.index }}={{ x }}{%% if not loop.last %%},{%% endif %%}"
                   "{%% else %%}none{%% endfor %%}" % g.list(2))
        out.append(src)
    return out
