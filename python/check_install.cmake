# ctest python.install: `cmake --install --component python` into a scratch prefix, then import
# the package from there with /usr/bin/python3 and check where it looks for tsrepro.
cmake_policy(SET CMP0007 NEW)
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
set(prefix ${BUILD_DIR}/python-install-check)
file(REMOVE_RECURSE ${prefix})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component python --prefix ${prefix}
                RESULT_VARIABLE installed)
if(NOT installed EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${INSTALL_DIR}
                        /usr/bin/python3 -c "import pkgutil, tsrepro, tsrepro._paths as p, tsrepro.backends as b, tsrepro._defaults as d; print(tsrepro.__file__); print(p.BIN_DIR); print(','.join(sorted(m.name for m in pkgutil.iter_modules(b.__path__)))); print(d.PROGRAM_BACKEND)"
                WORKING_DIRECTORY /  # not the build tree's python/: `-c` puts the working directory first
                OUTPUT_VARIABLE out RESULT_VARIABLE imported)
file(REMOVE_RECURSE ${prefix})
if(NOT imported EQUAL 0)
  message(FATAL_ERROR "the installed package does not import")
endif()
string(REPLACE "\n" ";" lines "${out}")
list(GET lines 0 package_file)
list(GET lines 1 bin_dir)
list(GET lines 2 shims)
list(GET lines 3 program_backend)
if(NOT package_file MATCHES "^${prefix}/${INSTALL_DIR}/tsrepro/__init__.py$")
  message(FATAL_ERROR "imported ${package_file}, not the installed package under ${prefix}")
endif()
if(NOT bin_dir STREQUAL "${prefix}/bin")
  message(FATAL_ERROR "the installed package looks for tsrepro in ${bin_dir}, not ${prefix}/bin")
endif()
# The backends' in-process runs (backends/<id>/shim.py) came along, the program's default among them.
string(REPLACE "," ";" shim_list "${shims}")
if(NOT program_backend IN_LIST shim_list)
  message(FATAL_ERROR "the installed package has the backend shims '${shims}', not the default backend ${program_backend}'s")
endif()
message(STATUS "installed package ${package_file}, tsrepro from ${bin_dir}")
