# FindHwloc: the hwloc library, through pkg-config when there is one, else
# in the usual places. Hide it with -DCMAKE_DISABLE_FIND_PACKAGE_Hwloc=ON.
# Sets HWLOC_FOUND, HWLOC_INCLUDE_DIRS and HWLOC_LINK_LIBRARIES (full paths,
# so that the installed CMake package of Superstep needs no Find module).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_HWLOC QUIET hwloc)
endif()
find_path(HWLOC_INCLUDE_DIR hwloc.h HINTS ${PC_HWLOC_INCLUDE_DIRS})
find_library(HWLOC_LIBRARY NAMES hwloc HINTS ${PC_HWLOC_LIBRARY_DIRS})
mark_as_advanced(HWLOC_INCLUDE_DIR HWLOC_LIBRARY)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Hwloc REQUIRED_VARS HWLOC_LIBRARY HWLOC_INCLUDE_DIR
  VERSION_VAR PC_HWLOC_VERSION)
if(Hwloc_FOUND)
  set(HWLOC_FOUND TRUE)
  set(HWLOC_INCLUDE_DIRS ${HWLOC_INCLUDE_DIR})
  set(HWLOC_LINK_LIBRARIES ${HWLOC_LIBRARY})
endif()
