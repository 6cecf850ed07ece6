#!/usr/bin/env python3
"""Coordinate descent over ranking parameters (`quiver bench search --set`).

A change is kept only if it gains at least two hits (top-1 + top-5) summed over
azure even/odd lines, alone and mixed, loses more than one hit on none of those,
and loses at most one on the sanity sets together. Winning on one half only is
how a ranker learns the benchmark instead of the task; this rule refuses that.

usage: bench/search/tune.py [GRID_JSON] [START_JSON]
"""
import json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
Q = os.environ.get('QUIVER', f'{ROOT}/target/release/quiver')
B = os.environ.get('BENCH_DIR', f'{ROOT}/../shared/bench')
C = f'{B}/catalogs'
A = f'{B}/queries/azure-mcp.jsonl'
M = f'{C}/azure-mcp.json,{C}/github-mcp.json,{C}/livemcp.json'
SETS = [(f'{C}/azure-mcp.json', A, 'even'), (f'{C}/azure-mcp.json', A, 'odd'),
        (M, A, 'even'), (M, A, 'odd'),
        (M, f'{HERE}/queries/github-sanity.jsonl', 'all'), (M, f'{HERE}/queries/livemcp-sanity.jsonl', 'all')]
GRID = {'idf_pow': [1.2, 1.6], 'k1': [0.9, 1.6], 'b.desc': [0.6, 0.9], 'name': [1, 2], 'summary': [0.25, 1],
        'w_synonym': [0.3, 0.55], 'w_prefix': [0.5, 1], 'coverage': [0.5, 1.5], 'name_bonus': [0.5, 1.5],
        'bigram': [0.15, 0.5], 'w_scope': [0.35, 0.7], 'w_intent': [0.6, 1.4], 'action_penalty': [0.6, 0.85]}


def hits(params, catalog, queries, split):
    args = [Q, 'bench', 'search', '--catalog', catalog, '--queries', queries, '--split', split]
    for k, v in params.items():
        args += ['--set', f'{k}={v}']
    line = subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    m = dict(re.findall(r'(\w+)=([\d.]+)', line))
    return round((float(m['top1']) + float(m['top5'])) * int(m['n']))


def run(params):
    return [hits(params, *s) for s in SETS]


def main():
    grid = json.loads(sys.argv[1]) if len(sys.argv) > 1 else GRID
    cur = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    base = run(cur)
    print('start', base, flush=True)
    for _ in range(3):
        improved = False
        for key, values in grid.items():
            for v in values:
                if cur.get(key) == v:
                    continue
                trial = dict(cur, **{key: v})
                r = run(trial)
                d = [a - b for a, b in zip(r, base)]
                if sum(d[:4]) >= 2 and min(d[:4]) >= -1 and d[4] + d[5] >= -1:
                    base, cur, improved = r, trial, True
                    print(f'{key}={v}', d, flush=True)
        if not improved:
            break
    print('final', json.dumps(cur))


if __name__ == '__main__':
    main()
