#!/usr/bin/env bash
# grep_files vs ripgrep: wall time on the same tree and patterns, warm cache.
#
# Usage: bench/grep_vs_rg.sh [DIR]      (default: ~/.cargo/registry/src)
#
# Fairness: both sides respect .gitignore/.ignore (rg with --no-require-git,
# because grep_files honours .gitignore outside git repositories too), skip
# hidden and binary files, do not follow symlinks, use every core, and must
# report the same match count (checked below). rg's output goes through a pipe,
# not /dev/null: rg stops at the first match per file when it detects
# /dev/null, which would not be the same work. grep_bench runs the whole
# grep_files path (parallel walk, search, collect, sort, render 200 matches).
# Two rg baselines are shown: `rg -n` (prints every match, what a person
# types) and `rg -c` (counts only, the least work rg can do for a count).
# Target: grep_files at most 1.0x rg's wall time (1.25x when this was written).
set -euo pipefail

cd "$(dirname "$0")/.."
DIR="${1:-$HOME/.cargo/registry/src}"
command -v rg >/dev/null || { echo "ripgrep missing: apt-get install -y ripgrep" >&2; exit 1; }

# Only the example, in release: the machine may have few cores.
build_log=$(mktemp)
cargo build --release -p quiver-tools --example grep_bench >"$build_log" 2>&1 || { cat "$build_log" >&2; exit 1; }
rm -f "$build_log"
BENCH="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/examples/grep_bench"

echo "tree: $DIR ($(du -sh "$DIR" | cut -f1), $(find "$DIR" -type f | wc -l) files), $(nproc) cores, $(rg --version | sed -n 1p)"

# name | pattern | extra flag (-i or empty)
CASES=(
  "literal|fn main|"
  "regex|impl\\s+\\w+\\s+for\\s+\\w+|"
  "case-insensitive|unsafe|-i"
)

for case in "${CASES[@]}"; do
  IFS='|' read -r name pattern flag <<<"$case"
  ours=$("$BENCH" "$DIR" "$pattern" $flag | sed -n 's/.*matches=\([0-9]*\).*/\1/p')
  theirs=$(rg -n --no-require-git $flag -e "$pattern" "$DIR" | wc -l)
  echo
  echo "== $name: /$pattern/ $flag  matches: grep_files=$ours rg=$theirs"
  [ "$ours" = "$theirs" ] || echo "!! match counts differ; the comparison is not like for like"
  q=$(printf '%q' "$pattern")
  if command -v hyperfine >/dev/null; then
    hyperfine -N --warmup 2 --runs "${RUNS:-10}" --output=pipe --style basic \
      -n grep_files "$BENCH $DIR $q $flag" \
      -n "rg -n" "rg -n --no-require-git $flag -e $q $DIR" \
      -n "rg -c" "rg -c --no-require-git $flag -e $q $DIR" 2>&1 | grep -v '^ *Range\|^$'
  else
    # No hyperfine: best of N wall times.
    for cmd in "$BENCH $DIR $q $flag" "rg -n --no-require-git $flag -e $q $DIR" "rg -c --no-require-git $flag -e $q $DIR"; do
      best=""
      for _ in $(seq "${RUNS:-10}"); do
        s=$(date +%s%N); eval "$cmd" | cat >/dev/null; e=$(date +%s%N)
        t=$(( (e - s) / 1000000 )); { [ -z "$best" ] || [ "$t" -lt "$best" ]; } && best=$t
      done
      echo "  best ${best} ms  $cmd"
    done
  fi
done
