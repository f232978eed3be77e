#!/usr/bin/env bash
# fdrill-agent --config: the shipped packaging/agent.conf parses (no root, no
# TLS files), its settings reach the agent and flags win over them; a
# missing, unreadable or invalid file is exit 2 with an error naming it.
# Uses --revert-all on empty temp state dirs, which touches nothing else.
#
#   agent_config_test.sh FDRILL_AGENT packaging/agent.conf
set -euo pipefail

agent=$1
shipped=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/fdrill-agent-config.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "agent_config_test: FAIL: $*" >&2
  exit 1
}

# expect_error NAME TEXT ARGS...: the agent exits 2 and stderr holds TEXT.
expect_error() {
  local name=$1 text=$2 rc=0
  shift 2
  "$agent" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" = 2 ] || fail "$name: exit $rc, want 2 (stderr: $(cat "$work/err"))"
  grep -qF -- "$text" "$work/err" || fail "$name: stderr lacks '$text': $(cat "$work/err")"
}

# The shipped file, as is: every key in it is one the agent knows.
"$agent" --config "$shipped" --help >"$work/help" 2>"$work/err" || fail "--help with $shipped: $(cat "$work/err")"
grep -qF -- '--config' "$work/help" || fail "--help does not list --config"

# Its commented examples, uncommented, parse too (an operator's first edit).
sed -E 's/^# (listen|node|allow) = /\1 = /' "$shipped" >"$work/edited.conf"
[ "$(grep -cE '^(listen|node|allow) = ' "$work/edited.conf")" = 3 ] || fail "$shipped lacks the listen, node, allow examples"
"$agent" --config "$work/edited.conf" --help >/dev/null 2>"$work/err" || fail "the examples in $shipped: $(cat "$work/err")"

# The shipped file with only its state-dir moved: its settings are applied.
sed "s|^state-dir = .*|state-dir = \"$work/from-file\"|" "$shipped" >"$work/agent.conf"
grep -q "^state-dir = \"$work/from-file\"" "$work/agent.conf" || fail "$shipped has no uncommented state-dir line"
"$agent" --config "$work/agent.conf" --revert-all >"$work/out" 2>"$work/err" || fail "--revert-all: $(cat "$work/err")"
[ -d "$work/from-file" ] || fail "state-dir from the file was not used"
grep -q "reverted 0 fault(s)" "$work/out" || fail "--revert-all said: $(cat "$work/out")"

# A flag wins over the file.
"$agent" --config "$work/agent.conf" --state-dir "$work/from-flag" --revert-all >"$work/out" 2>"$work/err" ||
  fail "--state-dir over --config: $(cat "$work/err")"
[ -d "$work/from-flag" ] || fail "the --state-dir flag did not win over the file"

# Missing, unreadable (a directory), unknown key, bad value, a one-shot flag.
expect_error missing "--config $work/absent.conf:" --config "$work/absent.conf" --revert-all
expect_error unreadable "--config $work:" --config "$work" --revert-all
printf 'state-dir = "%s/x"\nlisten-port = 7100\n' "$work" >"$work/unknown.conf"
expect_error unknown-key "--config $work/unknown.conf: INI was not able to parse listen-port" \
  --config "$work/unknown.conf" --revert-all
printf 'state-dir = "%s/x"\nfake-agents = many\n' "$work" >"$work/bad-value.conf"
expect_error bad-value "(flags and --config $work/bad-value.conf)" --config "$work/bad-value.conf" --revert-all
printf 'state-dir = "%s/x"\nrevert-all = true\n' "$work" >"$work/one-shot.conf"
expect_error one-shot "--config $work/one-shot.conf: revert-all: This option is not allowed in a configuration file" \
  --config "$work/one-shot.conf"
[ ! -e "$work/x" ] || fail "an agent with a bad config file went ahead"

echo "agent_config_test: ok"
