# baracuda_add_kernel_sources(<target> CUDA <files...> SIM <files...>)
#
# A family's device code lives in kernels.cuh and is instantiated twice: its cuda.cu is compiled by nvcc
# for BARACUDA_CUDA_ARCHS, its sim.cu by the host compiler as C++ (-x c++) against the SIMT emulator.
# With BARACUDA_CUDA_KERNELS=OFF the CUDA files are skipped and the library is compiled with
# BARACUDA_HAVE_CUDA_KERNELS=0, so plans report `Unsupported` on the cuda device.
function(baracuda_add_kernel_sources target)
  cmake_parse_arguments(ARG "" "" "CUDA;SIM" ${ARGN})
  foreach(f IN LISTS ARG_SIM)
    get_filename_component(abs ${f} ABSOLUTE)
    set_source_files_properties(${abs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX)
    target_sources(${target} PRIVATE ${abs})
  endforeach()
  if(BARACUDA_CUDA_KERNELS)
    foreach(f IN LISTS ARG_CUDA)
      get_filename_component(abs ${f} ABSOLUTE)
      target_sources(${target} PRIVATE ${abs})
    endforeach()
  endif()
endfunction()
