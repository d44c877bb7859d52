#!/usr/bin/env bash
# A real consumer reads tfprof's pprof files: `go tool pprof` (Debian's
# golang-go) opens the gzipped profiles that `-output pprof:outfile=...`
# writes for the code and scope views of corpus inputs, and what it prints
# must agree with tfprof's own JSON result (`-output json`) of the same query:
#   * `-top -sample_index=1 -unit=us|B`: the "of X total" in the header;
#   * `-raw`: every sample as exact integers (their sum; their count against
#     the count tfprof reports; for the scope view each sample against its
#     node's self value, and every displayed node with a value has a sample);
#   * `-traces`: each sample's stack against the displayed tree path;
#   * `-http` (two files): the root value of the flame graph page.
# The expected total is the one the pprof layout defines (g3doc/outputs.md):
#   scope view: the sum of `self` over the displayed nodes; when the whole
#     tree is displayed that is the root's total (also asserted);
#   code view: the sum of `total` over the displayed leaves, given that no
#     graph node is created on an intermediate code line (pprof_check.js
#     verifies this on the full tree of the same input); at full depth that
#     is the root's total (also asserted).
# Negative self-checks: a wrong total, a changed sample, the JSON of another
# profile, a truncated file and gzipped garbage must all be caught.
#
# Usage: pprof_consumer_test.sh TFPROF_BINARY
# Inputs: the bundled real profiles in testdata/corpus. Needs go (fails
# without it: scripts/setup_consumers.sh installs golang-go), node and curl.
set -euo pipefail

die() {
  echo "pprof_consumer_test: FAIL: $*" >&2
  exit 1
}

[[ $# -ge 1 ]] || die "usage: $0 TFPROF_BINARY"
bin=$(realpath "$1")
[[ -x "$bin" ]] || die "tfprof binary $1 is not executable"
here=$(dirname "$(realpath "$0")")
repo=$(realpath "$here/../..")
# The real inputs bundled with the sources.
corpus=$repo/testdata/corpus
[[ -d "$corpus" ]] || die "bundled inputs not found at $corpus"
command -v go >/dev/null || die "go is not installed (apt-get install golang-go, or scripts/setup_consumers.sh)"
command -v node >/dev/null || die "node is not installed"
command -v curl >/dev/null || die "curl is not installed"

tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tfprof_pprof.XXXXXX")
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# go tool pprof never needs the network here: local files, no symbolization.
export HOME=${HOME:-$tmp}
export GOCACHE=${GOCACHE:-$tmp/gocache}
export PPROF_TMPDIR=$tmp
export GOTOOLCHAIN=local GOPROXY=off
pprof_bin=$(go tool -n pprof) || die "go tool pprof is not available"
pprof() { "$pprof_bin" -symbolize=none "$@"; }
echo "pprof_consumer_test: $(go version), $pprof_bin"

declare -A INPUT
INPUT[profile_0]="--profile_path=$corpus/shiyudian-resnet-tf-dist/profile_0"
INPUT[profile_100]="--profile_path=$corpus/shiyudian-resnet-tf-dist/profile_100"
INPUT[tf-testdata]="--graph_path=$corpus/tf-testdata/current/graph.pbtxt
--run_meta_path=$corpus/tf-testdata/current/run_meta
--op_log_path=$corpus/tf-testdata/current/tfprof_log"
input_args() { mapfile -t _args <<<"${INPUT[$1]}"; }

# The cases: INPUT VIEW SELECT ROOTMODE [QUERY OPTIONS...]
#   ROOTMODE root: the whole tree is displayed, so pprof's total must also
#   be the root's total; part: a filtered or truncated display, where only
#   the layout's sum applies.
cases=()
add() { cases+=("$*"); }
for sel in micros bytes params float_ops; do
  add tf-testdata scope "$sel" root
  add profile_0 scope "$sel" root
  add profile_0 code "$sel" root
done
for sel in micros accelerator_micros cpu_micros bytes peak_bytes residual_bytes output_bytes float_ops; do
  add profile_100 scope "$sel" root
  add profile_100 code "$sel" root
done
add tf-testdata scope accelerator_micros root
add tf-testdata scope cpu_micros root
add profile_100 code micros root -step 0
add profile_100 scope micros root -min_micros 10 -account_displayed_op_only true
add profile_100 scope micros part -max_depth 3
add profile_0 scope micros part -min_micros 10
add tf-testdata scope bytes part -min_bytes 1000
add profile_100 code micros part -max_depth 6
add profile_0 code micros part -min_micros 10
add profile_100 code float_ops part -account_type_regexes 'Conv2D.*'

# Phase 1: one tfprof run per input writes every case's pprof file and JSON
# (and, for the code view, the full tree's JSON of that attribute).
declare -A script_of
for i in "${!cases[@]}"; do
  read -ra c <<<"${cases[$i]}"
  d="$tmp/c$i"
  mkdir -p "$d"
  q="${c[1]} -max_depth 100 ${c[*]:4} -select ${c[2]}"
  script_of[${c[0]}]+="$q -output pprof:outfile=$d/p.pb.gz"$'\n'
  script_of[${c[0]}]+="$q -output json:outfile=$d/q.json"$'\n'
  if [[ ${c[1]} == code ]]; then
    full="$tmp/full_${c[0]}_${c[2]}.json"
    if [[ "${script_of[${c[0]}]}" != *"outfile=$full"* ]]; then
      script_of[${c[0]}]+="code -max_depth 1000 -select ${c[2]} -output json:outfile=$full"$'\n'
    fi
  fi
done
for inp in "${!script_of[@]}"; do
  printf '%s' "${script_of[$inp]}" >"$tmp/$inp.script"
  input_args "$inp"
  "$bin" "${_args[@]}" --keep_going --script="$tmp/$inp.script" >"$tmp/$inp.log" 2>"$tmp/$inp.err" ||
    echo "note: tfprof reported errors for $inp: $(grep -v coverage "$tmp/$inp.err" | head -3)"
done

passed=0
failed=0
indent() { sed -n "s/^/    /;1,${1}p"; } # indent N: the first N lines of stdin, indented
pass() {
  echo "ok: $*"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
unit_of() {
  case $1 in
    *micros) echo us ;;
    *bytes) echo B ;;
    *) echo "" ;;
  esac
}

# Phase 2: go tool pprof reads each file; pprof_check.js compares.
for i in "${!cases[@]}"; do
  read -ra c <<<"${cases[$i]}"
  inp=${c[0]} view=${c[1]} sel=${c[2]} mode=${c[3]}
  name="$view $sel $inp${c[4]:+ ${c[*]:4}}"
  d="$tmp/c$i"
  if [[ ! -s "$d/p.pb.gz" || ! -s "$d/q.json" ]]; then
    fail "$name: tfprof wrote no pprof file or JSON ($(grep -v coverage "$tmp/$inp.err" | head -2))"
    continue
  fi
  samples=$(sed -n "s|.*written to $d/p.pb.gz (\([0-9]*\) samples).*|\1|p" "$tmp/$inp.log")
  u=$(unit_of "$sel")
  if ! pprof -top -sample_index=1 ${u:+-unit=$u} "$d/p.pb.gz" >"$d/top" 2>"$d/top.err" ||
    ! pprof -raw "$d/p.pb.gz" >"$d/raw" 2>"$d/raw.err" ||
    ! pprof -traces -sample_index=1 "$d/p.pb.gz" >"$d/traces" 2>"$d/traces.err"; then
    fail "$name: go tool pprof rejected the file: $(cat "$d"/*.err | head -3)"
    continue
  fi
  if [[ -s "$d/top.err" || -s "$d/raw.err" || -s "$d/traces.err" ]]; then
    fail "$name: go tool pprof warned: $(cat "$d"/*.err | head -3)"
    continue
  fi
  check=(--view "$view" --select "$sel" --json "$d/q.json" --top "$d/top" --raw "$d/raw"
    --traces "$d/traces")
  if [[ -z "$samples" ]]; then
    fail "$name: tfprof did not report '... written to $d/p.pb.gz (N samples)'"
    continue
  fi
  check+=(--samples "$samples")
  [[ $mode == root ]] && check+=(--expect-root)
  [[ $view == code ]] && check+=(--full-json "$tmp/full_${inp}_${sel}.json")
  if out=$(node "$here/pprof_check.js" "${check[@]}"); then
    pass "$name: $out"
  else
    fail "$name:"
    indent 20 <<<"$out"
  fi
done

# The tf-testdata op log has no Python call stacks, so no code-view profile.
input_args tf-testdata
if "$bin" "${_args[@]}" code -select micros -output "pprof:outfile=$tmp/none.pb.gz" >/dev/null 2>&1; then
  fail "code view of tf-testdata (no call stacks) wrote a pprof file"
else
  pass "code view of tf-testdata (no call stacks) is refused"
fi

# pprof's web UI (-http): the flame graph's root is the same total.
free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
http_case() { # http_case CASE_INDEX
  local i=$1 c d port ok=0 out
  read -ra c <<<"${cases[$i]}"
  d="$tmp/c$i"
  for _ in 1 2 3; do # another process may take the free port first
    port=$(free_port)
    # The binary itself in the background (not the pprof function, whose
    # subshell would leave the server running when killed).
    "$pprof_bin" -symbolize=none -no_browser -http="127.0.0.1:$port" "$d/p.pb.gz" >"$d/http.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
      if curl -sf -o "$d/flame.html" "http://127.0.0.1:$port/ui/flamegraph?si=${c[2]}"; then
        ok=1
        break
      fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    [[ $ok == 1 ]] && break
  done
  if [[ $ok != 1 ]]; then
    fail "${cases[$i]}: go tool pprof -http served no flame graph: $(head -3 "$d/http.log")"
    return
  fi
  local check=(--view "${c[1]}" --select "${c[2]}" --json "$d/q.json" --top "$d/top" --raw "$d/raw"
    --flame "$d/flame.html" --expect-root)
  [[ ${c[1]} == code ]] && check+=(--full-json "$tmp/full_${c[0]}_${c[2]}.json")
  if out=$(node "$here/pprof_check.js" "${check[@]}"); then
    pass "${c[1]} ${c[2]} ${c[0]} (-http flame graph): $out"
  else
    fail "${c[1]} ${c[2]} ${c[0]} (-http flame graph):"
    indent 20 <<<"$out"
  fi
}
for i in "${!cases[@]}"; do
  case "${cases[$i]}" in
    "tf-testdata scope micros root" | "profile_0 code micros root") http_case "$i" ;;
  esac
done

# Negative self-checks: the comparison must be able to fail.
neg() { # neg NAME COMMAND... : the command must fail
  local name=$1
  shift
  if "$@" >"$tmp/neg.out" 2>&1; then
    fail "self-check '$name' was not caught: $(head -3 "$tmp/neg.out")"
  else
    pass "self-check '$name' caught: $(head -1 "$tmp/neg.out")"
  fi
}
for i in "${!cases[@]}"; do
  [[ "${cases[$i]}" == "profile_0 scope micros root" ]] && good="$tmp/c$i"
  [[ "${cases[$i]}" == "profile_100 scope micros root" ]] && other="$tmp/c$i"
done
d="$tmp/neg"
mkdir -p "$d"
total=$(sed -n 's/.* of \([0-9]*\)us total$/\1/p' "$good/top")
sed "s/ of ${total}us total\$/ of $((total + 1))us total/" "$good/top" >"$d/top_wrong"
cmp -s "$good/top" "$d/top_wrong" && die "self-check setup: could not alter the -top total"
awk '!done && /^ +1 +[0-9]+:/ && $2 + 0 > 0 { sub(/[0-9]+:/, ($2 + 1) ":"); done = 1 } { print }' \
  "$good/raw" >"$d/raw_wrong"
cmp -s "$good/raw" "$d/raw_wrong" && die "self-check setup: could not alter a -raw sample"
check=(node "$here/pprof_check.js" --view scope --select micros)
neg "wrong -top total" "${check[@]}" --json "$good/q.json" --top "$d/top_wrong" --raw "$good/raw"
neg "changed sample value" "${check[@]}" --json "$good/q.json" --top "$good/top" --raw "$d/raw_wrong"
neg "JSON of another profile" "${check[@]}" --json "$other/q.json" --top "$good/top" --raw "$good/raw"
head -c 2000 "$good/p.pb.gz" >"$d/truncated.pb.gz"
neg "truncated pprof file" pprof -top "$d/truncated.pb.gz"
printf 'not a profile' | gzip >"$d/garbage.pb.gz"
neg "gzipped garbage" pprof -top "$d/garbage.pb.gz"

echo "pprof_consumer_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
