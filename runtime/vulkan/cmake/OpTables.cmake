# msc_vk_op_tables(<target> SHADER_DIR <dir>)
#
# Generates the runtime's host tables of the elementwise ops from the shaders that define them,
# so an op's code, optypes and domain are written once, in GLSL:
#   <dir>/common/unary_ops.glsl   lines "const uint U_X = N;  // msc_vk:unary OPTYPE... DOMAIN"
#                                 -> unary_table.inc rows {"OPTYPE", N, Domain::kDOMAIN},
#   <dir>/common/binary_ops.glsl  lines "const uint B_X = N;  // msc_vk:binary OPTYPE... KIND"
#                                 -> binary_table.inc rows {"OPTYPE", N, Kind::kKIND},
# written at configure time to <build>/msc_vk_generated/ (rewritten only when they change) and
# put on <target>'s private include path (ops_elementwise.cc includes them). A table line that
# does not parse, an unknown domain / kind or an optype listed twice is a configure-time error
# naming the file and line.
include_guard(GLOBAL)

function(_msc_vk_op_table glsl tag words out_var)
  file(STRINGS ${glsl} lines REGEX "^[^/].*// msc_vk:${tag} ")  # not the comments about them
  set(rows "")
  set(seen "")
  foreach(line ${lines})
    if(NOT line MATCHES "^const uint [A-Z0-9_]+ = ([0-9]+)u; +// msc_vk:${tag} ([a-z0-9_. ]+)$")
      message(FATAL_ERROR "${glsl}: bad msc_vk:${tag} line (expected \"const uint NAME = Nu;  "
                          "// msc_vk:${tag} OPTYPE... WORD\"): ${line}")
    endif()
    set(code ${CMAKE_MATCH_1})
    string(REPLACE " " ";" fields "${CMAKE_MATCH_2}")
    list(POP_BACK fields word)
    list(FIND words ${word} at)
    if(at LESS 0 OR NOT fields)
      message(FATAL_ERROR "${glsl}: msc_vk:${tag} line needs optypes and one of ${words}: ${line}")
    endif()
    string(SUBSTRING ${word} 0 1 first)
    string(TOUPPER ${first} first)
    string(SUBSTRING ${word} 1 -1 rest)
    foreach(optype ${fields})
      if(optype IN_LIST seen)
        message(FATAL_ERROR "${glsl}: optype '${optype}' is in two msc_vk:${tag} lines")
      endif()
      list(APPEND seen ${optype})
      string(APPEND rows "    {\"${optype}\", ${code}, @ENUM@::k${first}${rest}},\n")
    endforeach()
  endforeach()
  if(rows STREQUAL "")
    message(FATAL_ERROR "${glsl}: no msc_vk:${tag} lines")
  endif()
  set(${out_var} "${rows}" PARENT_SCOPE)
endfunction()

function(msc_vk_op_tables target)
  cmake_parse_arguments(ARG "" "SHADER_DIR" "" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/msc_vk_generated)
  foreach(spec "unary;Domain;float int bool predicate" "binary;Kind;arith compare logical bitwise")
    list(GET spec 0 tag)
    list(GET spec 1 enum)
    list(GET spec 2 words)
    string(REPLACE " " ";" words "${words}")
    set(glsl ${ARG_SHADER_DIR}/common/${tag}_ops.glsl)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${glsl})
    _msc_vk_op_table(${glsl} ${tag} "${words}" rows)
    string(REPLACE "@ENUM@" ${enum} rows "${rows}")
    file(CONFIGURE OUTPUT ${out_dir}/${tag}_table.inc
         CONTENT "// Generated from shaders/common/${tag}_ops.glsl by cmake/OpTables.cmake.\n${rows}"
         @ONLY)
  endforeach()
  target_include_directories(${target} PRIVATE ${out_dir})
endfunction()
