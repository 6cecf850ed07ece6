#!/bin/sh
# Retrains the built-in tools' intent prior in one step: embeds every
# training text with the static model compiled into the binary
# (`embed_texts`, cached in VECTORS), trains (`train_prior.py`, numpy) and
# writes the weights the crate embeds
# (crates/search/src/semantic/static_prior.json). One prior serves every
# model: a transformer's ranking reads requests through the static model for
# it. `--cv` also prints the leave-one-dev-set-out table of the fusion with
# the prior, ranked by MODEL_DIR (default: the static model) (several
# minutes). Run it after adding, renaming or removing a built-in tool, or
# changing their descriptions, phrasings or examples; then rebuild and rerun
# the floors.
#
# usage: retrain.sh NATIVE_DOCS [--cv [MODEL_DIR]]
#   NATIVE_DOCS: quiver's own surface, `quiver bench search --native --queries
#                bench/search/data/queries/native.jsonl --export-docs FILE`
#   MODEL_DIR:   the sentence model whose fusion --cv measures (all-MiniLM-L6-v2,
#                see bench/search/README.md)
# VECTORS=FILE keeps the text vectors between runs; PYTHON=... a python with numpy;
# OUT=FILE writes the weights elsewhere; PRIOR_ARGS=... passes train_prior.py
# options to training and --cv alike.
set -eu
[ $# -ge 1 ] || { sed -n '2,21p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
static="$root/crates/search/static-model"
py=${PYTHON:-python3}
"$py" -c 'import numpy' 2>/dev/null || { echo "retrain.sh: $py has no numpy (pip install numpy, or PYTHON=...)" >&2; exit 2; }
vectors=${VECTORS:-${TMPDIR:-/tmp}/quiver-prior-vectors.jsonl}
out=${OUT:-"$root/crates/search/src/semantic/static_prior.json"}
cd "$root"
"$py" "$here/train_prior.py" "$1" - - --other --texts |
    cargo run -q --release -p quiver-search --features semantic,bench --example embed_texts -- "$static" "$vectors"
# shellcheck disable=SC2086 # PRIOR_ARGS is a list of options
"$py" "$here/train_prior.py" "$1" "$vectors" "$out" --other ${PRIOR_ARGS:-}
if [ "${2:-}" = --cv ]; then
    scores=${TMPDIR:-/tmp}/quiver-prior-hand-scores.jsonl
    cargo run -q -p quiver-search --features semantic,bench --example lab_eval -- \
        --native-docs "$1" --model "${3:-$static}" --prior off --scores "$scores" \
        --only native,native.ev,daily.dev,daily.dev2,daily.dev3,daily.dev4,daily.dev5,blind.dev6,blind.dev7,blind.dev8,blind.dev9,blind.dev10,blind.dev11,blind.dev12 >/dev/null
    # the hand-set fusion's queries need the prior's vectors too
    "$py" -c 'import json,sys; [print(json.dumps(json.loads(l)["query"])) for l in open(sys.argv[1])]' "$scores" |
        cargo run -q --release -p quiver-search --features semantic,bench --example embed_texts -- "$static" "$vectors"
    # shellcheck disable=SC2086
    "$py" "$here/train_prior.py" "$1" "$vectors" - --other --cv "$scores" ${PRIOR_ARGS:-}
fi
