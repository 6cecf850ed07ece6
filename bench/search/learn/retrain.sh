#!/bin/sh
# Retrains learned fusion in one step: exports the re-ranker's
# features on every dev set with the lab (`lab_eval --features`), trains
# (`train.py`, about half a minute) and writes the weights the crate embeds
# (crates/search/src/learned_fusion.json); `--cv` also prints the
# cross-validation tables (about 4 minutes). Rebuild and rerun the floors after.
#
# usage: retrain.sh NATIVE_DOCS MODEL_DIR [--cv]
#   NATIVE_DOCS: quiver's own surface, `quiver bench search --native --export-docs FILE`
#   MODEL_DIR:   the sentence model (all-MiniLM-L6-v2, see bench/search/README.md)
# QCACHE=FILE keeps the query vectors between runs.
set -eu
[ $# -ge 2 ] || { sed -n '2,12p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
features=${FEATURES:-${TMPDIR:-/tmp}/quiver-learned-features.jsonl}
cache=""
[ -n "${QCACHE:-}" ] && cache="--qcache $QCACHE"
cd "$root"
# shellcheck disable=SC2086
cargo run -q -p quiver-search --features semantic,bench --example lab_eval -- \
    --native-docs "$1" --model "$2" $cache --features "$features"
python3 "$here/train.py" "$features" "$root/crates/search/src/learned_fusion.json"
python3 "$here/train.py" --eval "$root/crates/search/src/learned_fusion.json" "$features"
if [ "${3:-}" = --cv ]; then
    python3 "$here/train.py" --cv "$features"
fi
