# Per-op numerical tests: every optype's synthetic graph (tests/ops/cases/cases.py, seeded, with
# PyTorch as the reference) generated for every backend the suite finds (tests/common/backends.py):
# one project per case, or all static cases merged into one build (vulkan: 1e-3, under the
# validation layer).
add_test(NAME ops COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/ops)
set_tests_properties(ops PROPERTIES TIMEOUT 1500 ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python")
