#!/bin/bash
# Export an example, check it with the reference interpreter, generate a project with
# msc-codegen and run the project's own golden test.
#
#   examples/run_example.sh <example> [<msc-codegen binary>] [<out root>]
#
#   <example>      conv_relu | resnet18 | fashion_mnist_mlp | text_transformer | mobilenet_v2 |
#                  gpt2_block | hostile, or a larger model of examples/models/export.py:
#                  vit_b_16 | swin_t | convnext_tiny | efficientnet_b0 | shufflenet_v2_x1_0 | squeezenet1_0
#   <binary>       path to msc-codegen; without it only the export side runs
#   <out root>     default <repo>/out/examples (ignored by git); the example goes to <root>/<example>
#
# Environment:
#   MSC_BACKENDS          backends to generate, space separated (default "torch")
#   MSC_PRECISION         generate --precision (default fp32); another value (fp16) generates into
#                         <root>/<example>/<backend>_<precision>
#   MSC_PROJECT_TEST_CMD  command run inside the generated project to test it; by default the
#                         first of ./run_test.sh, ./test.sh, `python3 test_model.py`,
#                         `python3 test.py`, `python3 -m pytest -q` that applies (hook for the
#                         generator's project layout)
#
#   MSC_PYTHON            the Python that exports and runs the project's test (default
#                         /usr/bin/python3): Debian's torch/numpy plus the safetensors package, as
#                         `bash scripts/install_venv.sh debian` prints; never the first on PATH.
set -euo pipefail

PY="${MSC_PYTHON:-/usr/bin/python3}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
EXAMPLE="${1:?usage: run_example.sh <example> [<msc-codegen binary>] [<out root>]}"
BIN="${2:-}"
ROOT="${3:-$REPO/out/examples}"
OUT="$ROOT/$EXAMPLE"
EXPORT="$OUT/export"
export PYTHONPATH="$REPO/python${PYTHONPATH:+:$PYTHONPATH}"

echo "== export $EXAMPLE -> $EXPORT"
case "$EXAMPLE" in
  hostile) "$PY" -m msc_export hostile --out "$EXPORT" ;;
  conv_relu|resnet18|fashion_mnist_mlp|text_transformer|mobilenet_v2|gpt2_block)
    "$PY" "$HERE/$EXAMPLE/export.py" --out "$EXPORT" ;;
  vit_b_16|swin_t|convnext_tiny|efficientnet_b0|shufflenet_v2_x1_0|squeezenet1_0)
    "$PY" "$HERE/models/export.py" --model "$EXAMPLE" --out "$EXPORT" ;;
  *) echo "error: unknown example '$EXAMPLE' (conv_relu, resnet18, fashion_mnist_mlp, text_transformer," \
          "mobilenet_v2, gpt2_block, hostile, vit_b_16, swin_t, convnext_tiny, efficientnet_b0," \
          "shufflenet_v2_x1_0, squeezenet1_0)" >&2; exit 2 ;;
esac

echo "== reference interpreter vs golden"
"$PY" -m msc_export validate "$EXPORT/graph.json" --weights "$EXPORT/weights.safetensors" --golden "$EXPORT/golden"

if [ -z "$BIN" ]; then
  echo "== no msc-codegen binary given: export side done ($EXPORT)"
  exit 0
fi

run_project_test() {
  local dir="$1"
  (
    cd "$dir"
    if [ -n "${MSC_PROJECT_TEST_CMD:-}" ]; then bash -c "$MSC_PROJECT_TEST_CMD"
    elif [ -x run_test.sh ] || [ -f run_test.sh ]; then bash ./run_test.sh
    elif [ -f test.sh ]; then bash ./test.sh
    elif [ -f test_model.py ]; then "$PY" test_model.py
    elif [ -f test.py ]; then "$PY" test.py
    elif ls test_*.py >/dev/null 2>&1; then "$PY" -m pytest -q
    else
      echo "error: no test entry point in $dir; set MSC_PROJECT_TEST_CMD" >&2
      exit 1
    fi
  )
}

for backend in ${MSC_BACKENDS:-torch}; do
  PRECISION="${MSC_PRECISION:-fp32}"
  PROJECT="$OUT/$backend"
  [ "$PRECISION" = fp32 ] || PROJECT="${PROJECT}_$PRECISION"
  echo "== $BIN generate --backend $backend --precision $PRECISION -> $PROJECT"
  "$BIN" generate --graph "$EXPORT/graph.json" --weights "$EXPORT/weights.safetensors" \
    --golden "$EXPORT/golden" --backend "$backend" --precision "$PRECISION" --out "$PROJECT" --force
  echo "== test the generated $backend project"
  run_project_test "$PROJECT"
done
echo "== $EXAMPLE: ok"
