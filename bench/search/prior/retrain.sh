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
# OUT=FILE writes the weights elsewhere (the static model's: static_prior.json);
# PRIOR_ARGS=... passes train_prior.py options to training and --cv alike. The
# static model's prior takes the defaults (--cv adds it as a log); MiniLM's is
# added linearly: PRIOR_ARGS="--w 0.5 --log-w 0" (FusionParams says which).
set -eu
[ $# -ge 2 ] || { sed -n '2,21p' "$0"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
py=${PYTHON:-python3}
"$py" -c 'import numpy' 2>/dev/null || { echo "retrain.sh: $py has no numpy (pip install numpy, or PYTHON=...)" >&2; exit 2; }
vectors=${VECTORS:-${TMPDIR:-/tmp}/quiver-prior-vectors.jsonl}
out=${OUT:-"$root/crates/search/src/semantic/native_prior.json"}
cd "$root"
"$py" "$here/train_prior.py" "$1" - - --other --texts |
    cargo run -q --release -p quiver-search --features semantic,bench --example embed_texts -- "$2" "$vectors"
# shellcheck disable=SC2086 # PRIOR_ARGS is a list of options
"$py" "$here/train_prior.py" "$1" "$vectors" "$out" --other ${PRIOR_ARGS:-}
if [ "${3:-}" = --cv ]; then
    scores=${TMPDIR:-/tmp}/quiver-prior-hand-scores.jsonl
    cargo run -q -p quiver-search --features semantic,bench --example lab_eval -- \
        --native-docs "$1" --model "$2" --prior off --scores "$scores" \
        --only native,native.ev,daily.dev,daily.dev2,daily.dev3,daily.dev4,daily.dev5,blind.dev6,blind.dev7,blind.dev8,blind.dev9,blind.dev10 >/dev/null
    # the hand-set fusion's queries need vectors too
    "$py" -c 'import json,sys; [print(json.dumps(json.loads(l)["query"])) for l in open(sys.argv[1])]' "$scores" |
        cargo run -q --release -p quiver-search --features semantic,bench --example embed_texts -- "$2" "$vectors"
    # shellcheck disable=SC2086
    "$py" "$here/train_prior.py" "$1" "$vectors" - --other --cv "$scores" ${PRIOR_ARGS:-}
fi
