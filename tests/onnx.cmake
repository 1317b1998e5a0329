# ONNX frontend: the import command and real models exported by torch.onnx (every backend),
# and ONNX's own backend test suite (Debian libonnx-testdata) through tests/onnx/conformance.py on
# every backend the suite finds: those with one project per test (--merge no) over all 1,072
# tests, those whose projects are merged (--merge yes: a build costs minutes) over a fixed subset
# merged into a few builds; both fail on a crash or on a test that passed in the committed
# tests/onnx/expected.json.
add_test(NAME onnx COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/onnx/test_onnx.py)
add_test(NAME onnx_conformance
         COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/conformance.py --merge no
                 --expect ${CMAKE_CURRENT_SOURCE_DIR}/onnx/expected.json)
add_test(NAME onnx_conformance_merged
         COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/conformance.py --merge yes
                 --list ${CMAKE_CURRENT_SOURCE_DIR}/onnx/merged_subset.txt
                 --expect ${CMAKE_CURRENT_SOURCE_DIR}/onnx/expected.json)
set_tests_properties(onnx onnx_conformance onnx_conformance_merged PROPERTIES TIMEOUT 2400 ENVIRONMENT
  "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_VK_VALIDATION=1")
# The real models' relax projects also run on the newest apache-tvm (the project's venv).
if(MSC_VENV_PYTHON)
  set_property(TEST onnx APPEND PROPERTY ENVIRONMENT "MSC_TVM_PYTHON=${MSC_VENV_PYTHON}")
  # The backend suite of the ONNX release the importer is built on (tests/onnx/testdata.py, made
  # with the venv's onnx once and cached): the one-project backends over every test, the merged
  # ones over the tests tests/onnx/scope-onnx-1.23.2.json marks in scope; regressions against
  # tests/onnx/expected-onnx-1.23.2.json fail them.
  set(MSC_ONNX_SUITE --data-python ${MSC_VENV_PYTHON} --scope ${CMAKE_CURRENT_SOURCE_DIR}/onnx/scope-onnx-1.23.2.json
      --expect ${CMAKE_CURRENT_SOURCE_DIR}/onnx/expected-onnx-1.23.2.json)
  add_test(NAME onnx_conformance_release
           COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/conformance.py --merge no ${MSC_ONNX_SUITE})
  add_test(NAME onnx_conformance_release_merged
           COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/onnx/conformance.py --merge yes
                   --list ${CMAKE_CURRENT_SOURCE_DIR}/onnx/merged_subset-onnx-1.23.2.txt ${MSC_ONNX_SUITE})
  # Today's exporters (torch.onnx.export, dynamo=False / True) on every backend, ONNX Runtime too.
  add_test(NAME onnx_exporters
           COMMAND ${MSC_VENV_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/onnx/test_onnx_exporters.py)
  set_tests_properties(onnx_conformance_release onnx_conformance_release_merged onnx_exporters PROPERTIES
    TIMEOUT 2400 ENVIRONMENT
    "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_VK_VALIDATION=1")
  set_property(TEST onnx_exporters APPEND PROPERTY ENVIRONMENT "MSC_TVM_PYTHON=${MSC_VENV_PYTHON}")
endif()
