# CLI behaviour end to end: generate/inspect/validate/render/ops, errors, atomic output, determinism,
# and the generated torch projects run against the real MSC graphs' golden data.
add_test(NAME cli COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/cli
         --ignore=${CMAKE_CURRENT_SOURCE_DIR}/cli/test_packaging.py)
set_tests_properties(cli PROPERTIES ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python")
# The Debian package: cpack -G DEB on this build tree, dpkg -x into a temporary root, and the
# unpacked binary generates a torch project that passes its golden test.
add_test(NAME packaging COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider
         ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_packaging.py)
set_tests_properties(packaging PROPERTIES ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_BUILD_DIR=${CMAKE_BINARY_DIR};MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python")
