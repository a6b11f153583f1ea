#!/usr/bin/env bash
# The one release build of this package, shared by `make demo`, the .deb (`make deb`, which `make test` makes)
# and the benchmarks: the Swift runtime linked in statically, as the .deb ships it. Built with other flags, each
# of them would compile everything again (4–5 minutes on two cores).
#
#   scripts/release-build.sh PRODUCT...   builds the products (quiet unless it fails), prints their directory
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
flags=(-c release --static-swift-stdlib)
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
# One product per invocation: `swift build` honours only the last --product it is given.
for product in "$@"; do
  if ! $SWIFT build "${flags[@]}" --product "$product" >"$build_log" 2>&1; then
    grep -vE '^\[|^Building|^Compiling|^Write|^Emitting' "$build_log" >&2
    echo "release-build.sh: building $product failed" >&2
    exit 1
  fi
  [ -x "$($SWIFT build "${flags[@]}" --show-bin-path)/$product" ] || { echo "release-build.sh: $product was not built" >&2; exit 1; }
done
$SWIFT build "${flags[@]}" --show-bin-path
