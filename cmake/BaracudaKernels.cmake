# The host compiler's options for the sim kernel sources (kernel units and test kernels compiled against the
# SIMT emulator): with clang, the load/store instrumentation that the emulator's initcheck and racecheck read
# (src/sim/emu/memcheck.hpp); GCC has none, so those two checks are unavailable in GCC builds.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(BARACUDA_SIM_KERNEL_OPTIONS -fsanitize-coverage=func,trace-loads,trace-stores)
  set(BARACUDA_SIM_MEMCHECK 1)
else()
  set(BARACUDA_SIM_KERNEL_OPTIONS "")
  set(BARACUDA_SIM_MEMCHECK 0)
endif()
# With both compilers, stack probing (x86-64): a frame larger than a page touches every page as it grows the
# stack, so a CUDA thread whose locals overflow its fiber stack faults on the guard region below it
# (src/sim/emu/fiber.cpp) instead of writing into the stack of another thread.
list(APPEND BARACUDA_SIM_KERNEL_OPTIONS -fstack-clash-protection)
# Under UBSan (BARACUDA_SANITIZE), the kernel sources keep the checks where the two devices can differ
# (float-cast-overflow, shift, signed-integer-overflow, integer-divide-by-zero, alignment, bounds, ...) and drop
# four that AddressSanitizer or the fault itself covers in kernel code, or that it cannot trip: null (a load
# through a null pointer faults, and ASan reports it with its stack), object-size and pointer-overflow (an access
# outside its allocation is ASan's report), vptr (kernels have no polymorphic types). Those four cost a fifth to
# a quarter of a kernel unit's compile (softmax/device.cu 35 -> 28 s, cast/device.cu 115 -> 85 s, clang 14, -O1).
if(BARACUDA_SANITIZE MATCHES "undefined")
  list(APPEND BARACUDA_SIM_KERNEL_OPTIONS -fno-sanitize=null,object-size,vptr,pointer-overflow)
endif()

# The environment of the checked sim test runs (the `_sim_rev` registrations): every checker this build has,
# and strict mode.
set(BARACUDA_SIM_CHECKED_ENV "BARACUDA_SIM_CHECK=all;BARACUDA_SIM_STRICT=1")

# baracuda_sim_kernel_sources(<files...>): compile the files (of the calling directory's targets) as sim kernel
# sources: as C++, with BARACUDA_SIM_KERNEL_OPTIONS.
function(baracuda_sim_kernel_sources)
  set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CXX)
  if(BARACUDA_SIM_KERNEL_OPTIONS)
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS ${BARACUDA_SIM_KERNEL_OPTIONS})
  endif()
endfunction()

# baracuda_add_kernel_sources(<target> [FAMILY <name>] UNITS <files...> [SM90A])
#
# A kernel unit is one source file compiled for both devices: by nvcc for the cuda device (for
# BARACUDA_CUDA_ARCHS) and by the host compiler, as C++, against the SIMT emulator for the sim device
# (BARACUDA_DEVICE_NAMESPACE_BEGIN/END give the two compilations different symbols). A family's units are
# device.cu, or device_<part>.cu when its instantiations are split so that they compile in parallel.
#
# A family's .cu unit is compiled from where it lies, twice: by nvcc as a source of <target> (only with
# BARACUDA_CUDA_KERNELS=ON), and by the host compiler in an object library of the calling directory,
# baracuda_<family>_sim, whose objects join <target> (a source file's language is a property of the
# directory a target is made in, so the unit is CUDA for <target>'s directory and C++ for the caller's).
# Compiling the files themselves, not generated wrappers, keeps each object's compile command the same in
# every build tree of this source tree, so ccache serves a second build (tests/install/check.sh's
# add_subdirectory consumer) from the first.
#
# Units of a target made in the calling directory, units that are not .cu files, and SM90A units (nvcc for
# sm_90a alone: baracuda_add_sm90a_kernel_sources) are compiled through stubs written into the build tree
# that only #include them: sim_<family>_<unit>.cpp (host compiler) and cuda_<family>_<unit>.cu (nvcc).
# <family> defaults to the calling directory's name; it keeps two families' device.cu apart.
# With BARACUDA_CUDA_KERNELS=OFF the library is compiled with BARACUDA_HAVE_CUDA_KERNELS=0, so plans report
# `Unsupported` on the cuda device.
function(baracuda_add_kernel_sources target)
  cmake_parse_arguments(ARG "SM90A" "FAMILY" "UNITS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_UNITS)
    message(FATAL_ERROR "baracuda_add_kernel_sources(${target} ${ARGN}): expected [FAMILY <name>] UNITS <files...> [SM90A]")
  endif()
  if(NOT ARG_FAMILY)
    get_filename_component(ARG_FAMILY ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  endif()
  set(with_cuda OFF)
  if(BARACUDA_CUDA_KERNELS AND (NOT ARG_SM90A OR BARACUDA_SM90A_KERNELS))
    set(with_cuda ON)
  endif()
  get_target_property(target_dir ${target} SOURCE_DIR)
  foreach(unit IN LISTS ARG_UNITS)
    get_filename_component(abs ${unit} ABSOLUTE)
    if(NOT EXISTS ${abs})
      message(FATAL_ERROR "baracuda_add_kernel_sources(${target}): no kernel unit ${abs}")
    endif()
    get_filename_component(name ${unit} NAME_WLE)
    get_filename_component(ext ${unit} LAST_EXT)
    if(ext STREQUAL ".cu" AND NOT ARG_SM90A AND NOT target_dir STREQUAL CMAKE_CURRENT_SOURCE_DIR)
      set(sim baracuda_${ARG_FAMILY}_sim)
      if(NOT TARGET ${sim})
        add_library(${sim} OBJECT)
        set_target_properties(${sim} PROPERTIES POSITION_INDEPENDENT_CODE ON)
        target_include_directories(${sim} PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
        target_compile_definitions(${sim} PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
        target_link_libraries(${sim} PRIVATE baracuda_sim_runtime CUDA::cudart)
        target_sources(${target} PRIVATE $<TARGET_OBJECTS:${sim}>)
      endif()
      baracuda_sim_kernel_sources(${abs})
      target_sources(${sim} PRIVATE ${abs})
      if(with_cuda)
        target_sources(${target} PRIVATE ${abs})
      endif()
      continue()
    endif()
    file(RELATIVE_PATH source ${PROJECT_SOURCE_DIR} ${abs})
    file(RELATIVE_PATH include ${CMAKE_CURRENT_BINARY_DIR} ${abs})
    set(stub ${CMAKE_CURRENT_BINARY_DIR}/sim_${ARG_FAMILY}_${name}.cpp)
    _baracuda_write_kernel_stub("${stub}" "${source}" "${include}" "the sim device, compiled by the host compiler")
    baracuda_sim_kernel_sources(${stub})
    target_sources(${target} PRIVATE ${stub})
    if(with_cuda)
      set(stub ${CMAKE_CURRENT_BINARY_DIR}/cuda_${ARG_FAMILY}_${name}.cu)
      if(ARG_SM90A)
        _baracuda_write_kernel_stub("${stub}" "${source}" "${include}" "the cuda device, compiled by nvcc for sm_90a")
        baracuda_add_sm90a_kernel_sources(${target} ${stub})
      else()
        _baracuda_write_kernel_stub("${stub}" "${source}" "${include}" "the cuda device, compiled by nvcc")
        target_sources(${target} PRIVATE ${stub})
      endif()
    endif()
  endforeach()
endfunction()

# file(CONFIGURE) leaves an unchanged file (and its timestamp) alone.
function(_baracuda_write_kernel_stub stub source include what)
  file(CONFIGURE OUTPUT ${stub} CONTENT [[
// Generated by baracuda_add_kernel_sources (cmake/BaracudaKernels.cmake): @source@ for @what@.
#include "@include@"
]] @ONLY)
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
