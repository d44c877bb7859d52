#!/usr/bin/env bash
# `check -output junit` read by a real JUnit consumer (Debian's
# python3-junitparser): one test case per condition, the failures those
# tfprof reported, and exit status 3 for the failed gates. The run compares
# the shiyudian run's profile_100 with profile_0 as its base.
set -euo pipefail
tfprof=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=$root/testdata/corpus/shiyudian-resnet-tf-dist
set +e
"$tfprof" --profile_path="$runs/profile_100" \
  --base_profile_path="$runs/profile_0" \
  check 'micros<=base*1.05' 'params<=base' 'micros[no_such_op]<1ms' \
  'micros[no_such_op]?<1ms' -output "junit:outfile=$dir/report.xml" \
  >"$dir/out.txt" 2>"$dir/err.txt"
rc=$?
set -e
if [[ $rc != 3 ]]; then
  echo "expected exit status 3 (a gate failed), got $rc" >&2
  cat "$dir/err.txt" >&2
  exit 1
fi
# Debian's Python, where python3-junitparser is installed.
/usr/bin/python3 - "$dir/report.xml" "$dir/out.txt" <<'PYEOF'
import sys
from junitparser import JUnitXml, Failure

xml = JUnitXml.fromfile(sys.argv[1])
suites = list(xml)
assert len(suites) == 1, suites
cases = list(suites[0])
names = [c.name for c in cases]
assert names == ["micros<=base*1.05", "params<=base",
                 "micros[no_such_op]<1ms", "micros[no_such_op]?<1ms"], names
failed = [c.name for c in cases
          if any(isinstance(r, Failure) for r in c.result)]
assert failed == ["micros<=base*1.05", "micros[no_such_op]<1ms"], failed
assert suites[0].tests == 4 and suites[0].failures == 2
# The failure messages are the lines tfprof printed.
printed = [l for l in open(sys.argv[2]).read().splitlines()
           if l.startswith("FAIL")]
messages = [r.message for c in cases for r in c.result
            if isinstance(r, Failure)]
assert messages == printed, (messages, printed)
print("junit report: 4 test cases, 2 failures, as tfprof printed them")
PYEOF
