# `ptxas-report`: registers, spills and shared memory of every kernel in src/ops/*/cuda*.cu for each of the
# configured CUDA architectures, and whether each kernel's PTX has 128-bit global accesses
# (tools/ptxas_report.py). Not built by default: `cmake --build <dir> --target ptxas-report` writes
# <dir>/ptxas-report.txt; docs/perf/ptxas-report.txt is a checked-in snapshot of it.
find_package(Python3 COMPONENTS Interpreter)
file(GLOB _baracuda_ptxas_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/ops/*/cuda*.cu)

if(NOT BARACUDA_CUDA_KERNELS OR NOT Python3_Interpreter_FOUND OR NOT _baracuda_ptxas_sources)
  add_custom_target(ptxas-report
    COMMAND ${CMAKE_COMMAND} -E echo "ptxas-report needs BARACUDA_CUDA_KERNELS=ON, Python 3 and src/ops/*/cuda*.cu"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
  return()
endif()

add_custom_target(ptxas-report
  COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/tools/ptxas_report.py
          --compile-commands ${CMAKE_BINARY_DIR}/compile_commands.json
          --archs "${CMAKE_CUDA_ARCHITECTURES}"
          --source-dir ${PROJECT_SOURCE_DIR}
          --work ${CMAKE_BINARY_DIR}/ptxas-report.d
          --out ${CMAKE_BINARY_DIR}/ptxas-report.txt
          ${_baracuda_ptxas_sources}
  COMMENT "ptxas resource usage of every cuda kernel -> ${CMAKE_BINARY_DIR}/ptxas-report.txt"
  VERBATIM
  USES_TERMINAL)
