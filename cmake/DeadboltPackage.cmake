# Debian packages, one per install component (`cpack -G DEB` in a build directory):
#   libdeadbolt-<lib>0      a library (core, sql, each engine), stripped
#   libdeadbolt-<lib>-dev   what builds against it: headers (core), CMake and pkg-config files
#   libdeadbolt-dev         every engine's -dev package (deadbolt.pc: everything built)
#   deadbolt                the CLI
# A Redis user installs libdeadbolt-redis-dev (which pulls the core and Redis's runtime, hiredis,
# OpenSSL) and nothing of gRPC, ZooKeeper, libpq or libmariadb. The system libraries a package
# needs are found by dpkg-shlibdeps; ours are named as component dependencies.
set(CPACK_PACKAGE_NAME deadbolt)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "deadbolt developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed locks with fencing tokens")
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

get_property(_libs GLOBAL PROPERTY DEADBOLT_LIBRARIES)
get_property(_engines GLOBAL PROPERTY DEADBOLT_BUILT_ENGINES)
set(CPACK_COMPONENTS_ALL ${_libs} deadbolt-dev)
if(DEADBOLT_BUILD_CLI)
  list(APPEND CPACK_COMPONENTS_ALL cli)
endif()
foreach(_lib ${_libs})
  list(APPEND CPACK_COMPONENTS_ALL ${_lib}-dev)
  get_target_property(_dir deadbolt_${_lib} BINARY_DIR)  # where dpkg-shlibdeps finds ours
  list(APPEND CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${_dir})
  get_property(_needs GLOBAL PROPERTY DEADBOLT_NEEDS_${_lib})
  get_property(_deb_dev GLOBAL PROPERTY DEADBOLT_DEB_DEV_${_lib})
  string(TOUPPER ${_lib} _L)
  set(CPACK_DEBIAN_${_L}_PACKAGE_NAME libdeadbolt-${_lib}0)
  set(CPACK_DEBIAN_${_L}_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_${_L}-DEV_PACKAGE_NAME libdeadbolt-${_lib}-dev)
  set(CPACK_DEBIAN_${_L}-DEV_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_${_L}-DEV_PACKAGE_SHLIBDEPS OFF)
  set(_runtime_deps)
  set(_dev_deps ${_lib})
  if(NOT _lib STREQUAL "core")
    set(_runtime_deps core ${_needs})
    list(APPEND _dev_deps core-dev)
    foreach(_n ${_needs})
      list(APPEND _dev_deps ${_n}-dev)
    endforeach()
  endif()
  set(CPACK_COMPONENT_${_L}_DEPENDS ${_runtime_deps})
  set(CPACK_COMPONENT_${_L}-DEV_DEPENDS ${_dev_deps})
  list(JOIN _deb_dev ", " CPACK_DEBIAN_${_L}-DEV_PACKAGE_DEPENDS)
endforeach()
# The core's pkg-config file requires fmt's (privately: pkg-config still looks for it).
set(CPACK_DEBIAN_CORE-DEV_PACKAGE_DEPENDS "libfmt-dev")
set(CPACK_DEBIAN_CORE-DEV_PACKAGE_SUGGESTS "libasio-dev")  # deadbolt/async.hpp only
set(CPACK_DEBIAN_DEADBOLT-DEV_PACKAGE_NAME libdeadbolt-dev)
set(CPACK_DEBIAN_DEADBOLT-DEV_PACKAGE_SECTION libdevel)
list(TRANSFORM _engines APPEND -dev OUTPUT_VARIABLE CPACK_COMPONENT_DEADBOLT-DEV_DEPENDS)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME deadbolt)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
# The CLI loads an engine's library when a URL needs it (cli/engines.cpp): it needs the core,
# and recommends the engines, so that `--no-install-recommends` plus libdeadbolt-redis0 is a
# Redis CLI without gRPC.
if(BUILD_SHARED_LIBS)  # a static CLI has every engine in it
  set(CPACK_COMPONENT_CLI_DEPENDS core)
  set(_recommends)
  foreach(_e ${_engines})
    list(APPEND _recommends "libdeadbolt-${_e}0 (= ${PROJECT_VERSION})")
  endforeach()
  list(JOIN _recommends ", " CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS)
endif()
include(CPack)
