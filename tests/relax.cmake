# relax backend (templates/relax), checked without TVM: static checks of the generated code
# against relax_ops.json, struct-info checks against the graphs, snapshots, and the generated
# test_model.py run on a fake TVM (tests/relax/fake_tvm). MSC_UPDATE_SNAPSHOTS=1 rewrites snapshots.
add_test(NAME relax_static
         COMMAND ${MSC_PYTHON} -m pytest -q -rs -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/relax)
set_tests_properties(relax_static PROPERTIES
  TIMEOUT 3600
  ENVIRONMENT "MSC_CODEGEN=$<TARGET_FILE:msc-codegen>;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference;MSC_SOURCE_DIR=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
