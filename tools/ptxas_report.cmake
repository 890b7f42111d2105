# The ptxas figures of every kernel of the library come from its own build: nvcc compiles the library's CUDA
# sources with `--resource-usage`, and tools/ptxas_log.sh (the CUDA compiler launcher, ccache behind it)
# moves ptxas's lines into <object>.ptxas.log. ccache replays them with the object, so a cached build has
# them too.
#
# `ptxas-report` (not built by default) reads those logs and, for the vec128 column, the PTX of the highest
# architecture: from the object when it holds it uncompressed (BARACUDA_FATBIN_NO_COMPRESS, the `ci` preset),
# otherwise by compiling the source once more to PTX only (tools/ptxas_report.py); it writes
# <dir>/ptxas-report.txt (every kernel) and <dir>/ptxas-summary.txt (per source and architecture;
# docs/perf/ptxas-summary.txt is its checked-in copy), and fails when a kernel spills.
find_package(Python3 COMPONENTS Interpreter)

set(_baracuda_ccache "")
if(BARACUDA_CCACHE)
  set(_baracuda_ccache ${BARACUDA_CCACHE})
endif()

if(BARACUDA_CUDA_KERNELS)
  foreach(target baracuda baracuda_sm90a)
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--resource-usage>)
      if(BARACUDA_FATBIN_NO_COMPRESS)
        target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--no-compress>)
      endif()
      set_property(TARGET ${target} PROPERTY CUDA_COMPILER_LAUNCHER
                   ${PROJECT_SOURCE_DIR}/tools/ptxas_log.sh ${_baracuda_ccache})
    endif()
  endforeach()
endif()

if(NOT BARACUDA_CUDA_KERNELS OR NOT Python3_Interpreter_FOUND)
  add_custom_target(ptxas-report
    COMMAND ${CMAKE_COMMAND} -E echo "ptxas-report needs BARACUDA_CUDA_KERNELS=ON and Python 3"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
  return()
endif()

set(_baracuda_ptx_arch 0)
foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
  string(REGEX REPLACE "[^0-9]" "" arch "${arch}")
  if(arch GREATER _baracuda_ptx_arch)
    set(_baracuda_ptx_arch ${arch})
  endif()
endforeach()

add_custom_target(ptxas-report
  COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/ptxas_report.py
          --build-dir ${CMAKE_BINARY_DIR}
          --source-dir ${PROJECT_SOURCE_DIR}
          --ptx-arch ${_baracuda_ptx_arch}
          --ccache "${_baracuda_ccache}"
          --work ${CMAKE_BINARY_DIR}/ptxas-report.d
          --out ${CMAKE_BINARY_DIR}/ptxas-report.txt
          --summary ${CMAKE_BINARY_DIR}/ptxas-summary.txt
          --fail-on-spills
  COMMENT "ptxas resource usage of every kernel of the library -> ${CMAKE_BINARY_DIR}/ptxas-report.txt"
  VERBATIM
  USES_TERMINAL)
add_dependencies(ptxas-report baracuda)
