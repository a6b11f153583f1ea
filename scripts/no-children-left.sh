#!/usr/bin/env bash
# After the test suite: no screenpub, screenrelay or screensub of this build (BIN_DIR) may still run — every
# child a test starts ends with that test. Silent when none is left; else lists them, stops them, and fails.
set -uo pipefail
bin_dir=${1:?usage: no-children-left.sh BIN_DIR}
sleep 1
left=$(pgrep -a -f "^$bin_dir/(screenpub|screenrelay|screensub)( |$)" || true)
[ -z "$left" ] && exit 0
echo "no-children-left.sh: these processes of the test run outlived it:" >&2
echo "$left" >&2
echo "$left" | awk '{print $1}' | xargs -r kill -9 2>/dev/null
exit 1
