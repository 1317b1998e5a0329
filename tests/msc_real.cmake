# Graphs written by TVM v0.20's MSC itself (tests/msc_real/cases, made by scripts/msc_real_cases.py):
# torch per case, vulkan merged into one build under the validation layer.
add_test(NAME msc_real COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/msc_real)
set_tests_properties(msc_real PROPERTIES TIMEOUT 1500 ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_VK_VALIDATION=1")
