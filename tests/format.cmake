# Style: every C++ file follows .clang-format (clang-format from Debian, installed by scripts/install_deps.sh).
find_program(CLANG_FORMAT clang-format REQUIRED)
file(GLOB_RECURSE MSC_FORMAT_FILES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/generator/*.cc ${CMAKE_SOURCE_DIR}/generator/*.h
  ${CMAKE_SOURCE_DIR}/runtime/vulkan/*.cc ${CMAKE_SOURCE_DIR}/runtime/vulkan/*.h
  ${CMAKE_SOURCE_DIR}/tests/unit/*.cc ${CMAKE_SOURCE_DIR}/tests/vulkan/*.cc ${CMAKE_SOURCE_DIR}/tests/vulkan/*.h)
add_test(NAME format COMMAND ${CLANG_FORMAT} --dry-run -Werror ${MSC_FORMAT_FILES})
