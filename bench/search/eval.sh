#!/bin/sh
# Tool-search quality across the sets we tune and check on.
# usage: bench/search/eval.sh [quiver bench search args, e.g. --set k1=1.5]
#   azure: all / even / odd lines (tune.py's both-halves rule needs a gain on
#   both halves), alone and mixed with every bench catalog; gh and live: sanity
#   sets written here, never tuned on, over their own catalog and the mixed one;
#   native, native.dd and native.d2 to native.d5: native dev sets; authored and turns:
#   BFCL dev sets; bfcl.live: a dev set too (earlier decisions cited it).
#   Check sets (never tuned on): native.ck, native.dc (native everyday check
#   halves) and seal (frozen/: no change may cite it).
# Needs a release build: cargo build --release
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
Q=${QUIVER:-$root/target/release/quiver}
C=${BENCH_DIR:-$root/bench/search/data}/catalogs
A=${BENCH_DIR:-$root/bench/search/data}/queries/azure-mcp.jsonl
M=$C/azure-mcp.json,$C/github-mcp.json,$C/livemcp.json
r() { label=$1; shift; printf "%-9s" "$label"; "$Q" bench search "$@" 2>/dev/null | tail -1; }
r azure    --catalog "$C/azure-mcp.json" --queries "$A" "$@"
r even     --catalog "$C/azure-mcp.json" --queries "$A" --split even "$@"
r odd      --catalog "$C/azure-mcp.json" --queries "$A" --split odd "$@"
r mixed    --catalog "$M" --queries "$A" "$@"
r m.even   --catalog "$M" --queries "$A" --split even "$@"
r m.odd    --catalog "$M" --queries "$A" --split odd "$@"
r gh       --catalog "$C/github-mcp.json" --queries "$here/queries/github-sanity.jsonl" "$@"
r gh.mix   --catalog "$M" --queries "$here/queries/github-sanity.jsonl" "$@"
r live     --catalog "$C/livemcp.json" --queries "$here/queries/livemcp-sanity.jsonl" "$@"
r live.mix --catalog "$M" --queries "$here/queries/livemcp-sanity.jsonl" "$@"
r native   --native --queries "${BENCH_DIR:-$root/bench/search/data}/queries/native.jsonl" "$@"
r native.ck --native --queries "$here/queries/native-check.jsonl" "$@"
r native.dd --native --queries "$here/queries/native-daily-dev.jsonl" "$@"
r native.d2 --native --queries "$here/queries/native-daily-dev2.jsonl" "$@"
r native.d3 --native --queries "$here/queries/native-daily-dev3.jsonl" "$@"
r native.d4 --native --queries "$here/queries/native-daily-dev4.jsonl" "$@"
r native.d5 --native --queries "$here/queries/native-daily-dev5.jsonl" "$@"
r native.dc --native --queries "$here/queries/native-daily-check.jsonl" "$@"
r authored --catalog "$here/dev/bfcl-authored.json" --queries "$here/dev/bfcl-authored.jsonl" "$@"
r turns    --catalog "$here/dev/bfcl-multiturn.json" --queries "$here/dev/bfcl-multiturn.jsonl" "$@"
r bfcl.live --catalog "$here/generalization/bfcl-live.json" --queries "$here/generalization/bfcl-live.jsonl" "$@"
r seal     --catalog "$here/frozen/seal-tools.json" --queries "$here/frozen/seal-tools.jsonl" "$@"
