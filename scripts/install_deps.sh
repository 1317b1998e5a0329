#!/usr/bin/env bash
# Installs the Debian 12 packages msc-codegen needs to build, test and run its examples.
# Idempotent: does nothing when everything is installed. Needs root (or sudo).
set -euo pipefail
PACKAGES=(
  # build (ccache: scripts/test.sh caches every compile, the generated Vulkan projects' too)
  build-essential cmake pkg-config clang-format ccache
  # sanitizer build + libFuzzer harnesses (scripts/test.sh build-asan, scripts/fuzz.sh)
  clang libclang-rt-14-dev
  # `msc-codegen visualize G.json -o G.svg` runs Graphviz's dot
  graphviz
  # C++ libraries
  nlohmann-json3-dev libyaml-cpp-dev libboost-filesystem-dev doctest-dev libcli11-dev
  # ONNX frontend (protobuf classes, checker, shape inference) and ONNX's backend test data
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx
  # the pinned ONNX release built from source (scripts/install_onnx.sh): protoc and curl
  protobuf-compiler curl
  # Python side (exporter, generated torch/relax projects, differential tests)
  python3 python3-numpy python3-torch python3-torchvision python3-jinja2 python3-pytest
  # the project's virtual environment for today's stack (scripts/install_venv.sh)
  python3-venv
  libopenblas0-openmp dataset-fashion-mnist
  # Vulkan backend: loader + headers, lavapipe CPU driver, validation layers, GLSL compiler
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslc vulkan-tools
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
