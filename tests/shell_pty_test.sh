#!/usr/bin/env bash
# Drives the interactive tfprof> shell in a real terminal (tmux): the prompt,
# a command, Tab completion of commands and options, history recall with the
# Up arrow, the web UI started and stopped with Ctrl-C, the history file, and
# leaving with Ctrl-D.
# With a third argument (the gen_profile tool), Ctrl-C also stops a long
# query on a large generated profile and the shell carries on.
# Usage: shell_pty_test.sh TFPROF_BINARY PROFILE [GEN_PROFILE]
set -euo pipefail
bin=$(realpath "$1")
profile=$(realpath "$2")
gen=${3:+$(realpath "$3")}
# A short path: tmux's socket path must fit in a sockaddr_un.
work=$(mktemp -d /tmp/tfpty.XXXXXX)
export TMUX_TMPDIR="$work"
sock="tfprof_pty_$$"
t() { tmux -L "$sock" "$@"; }
cleanup() { t kill-server >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

fail() {
  echo "FAIL: $1"
  echo "--- screen ---"
  t capture-pane -p || true
  exit 1
}
# Up to 30 s: a busy 2-core machine loads the 200,000-node profile below in
# several seconds.
wait_for() {
  for _ in $(seq 1 300); do
    if t capture-pane -p | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  fail "timed out waiting for: $1"
}

type_text() { t send-keys -l -- "$1"; }

t new-session -d -x 220 -y 60 "$bin --profile_path=$profile; sleep 30"
wait_for "tfprof>"
wait_for "nodes:"

# Tab completes the command name and an option name.
type_text "sco"
t send-keys Tab
wait_for "tfprof> scope"
type_text "-max_dep"
t send-keys Tab
wait_for "tfprof> scope -max_depth"
type_text "1"
t send-keys Enter
wait_for "_TFProfRoot"

# An empty line prints the current options.
t send-keys Enter
wait_for "-account_displayed_op_only  false"

# Up recalls the last command.
t send-keys Up
wait_for "tfprof> scope -max_depth 1"
t send-keys C-u

# Errors are printed and the shell carries on.
type_text "scope -max_depth x"
t send-keys Enter
wait_for "E: invalid value 'x' for option -max_depth"

# Ctrl-C drops the line being typed; the shell stays.
type_text "scope -this_line_is_dropped"
t send-keys C-c
wait_for "^C"
type_text "op -select occurrence"
t send-keys Enter
wait_for "node name | op occurrence (run|defined)"
if t capture-pane -p | grep -q "this_line_is_dropped'"; then
  fail "the interrupted line was run"
fi

# `http` serves the web UI until Ctrl-C, then the shell carries on.
type_text "http 127.0.0.1:0"
t send-keys Enter
wait_for "Serving the web UI on http://127.0.0.1:"
url=$(t capture-pane -p | sed -n 's/.*Serving the web UI on \(http[^ ]*\).*/\1/p' | tail -1)
if command -v curl >/dev/null; then
  # (Not piped into grep -q: with pipefail, grep leaving early fails curl.)
  info=$(curl -sf "${url}api/info") || fail "the web UI's API did not answer at $url"
  grep -q '"input_flags"' <<<"$info" || fail "the web UI's API answered without input_flags"
fi
t send-keys C-c
wait_for "web UI stopped"
type_text "scope -max_depth 1 -select params"
t send-keys Enter
wait_for "node name | # parameters"

# Ctrl-D leaves; the history was saved line by line.
t send-keys C-d
for _ in $(seq 1 50); do
  [[ -f .tfprof_history.txt ]] && grep -q "scope -max_depth 1" .tfprof_history.txt && break
  sleep 0.1
done
grep -q "scope -max_depth 1" .tfprof_history.txt || fail "history file"

if [[ -n "$gen" ]]; then
  # Ctrl-C during a long query (the code view of 200,000 nodes with 4-frame
  # call stacks) stops it; the next command runs.
  "$gen" "$work/big" --nodes=200000 --steps=1 >/dev/null
  t kill-server >/dev/null 2>&1 || true
  sock="${sock}_big"  # a fresh server
  t new-session -d -x 220 -y 60 "$bin --profile_path=$work/big; sleep 30"
  wait_for "tfprof>"
  wait_for "nodes:"
  # The query takes under a second on an idle machine: Ctrl-C after ever
  # shorter delays until one lands while it runs (a Ctrl-C after it ended
  # shows "tfprof> ^C" at the next prompt). The whole line is on screen
  # before Enter (a Ctrl-C while a busy machine still echoes it would only
  # drop the line).
  interrupted=false
  for delay in 0.3 0.1 0.03 0.01 0; do
    # A clear screen: what an earlier try left is not read as this one's.
    t send-keys -R
    t clear-history
    type_text "code -max_depth 100 -select micros,bytes,params,float_ops"
    wait_for "code -max_depth 100 -select micros,bytes,params,float_ops"
    t send-keys Enter
    sleep "$delay"
    t send-keys C-c
    for _ in $(seq 1 300); do
      screen=$(t capture-pane -p)
      if grep -qF "query interrupted" <<<"$screen"; then
        interrupted=true
        break
      fi
      if grep -q 'tfprof> ^C' <<<"$screen"; then break; fi
      sleep 0.1
    done
    $interrupted && break
  done
  $interrupted || fail "Ctrl-C never interrupted the code query"
  type_text "op -max_depth 2 -select occurrence"
  t send-keys Enter
  wait_for "node name | op occurrence (run|defined)"
  t send-keys C-d
fi
echo "interactive shell: 1 passed, 0 failed"
