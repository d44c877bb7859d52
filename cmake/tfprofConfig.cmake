# CMake package for tfprof: find_package(tfprof) gives tfprof::profiler.
include(CMakeFindDependencyMacro)
find_dependency(Protobuf)
find_dependency(absl CONFIG)
find_dependency(ZLIB)
find_dependency(PkgConfig)
find_dependency(simdjson CONFIG)
# leveldb's package links Threads::Threads without finding it itself.
find_dependency(Threads)
find_dependency(leveldb CONFIG)
if(NOT TARGET PkgConfig::RE2)
  pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
endif()
include("${CMAKE_CURRENT_LIST_DIR}/tfprofTargets.cmake")
