#!/usr/bin/env bash
# Creates the project's virtual environment for today's Python stack -- torch 2.x + torchvision,
# numpy 2.x, apache-tvm (the newest release, LLVM inside), safetensors, transformers, pytest --
# with the exact pins of scripts/requirements-venv.txt, and prints its interpreter's path (the
# value for CMake's MSC_VENV_PYTHON). Debian's /usr/bin/python3 (torch 1.13, numpy 1.24) stays
# the other supported stack (MSC_PYTHON).
#
# Idempotent: a venv whose stamp matches the pins file is reused as it is (well under a second);
# when the pins change, it is rebuilt from scratch. Both the venv and pip's download cache live
# outside the source tree, so a fresh clone on the same machine reuses them:
#   MSC_VENV       the venv folder   (default: $MSC_CACHE/venv)
#   MSC_CACHE      the cache folder  (default: ${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen)
# Needs Debian's python3-venv (scripts/install_deps.sh installs it) and PyPI. The torch wheel
# from PyPI is the CUDA build (~4 GB with its nvidia-* dependencies, ~7 GB installed); it runs on
# a CPU-only machine.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PINS="$ROOT/scripts/requirements-venv.txt"
CACHE="${MSC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen}"
VENV="${MSC_VENV:-$CACHE/venv}"
BASE=/usr/bin/python3
stamp="$(cat "$PINS" | sha256sum | cut -d' ' -f1) $("$BASE" -c 'import sys; print(sys.version.split()[0])')"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.msc-stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$VENV/bin/python"
  exit 0
fi
echo "install_venv: creating $VENV from $PINS (downloads cached in $CACHE/pip)" >&2
mkdir -p "$CACHE"
rm -rf "$VENV"
"$BASE" -m venv "$VENV" >&2
# --no-deps: the pins are the whole closure (pip freeze); nothing else may be resolved in.
PIP_CACHE_DIR="$CACHE/pip" "$VENV/bin/pip" install --no-input --no-deps -q -r "$PINS" >&2
"$VENV/bin/pip" check >&2
echo "$stamp" >"$VENV/.msc-stamp"
echo "$VENV/bin/python"
