# Generated-code loaders against a corpus of corrupt weights and golden files (tests/loaders):
# one small model generated for every Python-harness backend the suite finds (tests/common/backends.py) and
# vulkan (built once under ASan + UBSan in loaders/ of the build folder, then incrementally); each
# project's golden test must reject every corrupt file with a one-line error naming the file and
# tensor, exit status 2, and no traceback, signal or sanitizer report.
find_package(Vulkan QUIET)
find_program(MSC_VK_GLSLC NAMES glslc)
if(Vulkan_FOUND AND MSC_VK_GLSLC)
  set(MSC_LOADERS_VULKAN 1)
else()
  set(MSC_LOADERS_VULKAN 0)
endif()
add_test(NAME loaders
         COMMAND ${MSC_PYTHON} -m pytest -q -rs -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/loaders)
set_tests_properties(loaders PROPERTIES
  TIMEOUT 1200
  ENVIRONMENT "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_LOADERS_WORK=${CMAKE_BINARY_DIR}/loaders;MSC_LOADERS_VULKAN=${MSC_LOADERS_VULKAN};MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
