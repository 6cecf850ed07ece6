#!/bin/sh
# Retrains the built-in tools' intent prior in one step: embeds
# every training text with the model (`embed_texts`, cached in VECTORS),
# trains (`train_prior.py`, numpy, about ten seconds) and writes the weights
# the crate embeds (crates/search/src/semantic/native_prior.json); `--cv`
# also prints the leave-one-dev-set-out table (about two minutes). Run it
# after adding, renaming or removing a built-in tool, or changing their
# descriptions, phrasings or examples; then rebuild and rerun the floors.
#
# usage: retrain.sh NATIVE_DOCS MODEL_DIR [--cv]
#   NATIVE_DOCS: quiver's own surface, `quiver bench search --native --queries
#                bench/search/data/queries/native.jsonl --export-docs FILE`
#   MODEL_DIR:   the sentence model the weights are for (all-MiniLM-L6-v2,
#                see bench/search/README.md)
# VECTORS=FILE keeps the text vectors between runs; PYTHON=... a python with numpy;
# OUT=FILE writes the weights elsewhere (the static model's: static_prior.json).
set -eu
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
py=${PYTHON:-python3}
"$py" -c 'import numpy' 2>/dev/null || { echo "retrain.sh: $py has no numpy (pip install numpy, or PYTHON=...)" >&2; exit 2; }
vectors=${VECTORS:-${TMPDIR:-/tmp}/quiver-prior-vectors.jsonl}
out=${OUT:-"$root/crates/search/src/semantic/native_prior.json"}
cd "$root"
"$py" "$here/train_prior.py" "$1" - - --other --texts |
    cargo run -q --release -p quiver-search --features semantic,bench --example embed_texts -- "$2" "$vectors"
"$py" "$here/train_prior.py" "$1" "$vectors" "$out" --other
if [ "${3:-}" = --cv ]; then
    scores=${TMPDIR:-/tmp}/quiver-prior-hand-scores.jsonl
    cargo run -q -p quiver-search --features semantic,bench --example lab_eval -- \
        --native-docs "$1" --model "$2" --prior off --scores "$scores" \
        --only native,native.ev,daily.dev,daily.dev2,daily.dev3,daily.dev4,daily.dev5 >/dev/null
    # the hand-set fusion's queries need vectors too
    "$py" -c 'import json,sys; [print(json.dumps(json.loads(l)["query"])) for l in open(sys.argv[1])]' "$scores" |
        cargo run -q --release -p quiver-search --features semantic,bench --example embed_texts -- "$2" "$vectors"
    "$py" "$here/train_prior.py" "$1" "$vectors" - --other --cv "$scores"
fi
