# Graphs written by TVM v0.20's MSC itself (tests/msc_real/cases, made by scripts/msc_real_cases.py)
# on every backend the suite finds: one project per case, or all cases merged into one build.
add_test(NAME msc_real COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/msc_real)
set_tests_properties(msc_real PROPERTIES TIMEOUT 1500 ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference")
