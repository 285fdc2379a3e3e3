# The roles column of backends/backends.def, read at configure time into the public header
# tsrepro/backend_defaults.h (from cmake/backend_defaults.h.in): the reference backend, the
# sweep's default backends and the backend of a program that names none (the capture library,
# tsrepro.wrap; also python/tsrepro/_defaults.py). Code outside backends/ names no backend
# (tests/check_backend_names.py); what it needs of the table it reads from there.
#
# The C preprocessor reads the table, as every other reader does: each row becomes a line of
# CMake, `tsrepro_backend_row(<id> "<roles>")`, which this file then runs.

set(TSREPRO_BACKEND_TABLE ${CMAKE_CURRENT_SOURCE_DIR}/backends/backends.def)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${TSREPRO_BACKEND_TABLE})

set(rows_source ${CMAKE_BINARY_DIR}/generated/backend_rows.h)
set(rows_cmake ${CMAKE_BINARY_DIR}/generated/backend_rows.cmake)
file(WRITE ${rows_source}
  "#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under, roles) "
  "tsrepro_backend_row(id roles)\n#include \"${TSREPRO_BACKEND_TABLE}\"\n")
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -E -P -x c++ ${rows_source}
                OUTPUT_FILE ${rows_cmake} RESULT_VARIABLE preprocessed)
if(NOT preprocessed EQUAL 0)
  message(FATAL_ERROR "${TSREPRO_BACKEND_TABLE}: the C preprocessor cannot read the table of backends")
endif()

set(TSREPRO_BACKEND_IDS)
macro(tsrepro_backend_row id roles)
  list(APPEND TSREPRO_BACKEND_IDS ${id})
  separate_arguments(row_roles UNIX_COMMAND "${roles}")
  foreach(role IN LISTS row_roles)
    if(NOT role MATCHES "^(reference|sweep|program)$")
      message(FATAL_ERROR "${TSREPRO_BACKEND_TABLE}: backend ${id} has the unknown role '${role}'")
    endif()
    list(APPEND TSREPRO_BACKENDS_AS_${role} ${id})
  endforeach()
endmacro()
include(${rows_cmake})

foreach(role reference program)
  list(LENGTH TSREPRO_BACKENDS_AS_${role} count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "${TSREPRO_BACKEND_TABLE}: ${count} backends have the role ${role}; one must")
  endif()
endforeach()
set(TSREPRO_REFERENCE_BACKEND ${TSREPRO_BACKENDS_AS_reference})
set(TSREPRO_PROGRAM_BACKEND ${TSREPRO_BACKENDS_AS_program})
list(JOIN TSREPRO_BACKENDS_AS_sweep "," TSREPRO_SWEEP_BACKENDS)

set(TSREPRO_PUBLIC_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated/public)
configure_file(${CMAKE_CURRENT_LIST_DIR}/backend_defaults.h.in
               ${TSREPRO_PUBLIC_GENERATED_DIR}/tsrepro/backend_defaults.h @ONLY)
