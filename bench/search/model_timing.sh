#!/bin/sh
# Model load, cold tool vectors for 1,000 tools (the mixed catalog grown with
# renamed copies), the same read back from the cache, and query-encode latency
# (semantic-only p50 over the 35 github sanity queries: encode + 1k dot products).
# usage: QUIVER_SEARCH_MODEL=DIR bench/search/model_timing.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
Q=${QUIVER:-$root/target/release/quiver}
B=${BENCH_DIR:-$root/bench/search/data}
C=$B/catalogs
: "${QUIVER_SEARCH_MODEL:?set QUIVER_SEARCH_MODEL=DIR}"
"$Q" bench search --catalog "$C/azure-mcp.json,$C/github-mcp.json,$C/livemcp.json" --replicate 1000 \
  --queries "$here/queries/github-sanity.jsonl" --semantic --cold
