# The libraries a host application links, and the CMake package that finds
# them (docs/embedding.md):
#   libtessera.so  Tessera::tessera         the C ABI; only tsr_* exported
#   libtessera.a   Tessera::tessera_static  every component in one archive;
#                  the host links LLVM, asmjit, oneTBB, fmt, OpenBLAS and
#                  SLEEF too (TesseraConfig.cmake finds them)
# `cmake --install BUILD --prefix P` puts them, include/tessera/ and
# lib/cmake/Tessera/ under P; find_package(Tessera 0.1) then works with
# CMAKE_PREFIX_PATH=P.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
# Imported targets are visible only in the folder that found them.
find_package(asmjit REQUIRED CONFIG)
find_package(TBB REQUIRED)
if(NOT TESSERA_STATIC_LLVM)
  find_package(LLVM REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
endif()

set(TESSERA_COMPONENT_LIBRARIES
  tessera_core tessera_frontend tessera_compiler tessera_builtins tessera_graph tessera_tensor tessera_interp
  tessera_tracer tessera_optimizer tessera_deopt tessera_kernel tessera_kernel_cuda tessera_kernel_cpu
  tessera_codegen tessera_llvm tessera_llvm_objects tessera_device tessera_comm tessera_runtime tessera_embed)

add_library(tessera SHARED $<TARGET_OBJECTS:tessera_embed> runtime/embed/shared_library_stderr.c)
target_link_libraries(tessera PRIVATE tessera_embed)
# The version script makes every symbol but the ABI's local: a host sees
# tsr_* only, and the VM's own calls bind inside the library.
target_link_options(tessera PRIVATE
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/runtime/embed/tessera.map -Wl,--no-undefined)
set_target_properties(tessera PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/embed/tessera.map)
target_include_directories(tessera INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

set(_objects)
foreach(lib IN LISTS TESSERA_COMPONENT_LIBRARIES)
  list(APPEND _objects $<TARGET_OBJECTS:${lib}>)
endforeach()
add_library(tessera_static STATIC ${_objects})
set_target_properties(tessera_static PROPERTIES OUTPUT_NAME tessera)
target_include_directories(tessera_static INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# What the components link from outside the project (imported targets the
# package config finds again, and plain library files).
target_link_libraries(tessera_static INTERFACE ${TESSERA_LLVM_PACKAGE_LIBS} asmjit::asmjit TBB::tbb fmt::fmt
  Threads::Threads ${CMAKE_DL_LIBS} ${SLEEF_LIBRARY})
add_dependencies(tessera_static ${TESSERA_COMPONENT_LIBRARIES})

install(FILES include/tessera/tessera.h include/tessera/tessera.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera)
install(TARGETS tessera EXPORT TesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tessera_static EXPORT TesseraStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${_cmake_dir})
install(EXPORT TesseraStaticTargets NAMESPACE Tessera:: DESTINATION ${_cmake_dir})
configure_package_config_file(cmake/TesseraConfig.cmake.in ${CMAKE_BINARY_DIR}/TesseraConfig.cmake
  INSTALL_DESTINATION ${_cmake_dir})
# 0.x: a minor version may break the ABI, so only the same minor matches.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/TesseraConfig.cmake ${CMAKE_BINARY_DIR}/TesseraConfigVersion.cmake
  DESTINATION ${_cmake_dir})
