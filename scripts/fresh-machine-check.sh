#!/usr/bin/env bash
# The README's two commands on a machine that has nothing: builds a minimal
# Debian 12 root (debootstrap --variant=minbase, from the Debian mirror this
# machine's apt uses), puts a clean clone of this repository's HEAD in it,
# and runs, as root inside it, exactly the README's commands: `./demo.sh`,
# then `./test.sh`. Prints pass/fail and the wall time of each step; exit 0
# only when both passed.
#
#   scripts/fresh-machine-check.sh [--keep] [--root DIR] [--lock FILE] [-- CTEST_ARGS...]
#
# Needs root (chroot, mounts; the e2e tests build network namespaces inside
# it) and about 6 GiB in DIR (default /var/tmp/fdrill-fresh-<pid>). Takes
# about 45 minutes on 2 cores: ~5 to bootstrap, the rest is test.sh from a
# clean clone. The chroot shares this machine's kernel, so it is "fresh" in
# its files and packages, not its kernel. Everything it mounted is unmounted
# and the root deleted on any exit (--keep keeps the root for a look).
# CTEST_ARGS after -- go to test.sh (`-- -L unit` for a quicker look); the
# check then says it ran a subset. The emulated fabric's management bridge
# (fdm-br, 198.19.0.254/24) lives in the root network namespace, which the
# root shares with this machine: --lock FILE takes flock(1) on FILE for the
# two commands, so other fabric users on this machine (e2e tests run under
# the same lock) take turns with it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# The packages this script itself needs (common/host/programs.cc: kScript).
CHECK_PACKAGES=(
  debootstrap
)

keep=0
lock=""
root=/var/tmp/fdrill-fresh-$$
test_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --root) root="$2"; shift ;;
    --lock) lock="$2"; shift ;;
    --) shift; test_args=("$@"); break ;;
    *) echo "fresh-machine-check: unknown argument '$1' (use --keep, --root DIR, --lock FILE, -- CTEST_ARGS)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine-check: needs root (debootstrap, chroot, mounts)" >&2
  exit 2
fi
if [ -e "$root" ]; then
  echo "fresh-machine-check: $root already exists; pass another --root or remove it" >&2
  exit 2
fi

missing=()
for p in "${CHECK_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The mirror apt uses here (deb822 .sources first, then a one-line list).
mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -m1 '/debian/\?$' || true)
[ -n "$mirror" ] || mirror=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
  awk '{print $2}' | grep -m1 '/debian/\?$' || true)
mirror=${mirror:-http://deb.debian.org/debian}

mounts=()
cleanup() {
  local rc=$?
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  if [ "$keep" = 1 ]; then
    echo "fresh-machine-check: root kept at $root" >&2
  else
    rm -rf --one-file-system "$root"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s; }
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
log=$(mktemp /tmp/fdrill-fresh.XXXXXX.log)
echo "fresh-machine-check: log in $log" >&2

t0=$(now)
echo "fresh-machine-check: debootstrap bookworm (minbase) from $mirror into $root" >&2
mkdir -p "$root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >>"$log" 2>&1
t_boot=$(($(now) - t0))

# apt inside sees what apt here sees: the same sources and settings.
rm -f "$root/etc/apt/sources.list"
cp -a /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/" 2>/dev/null || true
[ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/"
for f in /etc/apt/apt.conf.d/*; do
  grep -qs 'Check-Valid-Until\|Check-Date\|Proxy' "$f" && cp "$f" "$root/etc/apt/apt.conf.d/"
done
find "$root/etc/apt/sources.list.d" -name '*disabled*' -delete
cp /etc/resolv.conf "$root/etc/resolv.conf"

# A clean clone of HEAD: tracked files only, nothing built.
git clone -q --no-hardlinks "$repo" "$root/root/fdrill"

mnt() {  # mnt TYPE-OR-BIND SOURCE TARGET
  mkdir -p "$3"
  # shellcheck disable=SC2086 # SOURCE may carry -o options
  if [ "$1" = bind ]; then mount --rbind "$2" "$3"; mount --make-rslave "$3"; else mount -t "$1" $2 "$3"; fi
  mounts+=("$3")
}
# The root must be a mount point of its own, as / is on a machine: `ip
# netns exec` (and `ip -n`) run `mount --make-rslave /` in the namespace they
# enter, which fails with EINVAL on a plain directory.
mount --bind "$root" "$root"
mounts+=("$root")
mnt proc proc "$root/proc"
mnt bind /sys "$root/sys"
mnt bind /dev "$root/dev"
# /run as a booted machine has it (systemd mounts it 0755): sshd refuses
# an authorized_keys path under a world-writable directory (StrictModes).
mnt tmpfs "tmpfs -o mode=0755" "$root/run"
mnt tmpfs tmpfs "$root/tmp"

in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "cd /root/fdrill && $1"
}

result() { [ "$1" -eq 0 ] && echo pass || echo "FAIL (exit $1)"; }

if [ -n "$lock" ]; then
  echo "fresh-machine-check: waiting for $lock" >&2
  exec 9>"$lock"
  flock 9
fi

t1=$(now)
echo "fresh-machine-check: ./demo.sh" >&2
set +e
in_root './demo.sh' >>"$log" 2>&1
demo_rc=$?
t_demo=$(($(now) - t1))

t2=$(now)
echo "fresh-machine-check: ./test.sh ${test_args[*]}" >&2
in_root "./test.sh ${test_args[*]}" >>"$log" 2>&1
test_rc=$?
t_test=$(($(now) - t2))
set -e
in_root 'build/bin/fdrill fabric down' >>"$log" 2>&1 || true

summary=$(grep -E '^[0-9]+% tests passed|tests failed out of' "$log" | tail -1 || true)
echo "fresh-machine-check: debootstrap $(mmss "$t_boot")"
echo "fresh-machine-check: ./demo.sh  $(result $demo_rc) in $(mmss "$t_demo") (install + first build + drill)"
echo "fresh-machine-check: ./test.sh  $(result $test_rc) in $(mmss "$t_test")${test_args[*]:+ (subset: ${test_args[*]})}${summary:+: $summary}"
echo "fresh-machine-check: log $log"
[ "$demo_rc" -eq 0 ] && [ "$test_rc" -eq 0 ]
