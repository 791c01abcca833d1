# tessera_find_numpy_python(VAR DOC [SAME_MINOR]): sets the cache variable VAR
# to the first Python that imports numpy, Python3_EXECUTABLE (what CMake
# found) or /usr/bin/python3 (Debian's, with python3-numpy), unless VAR is
# already set. A pyenv or virtualenv python3 first on the PATH often lacks
# NumPy. SAME_MINOR: only a Python of Python3_EXECUTABLE's minor version (one
# that can load a module built for it).
function(tessera_find_numpy_python var doc)
  if(${var})
    return()
  endif()
  set(_check "import numpy")
  if("SAME_MINOR" IN_LIST ARGN)
    set(_check "import sys, numpy; sys.exit(sys.version_info[:2] != (${Python3_VERSION_MAJOR}, ${Python3_VERSION_MINOR}))")
  endif()
  foreach(_py IN ITEMS ${Python3_EXECUTABLE} /usr/bin/python3)
    execute_process(COMMAND ${_py} -c "${_check}" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(${var} ${_py} CACHE FILEPATH "${doc}")
      return()
    endif()
  endforeach()
endfunction()
