# omnib_add_layer(<name> FOLDER <dir> [OBJECT] [SOURCES <file>...] [DEPENDS <layer>...]
#                 [PRIVATE_LIBS <lib>...] [PUBLIC_LIBS <lib>...])
#
# One layer of the house: a library of the sources of one folder (names
# relative to it), linked only to the layers it names, which must sit below
# it. A layer without sources is an INTERFACE library (headers only); OBJECT
# makes an object library, for algorithms that register themselves from
# static initializers (a static archive would drop them). ci/check_layers.py
# reads these calls: a file may include headers of its own folder and of the
# layers its layer depends on (directly or not), nothing else.
function(omnib_add_layer name)
  cmake_parse_arguments(L "OBJECT" "FOLDER" "SOURCES;DEPENDS;PRIVATE_LIBS;PUBLIC_LIBS" ${ARGN})
  if(NOT L_FOLDER)
    message(FATAL_ERROR "omnib_add_layer(${name}): FOLDER is required")
  endif()
  set(sources "")
  foreach(s IN LISTS L_SOURCES)
    list(APPEND sources ${PROJECT_SOURCE_DIR}/${L_FOLDER}/${s})
  endforeach()
  if(NOT sources)
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
    target_link_libraries(${name} INTERFACE ${L_DEPENDS} ${L_PUBLIC_LIBS})
    return()
  endif()
  if(L_OBJECT)
    add_library(${name} OBJECT ${sources})
  else()
    add_library(${name} STATIC ${sources})
  endif()
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${name} PUBLIC ${L_DEPENDS} ${L_PUBLIC_LIBS} PRIVATE ${L_PRIVATE_LIBS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# omnib_add_program(<name> [EXCLUDE_FROM_ALL] FOLDER <dir> SOURCES <file>... [DEPENDS <target>...])
#
# A program at the top of the house, built from sources of one folder (names
# relative to it). ci/check_layers.py reads these calls like the layers':
# the folder's files may include headers of the layers named, and below.
function(omnib_add_program name)
  cmake_parse_arguments(P "EXCLUDE_FROM_ALL" "FOLDER" "SOURCES;DEPENDS" ${ARGN})
  set(sources "")
  foreach(s IN LISTS P_SOURCES)
    list(APPEND sources ${PROJECT_SOURCE_DIR}/${P_FOLDER}/${s})
  endforeach()
  if(P_EXCLUDE_FROM_ALL)
    add_executable(${name} EXCLUDE_FROM_ALL ${sources})
  else()
    add_executable(${name} ${sources})
  endif()
  target_link_libraries(${name} PRIVATE ${P_DEPENDS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
endfunction()
