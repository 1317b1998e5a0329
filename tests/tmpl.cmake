# Template engine (generator/tmpl): render binary for script-driven tests, differential test
# against Python's jinja2, the check that the golden expected.txt files are up to date, and a
# mutation fuzzer (no crash, no hang).
add_executable(msc_tmpl_render ${CMAKE_CURRENT_SOURCE_DIR}/tmpl/render_main.cc)
target_link_libraries(msc_tmpl_render PRIVATE msc_codegen_lib)

add_test(NAME tmpl_differential
         COMMAND ${MSC_PYTHON} differential.py $<TARGET_FILE:msc_tmpl_render>
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
add_test(NAME tmpl_expected_check
         COMMAND ${MSC_PYTHON} make_expected.py --check
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
add_test(NAME tmpl_fuzz
         COMMAND ${MSC_PYTHON} fuzz.py $<TARGET_FILE:msc_tmpl_render> --count 300
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/tmpl)
