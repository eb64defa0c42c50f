# FindSodium: libsodium, through pkg-config when there is one, else in the
# usual places. Hide it with -DCMAKE_DISABLE_FIND_PACKAGE_Sodium=ON.
# Sets SODIUM_FOUND, SODIUM_INCLUDE_DIRS, SODIUM_LINK_LIBRARIES (full
# paths), SODIUM_LIBRARY_DIRS and SODIUM_LIBRARIES (names, for -l) and
# SODIUM_CFLAGS_OTHER (from pkg-config).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_SODIUM QUIET libsodium)
endif()
find_path(SODIUM_INCLUDE_DIR sodium.h HINTS ${PC_SODIUM_INCLUDE_DIRS})
find_library(SODIUM_LIBRARY NAMES sodium HINTS ${PC_SODIUM_LIBRARY_DIRS})
mark_as_advanced(SODIUM_INCLUDE_DIR SODIUM_LIBRARY)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Sodium REQUIRED_VARS SODIUM_LIBRARY SODIUM_INCLUDE_DIR
  VERSION_VAR PC_SODIUM_VERSION)
if(Sodium_FOUND)
  set(SODIUM_FOUND TRUE)
  set(SODIUM_INCLUDE_DIRS ${SODIUM_INCLUDE_DIR})
  set(SODIUM_LINK_LIBRARIES ${SODIUM_LIBRARY})
  get_filename_component(SODIUM_LIBRARY_DIRS ${SODIUM_LIBRARY} DIRECTORY)
  set(SODIUM_LIBRARIES sodium)
  set(SODIUM_CFLAGS_OTHER ${PC_SODIUM_CFLAGS_OTHER})
endif()
