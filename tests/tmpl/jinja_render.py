#!/usr/bin/python3
"""jinja_render.py TEMPLATE_PATH DATA_JSON: Python's jinja2 counterpart of msc_tmpl_render.

Renders TEMPLATE_PATH (a jinja2.FileSystemLoader rooted at the template's folder,
undefined=StrictUndefined, default settings) with the JSON data file and writes the UTF-8 result
to stdout. bench.py times this whole process against the whole msc_tmpl_render process.
"""
import json
import os
import sys

import jinja2


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: jinja_render.py TEMPLATE_PATH DATA_JSON\n")
        return 2
    path, data_path = sys.argv[1], sys.argv[2]
    with open(data_path, encoding="utf-8") as fh:
        data = json.load(fh)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.dirname(path) or "."),
                             undefined=jinja2.StrictUndefined)
    out = env.get_template(os.path.basename(path)).render(data)
    sys.stdout.buffer.write(out.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
