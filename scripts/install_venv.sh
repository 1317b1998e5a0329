#!/usr/bin/env bash
# Creates one of the project's two Python environments and prints its interpreter's path:
#   bash scripts/install_venv.sh [today]   today's stack -- torch 2.x + torchvision, numpy 2.x,
#       apache-tvm (the newest release, LLVM inside), safetensors, transformers, pytest -- with the
#       exact pins of scripts/requirements-venv.txt (CMake's MSC_VENV_PYTHON);
#   bash scripts/install_venv.sh debian    Debian's stack (torch 1.13, numpy 1.24 from apt) seen
#       through --system-site-packages, plus the pins of scripts/requirements-debian.txt (the
#       safetensors package generated Python projects read weights with, which Debian does not
#       package) (CMake's MSC_PYTHON);
#   bash scripts/install_venv.sh build     build tools from PyPI, scripts/requirements-build.txt
#       (the cmake that scripts/install_onnx.sh needs);
#   bash scripts/install_venv.sh peers     the runtimes scripts/bench_peers.py compares against
#       (ncnn + pnnx, IREE compiler + runtime, ONNX Runtime, OpenVINO, onnx; no torch), pinned in
#       scripts/requirements-peers.txt.
#
# Idempotent: a venv whose stamp matches the pins file is reused as it is (well under a second);
# when the pins change, it is rebuilt from scratch. Both the venv and pip's download cache live
# outside the source tree, so a fresh clone on the same machine reuses them:
#   MSC_VENV       the venv folder   (default: $MSC_CACHE/venv, venv-debian or venv-build)
#   MSC_CACHE      the cache folder  (default: ${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen)
# Needs Debian's python3-venv (scripts/install_deps.sh installs it) and PyPI. The torch wheel
# from PyPI is the CUDA build (~4 GB with its nvidia-* dependencies, ~7 GB installed); it runs on
# a CPU-only machine.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${MSC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen}"
case "${1:-today}" in
  today) PINS="$ROOT/scripts/requirements-venv.txt" VENV="${MSC_VENV:-$CACHE/venv}" VENV_FLAGS="" ;;
  debian) PINS="$ROOT/scripts/requirements-debian.txt" VENV="${MSC_VENV:-$CACHE/venv-debian}"
    VENV_FLAGS="--system-site-packages" ;;
  build) PINS="$ROOT/scripts/requirements-build.txt" VENV="${MSC_VENV:-$CACHE/venv-build}" VENV_FLAGS="" ;;
  peers) PINS="$ROOT/scripts/requirements-peers.txt" VENV="${MSC_VENV:-$CACHE/venv-peers}" VENV_FLAGS="" ;;
  *) echo "usage: install_venv.sh [today|debian|build|peers]" >&2; exit 2 ;;
esac
BASE=/usr/bin/python3
stamp="$(cat "$PINS" | sha256sum | cut -d' ' -f1)${VENV_FLAGS:+ $VENV_FLAGS} $("$BASE" -c 'import sys; print(sys.version.split()[0])')"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.msc-stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$VENV/bin/python"
  exit 0
fi
echo "install_venv: creating $VENV from $PINS (downloads cached in $CACHE/pip)" >&2
mkdir -p "$CACHE"
rm -rf "$VENV"
"$BASE" -m venv $VENV_FLAGS "$VENV" >&2
# --no-deps: the pins are the whole closure (pip freeze); nothing else may be resolved in.
PIP_CACHE_DIR="$CACHE/pip" "$VENV/bin/pip" install --no-input --no-deps -q -r "$PINS" >&2
# pip check would also judge Debian's own packages in the debian tier (python3-gi lacks pycairo).
# peers: pnnx's wheel requires torch, which its ONNX path (the only one used) does not need.
if [ -z "$VENV_FLAGS" ]; then
  if [ "${1:-today}" = peers ]; then
    problems="$("$VENV/bin/pip" check 2>&1 | grep -v -e '^pnnx [0-9]* requires torch, which is not installed\.$' -e '^No broken requirements found\.$' || true)"
    [ -z "$problems" ] || { echo "$problems" >&2; exit 1; }
  else
    "$VENV/bin/pip" check >&2
  fi
fi
echo "$stamp" >"$VENV/.msc-stamp"
echo "$VENV/bin/python"
