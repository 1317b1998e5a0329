#!/usr/bin/env bash
# Builds the pinned ONNX release's C++ library (checker, shape inference with data propagation,
# version converter, the onnx-ml protobuf classes) from its source distribution on PyPI and
# installs it into a prefix outside the clone, which it prints (CMake: -DONNX_DIR=<prefix>/lib/cmake/ONNX for
# msc-codegen's ONNX importer; scripts/test.sh passes it). Without it msc-codegen builds against
# Debian's libonnx-dev (ONNX 1.12).
#
#   ONNX 1.23.2 (PyPI sdist onnx-1.23.2.tar.gz, sha256 pinned below): opsets 1-28 of the default
#   domain, IR versions up to 14 (onnx/defs/schema.h, onnx/onnx.in.proto). Built static with -fPIC
#   against Debian's protobuf 3.21 (libprotobuf-dev, protobuf-compiler); ONNX_BUILD_PYTHON=OFF.
#   Its CMakeLists needs CMake >= 3.26 (Debian 12 has 3.25): the pinned `cmake` wheel of
#   scripts/requirements-build.txt, in a venv beside the others (scripts/install_venv.sh build).
#
# Idempotent: a prefix whose stamp matches (version + sha256 + this script's hash) is reused as it
# is; otherwise it is rebuilt (~6 min on 2 cores; compiles go through ccache when
# CMAKE_CXX_COMPILER_LAUNCHER is set, as scripts/test.sh does).
#   MSC_CACHE   the cache folder (default: ${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION=1.23.2
SHA256=008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8
INDEX=https://pypi.org/simple/onnx/
CACHE="${MSC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msc-codegen}"
PREFIX="$CACHE/onnx-$VERSION"
stamp="$VERSION $SHA256 $(sha256sum "$0" | cut -d' ' -f1)"
if [ -f "$PREFIX/lib/cmake/ONNX/ONNXConfig.cmake" ] && [ "$(cat "$PREFIX/.msc-stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "$PREFIX"
  exit 0
fi
echo "install_onnx: building ONNX $VERSION into $PREFIX" >&2
CMAKE_BIN="$(dirname "$(bash "$ROOT/scripts/install_venv.sh" build)")/cmake"
WORK="$CACHE/onnx-build-$VERSION"
rm -rf "$WORK" "$PREFIX"
mkdir -p "$WORK"
tarball="$WORK/onnx-$VERSION.tar.gz"
# The sdist's URL from the package index (the simple API lists every file with its sha256).
url="$(curl -fsSL --retry 3 "$INDEX" | grep -o "href=\"[^\"]*/onnx-$VERSION\\.tar\\.gz[^\"]*\"" | head -1 |
  sed -e 's/^href="//' -e 's/#.*//' -e 's/"$//')"
[ -n "$url" ] || { echo "error: install_onnx: onnx-$VERSION.tar.gz not listed at $INDEX" >&2; exit 1; }
curl -fsSL --retry 3 -o "$tarball" "$url"
echo "$SHA256  $tarball" | sha256sum -c --quiet - ||
  { echo "error: install_onnx: $url does not have the pinned sha256 $SHA256" >&2; exit 1; }
tar -xzf "$tarball" -C "$WORK"
"$CMAKE_BIN" -S "$WORK/onnx-$VERSION" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DONNX_ML=ON \
  -DONNX_BUILD_PYTHON=OFF -DONNX_BUILD_TESTS=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DCMAKE_POSITION_INDEPENDENT_CODE=ON >&2
"$CMAKE_BIN" --build "$WORK/build" -j"$(nproc)" >&2
"$CMAKE_BIN" --install "$WORK/build" --prefix "$PREFIX" >&2
rm -rf "$WORK"
echo "$stamp" >"$PREFIX/.msc-stamp"
echo "$PREFIX"
