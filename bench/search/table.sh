#!/bin/sh
# The measurement table: plain BM25 (--baseline), lexical, semantic and
# fused on every set, with latency and tail bytes (confident loads / all --limit),
# and learned fusion (the committed weights, `--set fuse.learned=1`), and fused
# without the built-in tools' intent prior (`--set fuse.w_prior=0 --set fuse.w_prior_log=0`).
# usage: QUIVER_SEARCH_MODEL=DIR|embedded bench/search/table.sh [extra bench args]
# With QUIVER_SEARCH_MODEL unset only the bm25 and lexical columns run. Needs a release build
# (or QUIVER=a debug build with quiver-search at opt-level 3: same rankings):
#   CARGO_INCREMENTAL=0 cargo build --release -p quiver-cli
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
Q=${QUIVER:-$root/target/release/quiver}
B=${BENCH_DIR:-$root/bench/search/data}
C=$B/catalogs
A=$B/queries/azure-mcp.jsonl
M=$C/azure-mcp.json,$C/github-mcp.json,$C/livemcp.json
G=$here/generalization
modes="--baseline --lexical"
[ -n "${QUIVER_SEARCH_MODEL:-}" ] && modes="$modes --semantic --fused --noprior --learned"
r() {
  label=$1; shift
  for m in $modes; do
    flag=$m; [ "$m" = --fused ] && flag=""
    [ "$m" = --learned ] && flag="--set fuse.learned=1"
    [ "$m" = --noprior ] && flag="--set fuse.w_prior=0 --set fuse.w_prior_log=0"
    printf "%-9s %-10s " "$label" "${m#--}"
    # shellcheck disable=SC2086
    "$Q" bench search "$@" $flag 2>/dev/null | tail -1
  done
}
r azure    --catalog "$C/azure-mcp.json" --queries "$A" "$@"
r odd      --catalog "$C/azure-mcp.json" --queries "$A" --split odd "$@"
r even     --catalog "$C/azure-mcp.json" --queries "$A" --split even "$@"
r mixed    --catalog "$M" --queries "$A" "$@"
r gh       --catalog "$C/github-mcp.json" --queries "$here/queries/github-sanity.jsonl" "$@"
r gh.mix   --catalog "$M" --queries "$here/queries/github-sanity.jsonl" "$@"
r live     --catalog "$C/livemcp.json" --queries "$here/queries/livemcp-sanity.jsonl" "$@"
r live.mix --catalog "$M" --queries "$here/queries/livemcp-sanity.jsonl" "$@"
r native   --native --queries "$B/queries/native.jsonl" "$@"
r native.ev --native --queries "$here/dev/native-everyday.jsonl" "$@"
r native.ck --native --queries "$here/queries/native-check.jsonl" "$@"
r daily.dev --native --queries "$here/queries/native-daily-dev.jsonl" "$@"
r daily.dev2 --native --queries "$here/queries/native-daily-dev2.jsonl" "$@"
r daily.dev3 --native --queries "$here/queries/native-daily-dev3.jsonl" "$@"
r daily.dev4 --native --queries "$here/queries/native-daily-dev4.jsonl" "$@"
r daily.dev5 --native --queries "$here/queries/native-daily-dev5.jsonl" "$@"
r daily.ck --native --queries "$here/queries/native-daily-check.jsonl" "$@"
r daily.ck2 --native --queries "$here/queries/native-everyday-check2.jsonl" "$@"
r authored --catalog "$here/dev/bfcl-authored.json" --queries "$here/dev/bfcl-authored.jsonl" "$@"
r turns    --catalog "$here/dev/bfcl-multiturn.json" --queries "$here/dev/bfcl-multiturn.jsonl" "$@"
r bfcl     --catalog "$G/bfcl-live.json" --queries "$G/bfcl-live.jsonl" "$@"
r seal     --catalog "$here/frozen/seal-tools.json" --queries "$here/frozen/seal-tools.jsonl" "$@"
