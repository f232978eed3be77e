# Shared by demo.sh and test.sh: install Debian packages (quiet when already
# there), configure and build into build/ (binaries in build/bin/).

# Every program the code runs has a row in common/host/programs.cc naming
# its package; tests/core/programs_test.cc fails when one of those packages
# is neither here nor in Debian's base (Essential / Priority: required).
# FDRILL_PACKAGES is everything (./test.sh); FDRILL_DEMO_PACKAGES is the part
# ./demo.sh needs to build the programs and run its drill on the emulated
# fabric (the same test checks it is a subset, and a fresh-machine check runs
# ./demo.sh with only these installed). libibverbs-dev is in both: fdrill-agent
# links libibverbs (common/host/real_verbs.h). ibverbs-providers holds the
# userspace drivers (mlx5, ...) without which libibverbs skips a device, so
# the agent would list none (libibverbs1 only Recommends it, and apt-get runs
# here with --no-install-recommends). ibverbs-utils (ibv_devinfo,
# ibv_asyncwatch) and rdma-core (the RDMA udev rules and module loading) are
# for the operator on an RDMA node; no fdrill code runs them. libzstd-dev is
# in both: the report reads metrics.jsonl.zst (reports/line_reader.h).
# help2man makes the man pages the .deb installs (packaging/man.sh).
# python3-torch (PyTorch 1.13, CPU, gloo) is ./test.sh's only: the e2e tests
# run the PyTorch DDP drills (scenarios/pytorch-*.yaml) with it.
FDRILL_PACKAGES=(
  build-essential dpkg-dev cmake ninja-build pkg-config
  libboost-dev libboost-system-dev libssl-dev
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev libzstd-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev openssh-client openssh-server slurm-client slurmctld slurmd munge
  iproute2 iptables nftables util-linux procps infiniband-diags ethtool
  libnetfilter-queue-dev
  libibverbs-dev ibverbs-providers ibverbs-utils rdma-core
  clang libclang-rt-14-dev clang-format
  file help2man python3
  jq
  chromium
  python3-torch
)
FDRILL_DEMO_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libboost-system-dev libssl-dev
  libyaml-cpp-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev libzstd-dev
  openmpi-bin libopenmpi-dev openssh-client
  iproute2 iptables nftables util-linux procps
  libnetfilter-queue-dev
  libibverbs-dev
)

# install_deps [demo]: every package (./test.sh), or with `demo` only what
# ./demo.sh needs.
install_deps() {
  local wanted=("${FDRILL_PACKAGES[@]}")
  [ "${1:-}" != "demo" ] || wanted=("${FDRILL_DEMO_PACKAGES[@]}")
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "setup: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null || true
  # Installed, not started: openssh-server's postinst would start the
  # machine's own sshd on port 22; fdrill runs its own inside the emulated
  # nodes (`fabric up --sshd`). policy-rc.d(8) answering 101 tells
  # invoke-rc.d and deb-systemd-invoke not to start services; ours is put
  # there only when none exists (a container image may have its own) and
  # removed after apt-get, even when it fails.
  local guard=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# fdrill set-up: install packages, start no service (removed after apt-get)\nexit 101\n' |
      $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod 0755 /usr/sbin/policy-rc.d
    guard=1
  fi
  local rc=0
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
  [ -z "$guard" ] || $sudo rm -f /usr/sbin/policy-rc.d
  return $rc
}

# configure_and_build [demo]: everything (tests, benchmarks), or with `demo`
# only fdrill's programs (build/bin: fdrill, fdrill-agent, fdrill-collective,
# fdrill-burn, fdrill-train-ref), about 40 % of the full build's time.
configure_and_build() {
  local werror="${FDRILL_WERROR:-ON}"
  local extras=ON
  [ "${1:-}" != "demo" ] || extras=OFF
  # A unity build (CMakeLists.txt: FDRILL_UNITY): a build from scratch on
  # two cores takes about 40 % less time.
  cmake -S . -B build -G Ninja -DFDRILL_WERROR="$werror" -DFDRILL_UNITY="${FDRILL_UNITY:-ON}" \
    -DFDRILL_BUILD_TESTS="$extras" -DFDRILL_BUILD_BENCH="$extras" >/dev/null
  cmake --build build -j "$(nproc)" 2>&1 | grep -vE "^\[[0-9]+/[0-9]+\]|^ninja: no work to do" >&2 || true
  # A failed build must stop us; grep above only filters progress lines.
  cmake --build build -j "$(nproc)" >/dev/null
  echo "setup: built $(cat build/backends.txt | sed 's/^/backends: /') into build/bin/" >&2
}

# CUDA present but no NCCL backend = a broken build, not a skipped feature.
check_backends() {
  if [ -e /usr/local/cuda/include/nccl.h ] && ! grep -qw nccl build/backends.txt; then
    echo "setup: CUDA and NCCL are installed but the NCCL backend did not build" >&2
    exit 1
  fi
  if [ -e /usr/local/cuda/include/nccl.h ]; then
    build/bin/fdrill-collective --version | grep -qw nccl || {
      echo "setup: fdrill-collective --version does not list the nccl backend" >&2
      exit 1
    }
  fi
}
