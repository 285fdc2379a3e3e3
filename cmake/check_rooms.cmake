# The include direction of the rooms (cmake/rooms.cmake), checked: every #include "..." of a file
# in a room names a header of that room, of a room it uses, or of no room (include/tsrepro/,
# libraries). Run as the unit test rooms.include_direction:
#   cmake -DSOURCE_DIR=<source root> -P cmake/check_rooms.cmake
# Prints one line per violation ("runner/case/x.cpp includes runner/exec/y.h: case may not use
# exec") and fails when there is one.

cmake_minimum_required(VERSION 3.16)

include(${CMAKE_CURRENT_LIST_DIR}/rooms.cmake)

# A room's globs as one anchored regular expression ("*" also crosses folders).
function(room_regex room out)
  set(parts)
  foreach(glob IN LISTS TSREPRO_ROOM_${room}_FILES)
    string(REPLACE "." "\\." regex "${glob}")
    string(REPLACE "*" ".*" regex "${regex}")
    list(APPEND parts "${regex}")
  endforeach()
  list(JOIN parts "|" joined)
  set(${out} "^(${joined})$" PARENT_SCOPE)
endfunction()

foreach(room IN LISTS TSREPRO_ROOMS)
  room_regex(${room} TSREPRO_REGEX_${room})
endforeach()

# The room of a path relative to the source root; "" for none.
function(room_of path out)
  foreach(room IN LISTS TSREPRO_ROOMS)
    if(TSREPRO_ROOM_${room}_FILES AND path MATCHES "${TSREPRO_REGEX_${room}}")
      set(${out} ${room} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(violations 0)
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/runner/* ${SOURCE_DIR}/backends/*
     ${SOURCE_DIR}/minifier/* ${SOURCE_DIR}/repro/* ${SOURCE_DIR}/sweep/* ${SOURCE_DIR}/cli/* ${SOURCE_DIR}/capture/*)
foreach(file IN LISTS files)
  if(NOT file MATCHES "\\.(cpp|h)$")
    continue()
  endif()
  room_of(${file} room)
  if(room STREQUAL "")
    message("${file}: in no room of cmake/rooms.cmake")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^#include \"[^\"]+\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    room_of(${header} used)
    if(used STREQUAL "" OR used STREQUAL room OR used IN_LIST TSREPRO_ROOM_${room}_USES)
      continue()
    endif()
    message("${file} includes ${header}: ${room} may not use ${used}")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()
# The capture's borrowed files (TSREPRO_CAPTURE_BORROWS_<room>): each in the room it is listed under.
foreach(room IN LISTS TSREPRO_ROOMS)
  foreach(borrowed IN LISTS TSREPRO_CAPTURE_BORROWS_${room})
    room_of(${borrowed} actual)
    if(NOT actual STREQUAL room OR NOT EXISTS ${SOURCE_DIR}/${borrowed})
      message("cmake/rooms.cmake: the capture's ${borrowed} is listed under ${room}; it is in room '${actual}'"
              )
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} violation(s) of the rooms' table (cmake/rooms.cmake)")
endif()
message("rooms: every include goes the rooms' way")
