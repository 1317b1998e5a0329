# msc_vk_embed_shaders(<target> SHADER_DIR <dir> [STEMS <stem>...] [GLSLC_FLAGS <flag>...] [F16]
#                      [ACT])
#
# Compiles <dir>/<stem>.comp (every *.comp below <dir> when STEMS is omitted; shaders/common/
# holds includes, not shaders) to SPIR-V with glslc at build time and adds a generated
# msc_vk_shaders_<target>.cc to <target>. That file defines msc_vk::kEmbeddedShaders: one
# {stem, words, word_count} entry per shader, stem = path below <dir> without ".comp"
# ("nn/conv2d"). <target> must link msc_vk_runtime (for shader_registry.h).
# A stem without a .comp file is a configure-time error naming the expected path.
#
# Variants: a .comp containing the line "// msc_vk:variants ext" is compiled twice: as <stem>
# (float32/int32 kernels, needs no optional device feature) and as "<stem>+ext" with
# -DMSC_VK_EXT=1 --target-env=vulkan1.1 (every dtype: 8/16-bit storage and 64-bit integers, see
# shaders/common/dtype.glsl). The runtime picks the +ext stem only for tensors that need it.
# "// msc_vk:variants sg" compiles "<stem>+sg" with -DMSC_VK_SUBGROUP=1 --target-env=vulkan1.1
# (subgroup shuffles; the runtime picks it on devices with DeviceFeatures::subgroup_shuffle_size).
# "// msc_vk:variants act" compiles, with the ACT option only, "<stem>+act" with -DMSC_VK_ACT=1:
# the convolution / GEMM kernel whose epilogue can run a unary op (gelu, silu, sigmoid, ...;
# shaders/common/act.glsl), picked for a dispatch with such an epilogue (ops::Activation::Unary;
# generated projects pass ACT when a node has one). It is a variant, not code in every kernel,
# because lavapipe's pipeline compile time grows with the size of the unspecialized SPIR-V.
# "// msc_vk:variants f16" compiles, with the F16 option only, "<stem>+f16" with -DMSC_VK_F16=1
# --target-env=vulkan1.1: the float kernel writing float16 outputs (16-bit storage;
# shaders/common/util.glsl OUT_T), picked per dispatch for a float16 output (generate --precision
# fp16 projects and float16 graphs pass F16; a float32 model needs none of them).
# Variants combine in the order sg, act, f16 ("<stem>+sg+act+f16" has all three). Several may be
# listed on one line: "// msc_vk:variants ext sg act f16".
#
# Kernels: a .comp with "// msc_vk:kernel <name> [<variant>...]" lines (lower-case names) is one
# SPIR-V module per kernel instead of one module: "<stem>@<name>" compiled with
# -DMSC_VK_KERNEL=MODE_<NAME> (the shader #defines MODE_<NAME> as that kernel's number and uses
# `const uint MODE = MSC_VK_KERNEL;`), with the variants listed on that kernel's line
# ("<stem>@<name>+sg+act"; such a .comp has no msc_vk:variants line). "<stem>" itself is then
# not embedded. It is for shaders that hold several kernels selected by one constant
# (common/conv2d.glsl's eight convolution algorithms): lavapipe's pipeline creation time grows
# with the size of the whole unspecialized module, and glslc -O drops the other kernels' code from
# each one (nn/conv2d's Winograd input transform: 7 KB instead of 400 KB).
#
# Identical modules (ops whose .comp files include the same shader: matmul, nn/dense, msc/linear;
# nn/conv1d@direct and nn/conv2d@direct) are embedded once (embed_spirv.cmake).
include_guard(GLOBAL)


function(msc_vk_embed_shaders target)
  cmake_parse_arguments(ARG "F16;ACT" "SHADER_DIR" "STEMS;GLSLC_FLAGS" ${ARGN})
  if(NOT ARG_SHADER_DIR)
    message(FATAL_ERROR "msc_vk_embed_shaders(${target}): SHADER_DIR is required")
  endif()
  # The GLSL compiler: -DMSC_VK_GLSLC=PATH, else the environment's MSC_VK_GLSLC (e.g. a caching
  # front end with glslc's command line), else glslc found on PATH.
  if(NOT MSC_VK_GLSLC AND DEFINED ENV{MSC_VK_GLSLC})
    set(MSC_VK_GLSLC "$ENV{MSC_VK_GLSLC}" CACHE FILEPATH "GLSL compiler (glslc's command line)")
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
  set(all_variants "")
  foreach(stem ${stems})
    set(src ${ARG_SHADER_DIR}/${stem}.comp)
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "msc_vk_embed_shaders(${target}): no shader for '${stem}': expected ${src}")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})  # variant marker
    # (base, its variant marker) pairs: the shader itself, or one per "// msc_vk:kernel" line.
    file(STRINGS ${src} variant_marker REGEX "^// msc_vk:variants( (ext|sg|act|f16))+$")
    file(STRINGS ${src} kernel_lines REGEX "^// msc_vk:kernel [a-z0-9_]+( (ext|sg|act|f16))*$")
    set(bases "${stem}")
    set(marker_of_ "${variant_marker}")  # marker_of_<kernel name>; the shader itself: no name
    if(kernel_lines)
      if(variant_marker)
        message(FATAL_ERROR "${src}: a shader of kernels lists its variants per kernel "
                            "(// msc_vk:kernel <name> <variant>...), not on a msc_vk:variants line")
      endif()
      set(bases "")
      foreach(line ${kernel_lines})
        string(REGEX MATCH "^// msc_vk:kernel ([a-z0-9_]+)(.*)$" _ "${line}")
        list(APPEND bases "${stem}@${CMAKE_MATCH_1}")
        set(marker_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
      endforeach()
    endif()
    set(variants "")
    foreach(base ${bases})
      set(kernel "")
      if(base MATCHES "@([a-z0-9_]+)$")
        set(kernel "${CMAKE_MATCH_1}")
      endif()
      set(marker "${marker_of_${kernel}}")
      list(APPEND variants "${base}")
      if(marker MATCHES " ext( |$)")
        list(APPEND variants "${base}+ext")
      endif()
      set(float_variants "${base}")  # the float kernels that act and f16 extend
      if(marker MATCHES " sg( |$)")
        list(APPEND float_variants "${base}+sg")
      endif()
      if(ARG_ACT AND marker MATCHES " act( |$)")
        foreach(v ${float_variants})
          list(APPEND float_variants "${v}+act")
        endforeach()
      endif()
      if(ARG_F16 AND marker MATCHES " f16( |$)")
        foreach(v ${float_variants})
          list(APPEND float_variants "${v}+f16")
        endforeach()
      endif()
      list(APPEND variants ${float_variants})
    endforeach()
    list(REMOVE_DUPLICATES variants)
    foreach(variant ${variants})
      set(spv ${out_dir}/${variant}.spv)
      get_filename_component(spv_dir ${spv} DIRECTORY)
      file(MAKE_DIRECTORY ${spv_dir})
      set(variant_flags --target-env=vulkan1.0)
      if(variant MATCHES "\\+(ext|sg|f16)")
        set(variant_flags --target-env=vulkan1.1)
      endif()
      if(variant MATCHES "\\+ext$")
        list(APPEND variant_flags -DMSC_VK_EXT=1)
      endif()
      if(variant MATCHES "\\+sg(\\+|$)")
        list(APPEND variant_flags -DMSC_VK_SUBGROUP=1)
      endif()
      if(variant MATCHES "\\+act(\\+|$)")
        list(APPEND variant_flags -DMSC_VK_ACT=1)
      endif()
      if(variant MATCHES "\\+f16$")
        list(APPEND variant_flags -DMSC_VK_F16=1)
      endif()
      if(variant MATCHES "@([a-z0-9_]+)")
        string(TOUPPER "${CMAKE_MATCH_1}" kernel_upper)
        list(APPEND variant_flags -DMSC_VK_KERNEL=MODE_${kernel_upper})
      endif()
      add_custom_command(
        OUTPUT ${spv}
        COMMAND ${MSC_VK_GLSLC} ${variant_flags} -O -I ${ARG_SHADER_DIR} ${ARG_GLSLC_FLAGS}
                -MD -MF ${spv}.d -o ${spv} ${src}
        DEPENDS ${src}
        DEPFILE ${spv}.d
        COMMENT "glslc ${variant}.comp"
        VERBATIM)
      list(APPEND spvs ${spv})
      list(APPEND all_variants ${variant})
    endforeach()
  endforeach()
  set(stems ${all_variants})

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
