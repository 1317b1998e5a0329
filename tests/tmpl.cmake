# Template engine (generator/tmpl): render binary for script-driven tests, differential test
# against Python's jinja2, the check that the golden expected.txt files are up to date, a
# mutation fuzzer (no crash, no hang) and a differential test of the JSON data reader against
# Python's json.
# The engine is its own library (msc_tmpl, generator/tmpl/CMakeLists.txt) that depends on nothing
# but nlohmann_json, so the render driver links it alone and, outside sanitizer builds, statically:
# its start-up (part of the whole-process time bench.py compares with Python's jinja2) then has no
# dynamic linking.
add_executable(msc_tmpl_render ${CMAKE_CURRENT_SOURCE_DIR}/tmpl/render_main.cc)
target_link_libraries(msc_tmpl_render PRIVATE msc_tmpl)
if(NOT MSC_SANITIZE)
  target_link_options(msc_tmpl_render PRIVATE -static)
endif()

add_test(NAME tmpl_differential
         COMMAND ${MSC_PYTHON} differential.py $<TARGET_FILE:msc_tmpl_render>
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
add_test(NAME tmpl_expected_check
         COMMAND ${MSC_PYTHON} make_expected.py --check
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
add_test(NAME tmpl_fuzz
         COMMAND ${MSC_PYTHON} fuzz.py $<TARGET_FILE:msc_tmpl_render> --count 300
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
add_test(NAME tmpl_json_data
         COMMAND ${MSC_PYTHON} json_data.py $<TARGET_FILE:msc_tmpl_render> --count 150
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
# The engine is a library of its own (generator/tmpl/README.md): no file in generator/tmpl may
# include anything of msc-codegen outside that folder (standard and nlohmann headers only).
add_test(NAME tmpl_self_contained
         COMMAND sh -c "! grep -n '#include \"' *.h *.cc | grep -v '#include \"generator/tmpl/'"
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/generator/tmpl)
