# Python exporter tests (python/msc_export): pytest with Debian's /usr/bin/python3 (MSC_PYTHON).
# -p no:cacheprovider keeps pytest from writing .pytest_cache into the source tree.
add_test(NAME python_exporter
         COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python_exporter PROPERTIES
  ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference"
  TIMEOUT 600)
