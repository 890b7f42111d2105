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

# baracuda_add_sm90a_kernel_sources(<target> <files...>)
#
# Kernels that use sm_90a-only instructions (wgmma, setmaxnreg) are compiled by nvcc for
# `-gencode=arch=compute_90a,code=sm_90a` alone (not for BARACUDA_CUDA_ARCHS, whose sm_90 pass would reject
# them), in an object library whose objects join <target>. Only when the cuda kernels are built for 90
# (BARACUDA_CUDA_ARCHS, or CMAKE_CUDA_ARCHITECTURES when that is given instead); BARACUDA_SM90A_KERNELS says
# whether they are. The files see the include directories and compile definitions of <target>.
if(BARACUDA_CUDA_KERNELS AND ("90" IN_LIST BARACUDA_CUDA_ARCHS OR "90" IN_LIST CMAKE_CUDA_ARCHITECTURES))
  set(BARACUDA_SM90A_KERNELS ON)
else()
  set(BARACUDA_SM90A_KERNELS OFF)
endif()
function(baracuda_add_sm90a_kernel_sources target)
  if(NOT BARACUDA_SM90A_KERNELS)
    return()
  endif()
  set(lib ${target}_sm90a)
  if(NOT TARGET ${lib})
    add_library(${lib} OBJECT)
    set_target_properties(${lib} PROPERTIES CUDA_ARCHITECTURES OFF POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a>)
    target_include_directories(${lib} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
    target_compile_definitions(${lib} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
    target_link_libraries(${lib} PRIVATE CUDA::cudart)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${lib}>)
  endif()
  foreach(f IN LISTS ARGN)
    get_filename_component(abs ${f} ABSOLUTE)
    target_sources(${lib} PRIVATE ${abs})
  endforeach()
endfunction()
