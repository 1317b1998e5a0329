# CLI behaviour end to end: generate/inspect/validate/render/ops, errors, atomic output, determinism,
# and the generated torch projects run against the real MSC graphs' golden data.
add_test(NAME cli COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/cli)
set_tests_properties(cli PROPERTIES ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python")
