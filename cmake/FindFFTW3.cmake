# FindFFTW3: FFTW 3 (double precision), through pkg-config when there is
# one, else in the usual places. Hide it with
# -DCMAKE_DISABLE_FIND_PACKAGE_FFTW3=ON. Module mode is used first, so
# Debian's own FFTW3Config.cmake is not needed.
# Sets FFTW3_FOUND, the imported target FFTW3::fftw3 and
# FFTW3_THREADS_LIBRARY (libfftw3_threads, for which Debian ships no .pc
# file; empty when absent).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_FFTW3 QUIET fftw3)
endif()
find_path(FFTW3_INCLUDE_DIR fftw3.h HINTS ${PC_FFTW3_INCLUDE_DIRS})
find_library(FFTW3_LIBRARY NAMES fftw3 HINTS ${PC_FFTW3_LIBRARY_DIRS})
mark_as_advanced(FFTW3_INCLUDE_DIR FFTW3_LIBRARY)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3 REQUIRED_VARS FFTW3_LIBRARY FFTW3_INCLUDE_DIR
  VERSION_VAR PC_FFTW3_VERSION)
if(FFTW3_FOUND)
  get_filename_component(_fftw3_dir ${FFTW3_LIBRARY} DIRECTORY)
  find_library(FFTW3_THREADS_LIB NAMES fftw3_threads HINTS ${_fftw3_dir} ${PC_FFTW3_LIBRARY_DIRS})
  mark_as_advanced(FFTW3_THREADS_LIB)
  set(FFTW3_THREADS_LIBRARY "")
  if(FFTW3_THREADS_LIB)
    set(FFTW3_THREADS_LIBRARY ${FFTW3_THREADS_LIB})
  endif()
  if(NOT TARGET FFTW3::fftw3)
    add_library(FFTW3::fftw3 UNKNOWN IMPORTED)
    set_target_properties(FFTW3::fftw3 PROPERTIES IMPORTED_LOCATION ${FFTW3_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${FFTW3_INCLUDE_DIR})
  endif()
endif()
