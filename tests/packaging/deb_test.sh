#!/usr/bin/env bash
# The fdrill .deb, end to end: cpack builds it from BUILD_DIR into a temp dir;
# its file list, control fields, conffiles and maintainer scripts are checked;
# it is unpacked and its binaries run from there. As root it is also
# installed with dpkg -i, checked in place, and purged (on failure too),
# leaving the system as found; it refuses, instead of purging, when fdrill is
# already installed or its paths are already taken. Not root: the install part
# is skipped and says so.
#
#   deb_test.sh BUILD_DIR VERSION bindir=... scenariodir=... docdir=... \
#       unitdir=... config=... statedir=... mandir=...
# (tests/packaging/CMakeLists.txt passes the layout packaging/CMakeLists.txt
# installs.) Needs the five programs built; cpack re-runs the install step.
set -euo pipefail

build=$1
version=$2
shift 2
declare -A at
for kv in "$@"; do at[${kv%%=*}]=${kv#*=}; done
for key in bindir scenariodir docdir unitdir config statedir mandir; do
  [ -n "${at[$key]:-}" ] || { echo "deb_test: usage: missing $key=PATH" >&2; exit 2; }
done
programs=(fdrill fdrill-agent fdrill-burn fdrill-collective fdrill-train-ref)

fail() {
  echo "deb_test: FAIL: $*" >&2
  exit 1
}

# verify_unit FILE: systemd-analyze verify passes it without a word (it exits
# 0 on unknown keys and bad values, and only prints them).
verify_unit() {
  if systemd-analyze verify "$1" >"$work/verify.log" 2>&1 && [ ! -s "$work/verify.log" ]; then
    return 0
  fi
  cat "$work/verify.log" >&2
  fail "systemd-analyze verify $1"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/fdrill-deb-test.XXXXXX")
installed=0
cleanup() {
  local rc=$?
  if [ "$installed" = 1 ]; then
    echo "deb_test: purging the fdrill package this test installed" >&2
    dpkg --purge fdrill >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; rc=1; }
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

# --- build ------------------------------------------------------------------
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log" >&2
  fail "cpack -G DEB failed"
fi
debs=("$work"/out/fdrill_"$version"_*.deb)
[ -f "${debs[0]}" ] || fail "cpack wrote no fdrill_${version}_<arch>.deb: $(ls "$work/out")"
deb=${debs[0]}
echo "deb_test: built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# --- contents ---------------------------------------------------------------
# "-rwxr-xr-x root/root 123 2026-01-01 00:00 ./usr/bin/fdrill" -> "/usr/bin/fdrill"
dpkg-deb -c "$deb" | awk '{print $6}' | sed -e 's|^\./|/|' -e 's|/$||' | sort >"$work/files"
expect_file() { grep -qxF "$1" "$work/files" || fail "the package lacks $1"; }
for p in "${programs[@]}"; do expect_file "${at[bindir]}/$p"; done
for f in quickstart.yaml partition.yaml cluster.hosts README.md; do expect_file "${at[scenariodir]}/$f"; done
for f in README.md docs/reference/formats.md docs/reference/summary-json.md docs/guide/04-real-cluster.md workloads.md packaging.md; do expect_file "${at[docdir]}/$f"; done
for f in man1/fdrill.1.gz man8/fdrill-agent.8.gz man5/fdrill-scenario.5.gz; do expect_file "${at[mandir]}/$f"; done
expect_file "${at[unitdir]}/fdrill-agent.service"
expect_file "${at[config]}"
expect_file "${at[statedir]}"
# Exactly the five programs: no test, benchmark or fuzz binary.
extra=$(grep "^${at[bindir]}/." "$work/files" | grep -vxF -f <(printf "${at[bindir]}/%s\n" "${programs[@]}") || true)
[ -z "$extra" ] || fail "unexpected programs in ${at[bindir]}: $extra"
! grep -qE '_test$|/bench|fuzz' "$work/files" || fail "tests, benchmarks or fuzz targets packaged: $(grep -E '_test$|/bench|fuzz' "$work/files")"
statedir_mode=$(dpkg-deb -c "$deb" | awk -v d="./${at[statedir]#/}/" '$6 == d {print $1}')
[ "$statedir_mode" = "drwxr-x---" ] || fail "${at[statedir]} is $statedir_mode in the package, want drwxr-x---"

# --- control ----------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = fdrill ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), want $version"
[ "$(field Section)" = admin ] || fail "Section: $(field Section)"
[ "$(field Maintainer)" = "fdrill team <fdrill@localhost>" ] || fail "Maintainer: $(field Maintainer)"
depends=$(field Depends)
# "a, b (>= 1)" -> one package name a line
dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/^ *//' -e 's/ .*//' >"$work/depends"
for dep in iproute2 iptables procps openmpi-bin libc6 libstdc++6 libibverbs1; do
  # libc6, libstdc++6 and libibverbs1 (fdrill-agent) come from
  # dpkg-shlibdeps: proof that it ran.
  grep -qxF "$dep" "$work/depends" || fail "Depends lacks $dep: $depends"
done
[ "$(dpkg-deb -I "$deb" conffiles)" = "${at[config]}" ] || fail "conffiles: '$(dpkg-deb -I "$deb" conffiles)'"
dpkg-deb -I "$deb" >"$work/info"
for script in postinst prerm postrm; do
  # dpkg-deb -I marks an executable control member with '*'.
  grep -qE "\*[[:space:]]+${script}[[:space:]]" "$work/info" || fail "$script missing or not executable"
done

# --- unpacked ---------------------------------------------------------------
root=$work/root
dpkg-deb -x "$deb" "$root"
[ "$("$root${at[bindir]}/fdrill" --version)" = "fdrill $version" ] || fail "fdrill --version: $("$root${at[bindir]}/fdrill" --version)"
[ "$("$root${at[bindir]}/fdrill-agent" --version)" = "fdrill-agent $version" ] ||
  fail "fdrill-agent --version: $("$root${at[bindir]}/fdrill-agent" --version)"
collective=$("$root${at[bindir]}/fdrill-collective" --version)
[[ "$collective" == "fdrill-collective $version (backends: "*")" ]] || fail "fdrill-collective --version: $collective"
"$root${at[bindir]}/fdrill-agent" --config "$root${at[config]}" --help >"$work/help" ||
  fail "fdrill-agent does not parse the packaged ${at[config]}"
grep -q -- '--config' "$work/help" || fail "fdrill-agent --help does not list --config"
unit=$root${at[unitdir]}/fdrill-agent.service
grep -qx "ExecStart=${at[bindir]}/fdrill-agent --config ${at[config]}" "$unit" || fail "ExecStart in $unit: $(grep ExecStart "$unit")"
grep -qx "ExecStopPost=${at[bindir]}/fdrill-agent --config ${at[config]} --revert-all" "$unit" ||
  fail "ExecStopPost in $unit: $(grep ExecStopPost "$unit")"
if command -v systemd-analyze >/dev/null; then
  # The unit as packaged, its programs looked up in the unpacked tree.
  sed "s|^\(Exec[A-Za-z]*=\)${at[bindir]}/|\1$root${at[bindir]}/|" "$unit" >"$work/fdrill-agent.service"
  verify_unit "$work/fdrill-agent.service"
else
  echo "deb_test: no systemd-analyze here: the unit was not verified"
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deb_test: not root: the install part (dpkg -i, checks in place, dpkg --purge) was skipped"
  exit 0
fi

# --- installed (root) -------------------------------------------------------
# Status-Abbrev: desired, status ("ii", "rc": removed, conffiles kept), error.
if status=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' fdrill 2>/dev/null) && [ "${status:1:1}" != n ]; then
  fail "a fdrill package is already on this machine ($status); this test installs and purges its own build" \
    "and will not touch it: remove it (dpkg --purge fdrill) or run the test as a non-root user"
fi
for p in "${at[config]}" "${at[statedir]}" "${at[unitdir]}/fdrill-agent.service" "${at[bindir]}/fdrill-agent"; do
  [ ! -e "$p" ] || fail "$p already exists and purging the package would remove it; move it away first"
done
etc_dir=$(dirname "${at[config]}")
etc_was_there=0
[ -e "$etc_dir" ] && etc_was_there=1
# deb-systemd-helper's record of the unit (postinst update-state; purged in postrm).
dsh_state=(/var/lib/systemd/deb-systemd-helper-*/fdrill-agent.service*)
dsh_was_there=0
[ -e "${dsh_state[0]}" ] && dsh_was_there=1

installed=1
if ! dpkg -i "$deb" >"$work/install.log" 2>&1; then
  cat "$work/install.log" >&2
  fail "dpkg -i $(basename "$deb")"
fi
[ "$("${at[bindir]}/fdrill" --version)" = "fdrill $version" ] || fail "installed fdrill --version"
"${at[bindir]}/fdrill-agent" --config "${at[config]}" --help >/dev/null || fail "installed agent rejects ${at[config]}"
[ -f "${at[unitdir]}/fdrill-agent.service" ] || fail "no ${at[unitdir]}/fdrill-agent.service"
[ -d "${at[statedir]}" ] || fail "no ${at[statedir]}"
[ "$(stat -c %a "${at[statedir]}")" = 750 ] || fail "${at[statedir]} mode $(stat -c %a "${at[statedir]}")"
dpkg-query -W -f='${Conffiles}\n' fdrill >"$work/conffiles"
grep -q "^ ${at[config]} " "$work/conffiles" || fail "dpkg does not hold ${at[config]} as a conffile"
if command -v systemd-analyze >/dev/null; then
  verify_unit "${at[unitdir]}/fdrill-agent.service"  # as installed, with the installed programs
fi

installed=0
dpkg --purge fdrill >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg --purge fdrill"; }
for p in "${at[config]}" "${at[statedir]}" "${at[unitdir]}/fdrill-agent.service" "${at[bindir]}/fdrill-agent"; do
  [ ! -e "$p" ] || fail "$p is still there after dpkg --purge"
done
[ "$etc_was_there" = 1 ] || [ ! -e "$etc_dir" ] || fail "$etc_dir is still there after dpkg --purge"
dsh_state=(/var/lib/systemd/deb-systemd-helper-*/fdrill-agent.service*)
[ "$dsh_was_there" = 1 ] || [ ! -e "${dsh_state[0]}" ] || fail "deb-systemd-helper state left behind: ${dsh_state[*]}"
echo "deb_test: installed, checked and purged $(basename "$deb")"
