#!/usr/bin/env bash
# Records the committed proto/ (at HEAD) as the v1 baseline that CI's `buf breaking` compares
# against. Run it only after a deliberate, compatible change to the contract has been committed
# (a new message, field or oneof case); never to silence a breaking change.
set -euo pipefail
cd "$(dirname "$0")/.."
buf=${BUF:-buf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive HEAD proto | tar -x -C "$tmp"
rm -rf "$tmp/proto/baseline"
"$buf" build "$tmp/proto" -o proto/baseline/cardarena-v1.binpb
