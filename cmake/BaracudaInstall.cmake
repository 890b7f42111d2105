# Installation and the exported CMake package: after `cmake --install <build> --prefix P`, a project
# finds baracuda with `find_package(baracuda)` (CMAKE_PREFIX_PATH=P) and links `baracuda::baracuda`.
# `add_subdirectory(baracuda)` gives the same `baracuda::baracuda` target (an alias).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BARACUDA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/baracuda
    CACHE STRING "Where baracudaConfig.cmake is installed, relative to the prefix")

# The public headers are C++20; consumers get that requirement with the target.
target_compile_features(baracuda INTERFACE cxx_std_20)

# baracuda is a static library: its private dependency on the emulator runtime is part of its link
# interface, so the runtime is installed and exported with it (as baracuda::sim_runtime, like its alias).
set_target_properties(baracuda_sim_runtime PROPERTIES EXPORT_NAME sim_runtime)
install(TARGETS baracuda baracuda_sim_runtime
  EXPORT baracudaTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/baracuda DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${BARACUDA_GENERATED_INCLUDE_DIR}/baracuda/all_ops.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/baracuda)
install(EXPORT baracudaTargets NAMESPACE baracuda:: DESTINATION ${BARACUDA_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/baracudaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/baracudaConfig.cmake
  INSTALL_DESTINATION ${BARACUDA_INSTALL_CMAKEDIR})
# 0.x releases: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/baracudaConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/baracudaConfig.cmake ${PROJECT_BINARY_DIR}/baracudaConfigVersion.cmake
  DESTINATION ${BARACUDA_INSTALL_CMAKEDIR})

if(TARGET baracuda-profiler)
  install(TARGETS baracuda-profiler RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
