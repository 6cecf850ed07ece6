#!/usr/bin/env python3
"""Builds two third-party *dev* sets from the Berkeley Function Calling
Leaderboard data (PyPI `bfcl-eval`, Apache-2.0), for choosing fusion weights
with the both-halves rule. The *live* set (convert.py) stays check-only.

usage: pip download --no-deps bfcl-eval==2026.3.23 && unzip bfcl_eval-*.whl -d x
       bench/search/dev/convert_dev.py x/bfcl_eval/data bench/search/dev

bfcl-authored: the `simple_python`, `multiple`, `parallel` and
  `parallel_multiple` categories (functions and questions written by the
  benchmark's authors), one catalog of every function (deduplicated by name,
  first description kept); a query is a question's user message, expected its
  ground truth's function names.
bfcl-multiturn: the multi-turn base category over the eight API suites of
  `multi_turn_func_doc` (file system, messaging, trading, travel, vehicle...);
  a query is one turn's user message, expected the functions called in that
  turn (`cd` left out when the turn calls anything else: it is how a call gets
  to its directory, not what the user asked for).
"""
import json, os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'generalization'))
from convert import single_turn, tool, write  # noqa: E402

src, out = sys.argv[1], sys.argv[2]

# --- authored single-turn categories
write(out, 'bfcl-authored', *single_turn(src, ['simple_python', 'multiple', 'parallel', 'parallel_multiple']))

# --- multi-turn base
tools, seen = [], set()
for f in sorted(os.listdir(f'{src}/multi_turn_func_doc')):
    if f.startswith('memory') or f.startswith('web_search'):
        continue  # the memory and web-search suites belong to other categories
    for line in open(f'{src}/multi_turn_func_doc/{f}'):
        fn = json.loads(line)
        if fn['name'] not in seen:
            seen.add(fn['name'])
            tools.append(tool(fn))
queries = []
qs = [json.loads(l) for l in open(f'{src}/BFCL_v4_multi_turn_base.json')]
ans = {a['id']: a for a in map(json.loads, open(f'{src}/possible_answer/BFCL_v4_multi_turn_base.json'))}
for q in qs:
    gt = ans.get(q['id'])
    if not gt:
        continue
    for turn, calls in zip(q['question'], gt['ground_truth']):
        users = [m['content'] for m in turn if m['role'] == 'user']
        names = [re.match(r'\s*([A-Za-z_][\w.]*)\s*\(', c).group(1) for c in calls]
        names = [n for n in names if n in seen]
        main = sorted({n for n in names if n != 'cd'}) or sorted(set(names))
        if users and main:
            queries.append({'query': users[-1].strip(), 'expected': main})
write(out, 'bfcl-multiturn', tools, queries)
