# Today's stack (MSC_VENV_PYTHON: scripts/install_venv.sh's venv with torch 2.x, numpy 2.x and the
# newest apache-tvm wheel). `venv` checks that the interpreter is there and holds the pinned
# versions; without MSC_VENV_PYTHON it fails, naming the script that makes it, and the tests below
# are not registered.
if(NOT MSC_VENV_PYTHON)
  add_test(NAME venv COMMAND ${CMAKE_COMMAND} -E echo
           "MSC_VENV_PYTHON is not set: run scripts/install_venv.sh and configure with -DMSC_VENV_PYTHON=<its output> (scripts/test.sh does both)")
  set_tests_properties(venv PROPERTIES WILL_FAIL TRUE)
  return()
endif()
add_test(NAME venv COMMAND ${MSC_VENV_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/venv/check_venv.py
                           ${CMAKE_SOURCE_DIR}/scripts/requirements-venv.txt)
# The generated relax projects (per-op cases, MSC-written graphs, examples, hostile names) built
# with relax.build(..., "llvm") and run against their golden data on the newest apache-tvm wheel.
add_test(NAME relax_tvm_newest
         COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/relax/test_real_tvm.py)
set_tests_properties(relax_tvm_newest PROPERTIES
  TIMEOUT 3000
  ENVIRONMENT "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_TVM_PYTHON=${MSC_VENV_PYTHON};MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;MSC_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
# The fx exporter's own tests (tests/python, also run on Debian's torch 1.13 as python_exporter)
# on torch 2.x.
add_test(NAME python_exporter_venv
         COMMAND ${MSC_VENV_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python_exporter_venv PROPERTIES TIMEOUT 900
  ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONDONTWRITEBYTECODE=1")
# The torch.export frontend (python/msc_export/export_importer.py): needs torch 2.x.
add_test(NAME export_path
         COMMAND ${MSC_VENV_PYTHON} -m pytest -q -p no:cacheprovider -p no:logging ${CMAKE_CURRENT_SOURCE_DIR}/export)
set_tests_properties(export_path PROPERTIES TIMEOUT 900
  ENVIRONMENT "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;PYTHONDONTWRITEBYTECODE=1")
# Every per-op case's torch and numpy project on torch 2.x / numpy 2.x.
add_test(NAME projects_venv
         COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/venv/test_todays_stack.py)
set_tests_properties(projects_venv PROPERTIES TIMEOUT 1500
  ENVIRONMENT "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_VENV_PYTHON=${MSC_VENV_PYTHON};PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;PYTHONDONTWRITEBYTECODE=1")
