# MSC_PYTHON is the Debian tier: Debian's torch 1.13 / numpy 1.24 plus the pinned safetensors
# package the generated Python projects read weights with (scripts/install_venv.sh debian).
add_test(NAME python_debian COMMAND ${MSC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/venv/check_venv.py
                                    ${CMAKE_SOURCE_DIR}/scripts/requirements-debian.txt --debian)
# Python exporter tests (python/msc_export): pytest with Debian's /usr/bin/python3 (MSC_PYTHON).
# -p no:cacheprovider keeps pytest from writing .pytest_cache into the source tree.
add_test(NAME python_exporter
         COMMAND ${MSC_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/python)
set_tests_properties(python_exporter PROPERTIES
  ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/python;MSC_SHARED_REFERENCE_DIR=${CMAKE_SOURCE_DIR}/../shared/reference"
  TIMEOUT 600)
