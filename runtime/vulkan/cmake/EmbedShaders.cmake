# msc_vk_embed_shaders(<target> SHADER_DIR <dir> [STEMS <stem>...] [GLSLC_FLAGS <flag>...])
#
# Compiles <dir>/<stem>.comp (every *.comp below <dir> when STEMS is omitted; shaders/common/
# holds includes, not shaders) to SPIR-V with glslc at build time and adds a generated
# msc_vk_shaders_<target>.cc to <target>. That file defines msc_vk::kEmbeddedShaders: one
# {stem, words, word_count} entry per shader, stem = path below <dir> without ".comp"
# ("nn/conv2d"). <target> must link msc_vk_runtime (for shader_registry.h).
# A stem without a .comp file is a configure-time error naming the expected path.
include_guard(GLOBAL)


function(msc_vk_embed_shaders target)
  cmake_parse_arguments(ARG "" "SHADER_DIR" "STEMS;GLSLC_FLAGS" ${ARGN})
  if(NOT ARG_SHADER_DIR)
    message(FATAL_ERROR "msc_vk_embed_shaders(${target}): SHADER_DIR is required")
  endif()
  find_program(MSC_VK_GLSLC NAMES glslc HINTS ${Vulkan_GLSLC_EXECUTABLE})
  if(NOT MSC_VK_GLSLC)
    message(FATAL_ERROR "msc_vk_embed_shaders: glslc not found (Debian: apt install glslc)")
  endif()
  set(stems ${ARG_STEMS})
  if(NOT stems)
    file(GLOB_RECURSE comps RELATIVE ${ARG_SHADER_DIR} CONFIGURE_DEPENDS ${ARG_SHADER_DIR}/*.comp)
    foreach(c ${comps})
      string(REGEX REPLACE "\\.comp$" "" s ${c})
      list(APPEND stems ${s})
    endforeach()
  endif()
  list(REMOVE_DUPLICATES stems)
  list(SORT stems)

  set(embed_script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_spirv.cmake)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/msc_vk_spv/${target})
  set(spvs "")
  foreach(stem ${stems})
    set(src ${ARG_SHADER_DIR}/${stem}.comp)
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "msc_vk_embed_shaders(${target}): no shader for '${stem}': expected ${src}")
    endif()
    set(spv ${out_dir}/${stem}.spv)
    get_filename_component(spv_dir ${spv} DIRECTORY)
    file(MAKE_DIRECTORY ${spv_dir})
    add_custom_command(
      OUTPUT ${spv}
      COMMAND ${MSC_VK_GLSLC} --target-env=vulkan1.0 -O -I ${ARG_SHADER_DIR} ${ARG_GLSLC_FLAGS}
              -MD -MF ${spv}.d -o ${spv} ${src}
      DEPENDS ${src}
      DEPFILE ${spv}.d
      COMMENT "glslc ${stem}.comp"
      VERBATIM)
    list(APPEND spvs ${spv})
  endforeach()

  set(gen ${CMAKE_CURRENT_BINARY_DIR}/msc_vk_shaders_${target}.cc)
  string(REPLACE ";" "," stems_arg "${stems}")
  add_custom_command(
    OUTPUT ${gen}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${gen} -DSPV_DIR=${out_dir} "-DSTEMS=${stems_arg}" -P ${embed_script}
    DEPENDS ${spvs} ${embed_script}
    COMMENT "Embedding ${target} shaders"
    VERBATIM)
  target_sources(${target} PRIVATE ${gen})
endfunction()
