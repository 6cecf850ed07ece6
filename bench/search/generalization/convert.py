#!/usr/bin/env python3
"""Builds the generalization set from the Berkeley Function Calling Leaderboard
data (PyPI `bfcl-eval`, Apache-2.0): third-party tools and requests written by
other people, used only to check the ranker, never to tune it.

usage: pip download --no-deps bfcl-eval==2026.3.23 && unzip bfcl_eval-*.whl -d x
       bench/search/generalization/convert.py x/bfcl_eval/data bench/search/generalization

Catalog: every function of the `live_simple` and `live_multiple` categories
(user-contributed real APIs), deduplicated by name (first description kept).
Queries: the last user message of each question's first turn; expected: the
function(s) of its ground truth. Names are kept verbatim (dots included).
"""
import json, os, sys


def tool(fn):
    return {'name': fn['name'], 'description': fn.get('description', ''),
            'inputSchema': fn.get('parameters', {})}


def single_turn(src, categories):
    """Catalog (deduplicated by name, first description kept) and requests
    (the last user message of each question's first turn, expected its ground
    truth's function names) of BFCL's single-turn categories."""
    tools, seen, queries = [], set(), []
    for cat in categories:
        qs = [json.loads(l) for l in open(f'{src}/BFCL_v4_{cat}.json')]
        ans = {a['id']: a for a in map(json.loads, open(f'{src}/possible_answer/BFCL_v4_{cat}.json'))}
        for q in qs:
            for fn in q['function']:
                if fn['name'] not in seen:
                    seen.add(fn['name'])
                    tools.append(tool(fn))
            users = [m['content'] for m in q['question'][0] if m['role'] == 'user']
            gt = ans.get(q['id'])
            if not users or not gt:
                continue
            expected = sorted({k for call in gt['ground_truth'] for k in call})
            queries.append({'query': users[-1].strip(), 'expected': expected})
    return tools, queries


def write(out, name, tools, queries):
    json.dump({'name': name, 'tools': tools}, open(f'{out}/{name}.json', 'w'), indent=0)
    with open(f'{out}/{name}.jsonl', 'w') as f:
        for q in queries:
            f.write(json.dumps(q) + '\n')
    print(name, len(tools), 'tools', len(queries), 'queries')


if __name__ == '__main__':
    src, out = sys.argv[1], sys.argv[2]
    write(out, 'bfcl-live', *single_turn(src, ['live_simple', 'live_multiple']))
