#!/usr/bin/env python3
"""Writes the native daily request sets (queries/native-daily-*.jsonl) from
their sources in queries/src/.

Each source is a list of ("expected tool[ another ...]", "request") pairs, a
Python literal read with ast.literal_eval (no code runs), with `#` comments
and a header saying who wrote the set, how and when. Each output line is
{"query": request, "expected": [tool, ...]}, the accepted tools in the order
written.

Sets (one command each; the output lands beside this script, or in OUT_DIR):

  daily  src/native-daily.txt       -> native-daily-dev.jsonl and
                                       native-daily-check.jsonl (the requests
                                       of each tool alternate between the two,
                                       starting on the dev half for the first,
                                       third, ... tool and on the check half
                                       for the others)
  dev2   src/native-daily-dev2.txt  -> native-daily-dev2.jsonl
  dev3   src/native-daily-dev3.txt  -> native-daily-dev3.jsonl
  dev4   src/native-daily-dev4.txt  -> native-daily-dev4.jsonl
  dev5   src/native-daily-dev5.txt  -> native-daily-dev5.jsonl

usage: native_daily.py SET|all [OUT_DIR]
       native_daily.py --check     regenerate every set in a temporary
                                   directory and compare it byte for byte
                                   with the committed JSONL

The committed JSONL are what the tests and floors read: a set once committed
is not regenerated from an edited source (a new set gets a new file).
"""
import ast
import filecmp
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# set -> (source, outputs); two outputs mean the dev / check split.
SETS = {
    "daily": ("native-daily.txt", ["native-daily-dev.jsonl", "native-daily-check.jsonl"]),
    "dev2": ("native-daily-dev2.txt", ["native-daily-dev2.jsonl"]),
    "dev3": ("native-daily-dev3.txt", ["native-daily-dev3.jsonl"]),
    "dev4": ("native-daily-dev4.txt", ["native-daily-dev4.jsonl"]),
    "dev5": ("native-daily-dev5.txt", ["native-daily-dev5.jsonl"]),
}


def load(source):
    pairs = ast.literal_eval((HERE / "src" / source).read_text(encoding="utf-8"))
    seen = set()
    for tools, query in pairs:
        assert query not in seen, f"{source}: {query!r} twice"
        seen.add(query)
    return pairs


def line(tools, query):
    return json.dumps({"query": query, "expected": list(dict.fromkeys(tools.split()))}) + "\n"


def write(name, out_dir):
    source, outputs = SETS[name]
    pairs = load(source)
    files = [open(Path(out_dir) / o, "w", encoding="utf-8", newline="\n") for o in outputs]
    if len(files) == 1:
        for tools, query in pairs:
            files[0].write(line(tools, query))
    else:
        # per first tool: [requests so far, the tool's index in order of appearance]
        per = {}
        for tools, query in pairs:
            first = tools.split()[0]
            count, group = per.setdefault(first, [0, len(per)])
            per[first][0] += 1
            files[0 if (count + group) % 2 == 0 else 1].write(line(tools, query))
    for f in files:
        f.close()
    return outputs


def check():
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name in SETS:
            for o in write(name, tmp):
                same = filecmp.cmp(Path(tmp) / o, HERE / o, shallow=False)
                ok &= same
                print(f"{name:6} {o}: {'byte-identical' if same else 'DIFFERS'}")
    return ok


def main(argv):
    if argv == ["--check"]:
        return 0 if check() else 1
    if not argv or len(argv) > 2 or (argv[0] not in SETS and argv[0] != "all"):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = argv[1] if len(argv) == 2 else HERE
    for name in SETS if argv[0] == "all" else [argv[0]]:
        for o in write(name, out_dir):
            print(Path(out_dir) / o, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
