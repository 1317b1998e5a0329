#!/usr/bin/python3
"""A caching front end for glslc, for the differential test's many Vulkan builds
(tests/difftest/difftest.py configures the generated projects with -DMSC_VK_GLSLC=<this file>).

Called exactly as runtime/vulkan/cmake/EmbedShaders.cmake calls glslc:

    glslc_cache.py [flags...] -I SHADER_DIR [flags...] -MD -MF OUT.spv.d -o OUT.spv SRC.comp

The key is the SHA-256 of the flags (without the output paths), the source and every file under
the -I directories (the shaders' includes); a hit copies the cached SPIR-V to OUT.spv and writes
a depfile naming the source and those files. A miss runs the real glslc (env MSC_GLSLC, default
`glslc` on PATH) and stores its output. Cache: $MSC_GLSLC_CACHE or ~/.cache/msc_glslc.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def main(argv):
    real = os.environ.get("MSC_GLSLC") or shutil.which("glslc")
    if not real:
        sys.exit("glslc_cache.py: glslc not found (set MSC_GLSLC)")
    out = dep = src = None
    includes, key_args = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-o":
            out = argv[i + 1]
            i += 2
            continue
        if a == "-MF":
            dep = argv[i + 1]
            i += 2
            continue
        if a == "-I":
            includes.append(argv[i + 1])
            key_args += [a, argv[i + 1]]
            i += 2
            continue
        if a.startswith("-I") and len(a) > 2:
            includes.append(a[2:])
        if not a.startswith("-") and a.endswith(".comp"):
            src = a
        key_args.append(a)
        i += 1
    if out is None or src is None:  # not a compile we understand: pass through
        return subprocess.call([real] + argv)
    files = [src]
    for inc in includes:
        for root, _, names in os.walk(inc):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".glsl", ".comp", ".h"))]
    # The key names files relative to their -I directory (or the source's own folder), so that
    # projects generated in different folders share entries.
    def rel(path):
        for inc in includes:
            r = os.path.relpath(path, inc)
            if not r.startswith(".."):
                return r
        return os.path.basename(path)
    h = hashlib.sha256()
    h.update(("\0".join(rel(a) if a in includes or a == src else a for a in key_args)).encode())
    for f in [src] + sorted(files[1:]):
        h.update(rel(f).encode() + b"\0")
        with open(f, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    cache = os.environ.get("MSC_GLSLC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "msc_glslc")
    os.makedirs(cache, exist_ok=True)
    entry = os.path.join(cache, h.hexdigest() + ".spv")
    if not os.path.exists(entry):
        rc = subprocess.call([real] + argv)
        if rc != 0:
            return rc
        fd, tmp = tempfile.mkstemp(dir=cache)
        os.close(fd)
        shutil.copyfile(out, tmp)
        os.replace(tmp, entry)  # atomic: concurrent builds may race on the same key
        return 0
    shutil.copyfile(entry, out)
    if dep:
        with open(dep, "w") as f:
            f.write("%s: %s\n" % (out.replace(" ", "\\ "), " ".join(p.replace(" ", "\\ ") for p in files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
