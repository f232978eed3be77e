# The fdrill .deb: `cpack -G DEB` in the build directory writes
# fdrill_<version>_<arch>.deb holding exactly what `cmake --install` installs
# (packaging/CMakeLists.txt). Included at the end of the top-level
# CMakeLists.txt, after every install() rule. tests/packaging/deb_test.sh
# builds, inspects, installs and purges it.

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "fdrill")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "fdrill team <fdrill@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fault-injection drills for GPU-cluster interconnects")
set(CPACK_PACKAGE_DESCRIPTION
    "fdrill injects faults into GPU-cluster interconnects (links, InfiniBand ports, NVLink, GPU clocks,\n"
    "ranks) while a collective workload runs, reverts them, and reports what the fabric did.\n"
    "This package holds the controller (fdrill), the per-node agent (fdrill-agent, with a systemd\n"
    "unit that is installed neither enabled nor started), the workload and the drill scenarios.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
# The absolute destinations (/etc, /lib/systemd, /var/lib) need DESTDIR, and
# DESTDIR keeps the install prefix: the package mirrors `cmake --install`.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "fdrill .deb: install prefix ${CMAKE_INSTALL_PREFIX}, not /usr; "
                 "a Debian package belongs in /usr (-DCMAKE_INSTALL_PREFIX=/usr)")
endif()

# Binaries stripped (with -DCMAKE_BUILD_TYPE=RelWithDebInfo the debug info
# stays in the build tree; the default Release build has none).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # fdrill_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "fdrill team <fdrill@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Libraries from dpkg-shlibdeps (libibverbs1 among them: fdrill-agent lists
# RDMA devices and listens to their async events; on a node without RDMA it
# finds none); on top of them, what the binaries exec:
#   iproute2   ip, tc           (link faults, netem, the management interface)
#   iptables   iptables         (link_loss, partitions: injectors/iptables_chain.cc;
#                                nft, when there, only tidies an emptied table)
#   procps     kill             (`fdrill fabric down`: fabric/fabric_down.cc)
#   openmpi-bin mpirun          (the workload launcher the agent starts)
# ibportstate (infiniband-diags) is needed only on nodes with an HCA.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "iproute2, iptables, procps, openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "infiniband-diags, nftables")
# libibverbs lists a device only when its provider (mlx5, ...) is installed.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ibverbs-providers")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA)
foreach(f conffiles postinst prerm postrm)
  list(APPEND CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${PROJECT_SOURCE_DIR}/packaging/deb/${f}")
endforeach()
# Maintainer scripts 0755 and conffiles 0644 whatever the checkout's modes.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
