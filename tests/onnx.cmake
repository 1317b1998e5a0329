# ONNX frontend: the import command and real models exported by torch.onnx (all three backends),
# and ONNX's own backend test suite (Debian libonnx-testdata) through tests/onnx/conformance.py:
# torch + relax (static checks) over all 1,072 tests, vulkan over a fixed subset merged into a few
# builds; both fail on a crash or on a test that passed in the committed tests/onnx/expected.json.
add_test(NAME onnx COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/onnx/test_onnx.py)
add_test(NAME onnx_conformance
         COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/conformance.py --backends torch,relax
                 --expect ${CMAKE_CURRENT_SOURCE_DIR}/onnx/expected.json)
add_test(NAME onnx_conformance_vulkan
         COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/conformance.py --backends vulkan
                 --list ${CMAKE_CURRENT_SOURCE_DIR}/onnx/vulkan_subset.txt
                 --expect ${CMAKE_CURRENT_SOURCE_DIR}/onnx/expected.json)
set_tests_properties(onnx onnx_conformance onnx_conformance_vulkan PROPERTIES TIMEOUT 2400 ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_VK_VALIDATION=1")
# The real models' relax projects also run on the newest apache-tvm (the project's venv).
if(MSC_VENV_PYTHON)
  set_property(TEST onnx APPEND PROPERTY ENVIRONMENT "MSC_TVM_PYTHON=${MSC_VENV_PYTHON}")
endif()
