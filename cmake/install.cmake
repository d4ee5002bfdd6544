# Install: headers, the shared library and/or the static archive, CMake package files
# (find_package(qlinear CONFIG)), pkg-config files (qlinear.pc, qlinear-static.pc), LICENSE,
# README, CHANGELOG and docs/. Every installed file is relocatable: `cmake --install BUILD --prefix P` may pick any P,
# and P may be moved afterwards. Included from the top-level CMakeLists.txt before tools/, so
# the strip rule below comes first in the install script.

# A Release (or MinSizeRel) install strips the CLI and the shared library (`cmake --install
# --strip` does it for any build type). Static archives are never stripped.
if(QLINEAR_INSTALL_STRIP)
  install(CODE [[
    if(CMAKE_INSTALL_CONFIG_NAME MATCHES "^(Release|MinSizeRel)$" AND NOT CMAKE_INSTALL_DO_STRIP)
      set(CMAKE_INSTALL_DO_STRIP 1)
    endif()
  ]])
endif()

set(QLINEAR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/qlinear)
# Two export sets: a shared-library consumer needs neither Highway's CMake package nor OpenMP's.
if(QLINEAR_BUILD_SHARED)
  install(TARGETS qlinear EXPORT qlinearTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT qlinearTargets NAMESPACE qlinear:: DESTINATION ${QLINEAR_CMAKE_DIR})
endif()
if(QLINEAR_BUILD_STATIC)
  install(TARGETS qlinear_static EXPORT qlinearStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT qlinearStaticTargets NAMESPACE qlinear:: DESTINATION ${QLINEAR_CMAKE_DIR})
endif()
install(FILES include/qlinear/qlinear.h include/qlinear/qlinear.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qlinear)
install(FILES LICENSE README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# docs/ beside the README, so that its links (CHANGELOG.md, docs/abi.md, docs/examples/...) resolve.
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

configure_package_config_file(cmake/qlinearConfig.cmake.in
  ${PROJECT_BINARY_DIR}/qlinearConfig.cmake INSTALL_DESTINATION ${QLINEAR_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/qlinearConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/qlinearConfig.cmake ${PROJECT_BINARY_DIR}/qlinearConfigVersion.cmake
  DESTINATION ${QLINEAR_CMAKE_DIR})

# pkg-config. The .pc files sit in LIBDIR/pkgconfig: the prefix is found from there.
file(RELATIVE_PATH QLINEAR_PC_TO_PREFIX
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" QLINEAR_PC_TO_PREFIX "${QLINEAR_PC_TO_PREFIX}")
set(QLINEAR_PC_PREFIX "\${pcfiledir}/${QLINEAR_PC_TO_PREFIX}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "qlinear: the pkg-config files need a relative CMAKE_INSTALL_LIBDIR and INCLUDEDIR")
endif()
# What the static archive needs at link time: Highway (libhwy.pc), the C++ runtime, libm and the
# OpenMP runtime. Debian ships Highway and libgomp as shared libraries only, so a "static"
# consumer still loads libhwy.so.1, libgomp.so.1 and libstdc++.so.6 (README, "Install").
set(QLINEAR_STATIC_LIBS "-lstdc++ -lm")
if(QLINEAR_WITH_OPENMP)
  foreach(lib IN LISTS OpenMP_CXX_LIB_NAMES)
    string(APPEND QLINEAR_STATIC_LIBS " -l${lib}")
  endforeach()
endif()
set(QLINEAR_PC_STATIC_ARCHIVE "\${libdir}/${CMAKE_STATIC_LIBRARY_PREFIX}qlinear${CMAKE_STATIC_LIBRARY_SUFFIX}")
if(QLINEAR_BUILD_STATIC)
  # The archive by path, so the linker cannot pick the shared library beside it.
  set(QLINEAR_PC_NAME qlinear-static)
  set(QLINEAR_PC_DESCRIPTION "${PROJECT_DESCRIPTION} (static archive)")
  set(QLINEAR_PC_REQUIRES "libhwy")
  set(QLINEAR_PC_LIBS "${QLINEAR_PC_STATIC_ARCHIVE} ${QLINEAR_STATIC_LIBS}")
  set(QLINEAR_PC_CFLAGS "")
  configure_file(cmake/qlinear.pc.in ${PROJECT_BINARY_DIR}/qlinear-static.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/qlinear-static.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
set(QLINEAR_PC_NAME qlinear)
if(QLINEAR_BUILD_SHARED)
  set(QLINEAR_PC_DESCRIPTION "${PROJECT_DESCRIPTION}")
  set(QLINEAR_PC_REQUIRES "")
  set(QLINEAR_PC_LIBS "-L\${libdir} -lqlinear")
  set(QLINEAR_PC_CFLAGS " -DQLINEAR_SHARED")
endif()
# Without the shared library, qlinear.pc names the archive (the same lines as qlinear-static.pc).
configure_file(cmake/qlinear.pc.in ${PROJECT_BINARY_DIR}/qlinear.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/qlinear.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
