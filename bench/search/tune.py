#!/usr/bin/env python3
"""Coordinate descent over ranking parameters (`quiver bench search --set`).

Decisions use the dev sets only, split in halves (odd and even lines): a change
is kept only if it gains hits (top-1 + top-5 counts) on both halves (each
half's sets summed) and loses more than one hit on no dev set. Winning on one
half only is how a ranker learns the benchmark instead of the task; this rule
refuses that. The sanity sets (queries/*-sanity.jsonl) are printed beside every
kept change and never decide anything. The check sets never run here: the
frozen Seal-Tools set (frozen/, which no change may cite) and the check halves
of the native everyday sets (queries/native-check.jsonl,
queries/native-daily-check.jsonl).

Dev sets (TUNE_DEV): `all` (default: every set below, as the README says),
`azure` (azure alone and mixed into the 844-tool catalog), `native` (quiver's
own tools: bench/search/data/queries/native.jsonl, dev/native-everyday.jsonl
and the dev sets queries/native-daily-dev.jsonl, native-daily-dev2.jsonl,
native-daily-dev3.jsonl, native-daily-dev4.jsonl and native-daily-dev5.jsonl), `bfcl` (third-party: BFCL's
authored, multi-turn and live categories; live is a dev set because earlier
decisions cited it).

usage: [TUNE_DEV=all|azure|native|bfcl] bench/search/tune.py [GRID_JSON] [START_JSON]
"""
import json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
Q = os.environ.get('QUIVER', f'{ROOT}/target/release/quiver')
B = os.environ.get('BENCH_DIR', f'{ROOT}/bench/search/data')
C = f'{B}/catalogs'
A = f'{B}/queries/azure-mcp.jsonl'
M = f'{C}/azure-mcp.json,{C}/github-mcp.json,{C}/livemcp.json'
N = f'{B}/queries/native.jsonl'
DEV = {'azure': [(f'{C}/azure-mcp.json', A, 'even'), (f'{C}/azure-mcp.json', A, 'odd'),
                 (M, A, 'even'), (M, A, 'odd')],
       'native': [(None, N, 'even'), (None, N, 'odd'),
                  (None, f'{HERE}/dev/native-everyday.jsonl', 'even'), (None, f'{HERE}/dev/native-everyday.jsonl', 'odd'),
                  (None, f'{HERE}/queries/native-daily-dev.jsonl', 'even'),
                  (None, f'{HERE}/queries/native-daily-dev.jsonl', 'odd'),
                  (None, f'{HERE}/queries/native-daily-dev2.jsonl', 'even'),
                  (None, f'{HERE}/queries/native-daily-dev2.jsonl', 'odd'),
                  (None, f'{HERE}/queries/native-daily-dev3.jsonl', 'even'),
                  (None, f'{HERE}/queries/native-daily-dev3.jsonl', 'odd'),
                  (None, f'{HERE}/queries/native-daily-dev4.jsonl', 'even'),
                  (None, f'{HERE}/queries/native-daily-dev4.jsonl', 'odd'),
                  (None, f'{HERE}/queries/native-daily-dev5.jsonl', 'even'),
                  (None, f'{HERE}/queries/native-daily-dev5.jsonl', 'odd')],
       'bfcl': [(f'{HERE}/dev/bfcl-{s}.json', f'{HERE}/dev/bfcl-{s}.jsonl', h)
                for s in ['authored', 'multiturn'] for h in ['even', 'odd']]
               + [(f'{HERE}/generalization/bfcl-live.json', f'{HERE}/generalization/bfcl-live.jsonl', h)
                  for h in ['even', 'odd']]}
DEV['all'] = DEV['azure'] + DEV['native'] + DEV['bfcl']
SETS = DEV[os.environ.get('TUNE_DEV', 'all')]
# Reported only: never part of a decision.
SANITY = [(M, f'{HERE}/queries/github-sanity.jsonl', 'all'), (M, f'{HERE}/queries/livemcp-sanity.jsonl', 'all')]
GRID = {'idf_pow': [1.2, 1.6], 'k1': [0.9, 1.6], 'b.desc': [0.6, 0.9], 'name': [1, 2], 'summary': [0.25, 1],
        'w_synonym': [0.3, 0.55], 'w_prefix': [0.5, 1], 'coverage': [0.5, 1.5], 'name_bonus': [0.5, 1.5],
        'bigram': [0.15, 0.5], 'w_scope': [0.35, 0.7], 'w_intent': [0.6, 1.4], 'action_penalty': [0.6, 0.85]}


def hits(params, catalog, queries, split):
    where = ['--native'] if catalog is None else ['--catalog', catalog]
    args = [Q, 'bench', 'search', *where, '--queries', queries, '--split', split]
    for k, v in params.items():
        args += ['--set', f'{k}={v}']
    line = subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    m = dict(re.findall(r'(\w+)=([\d.]+)', line))
    return round((float(m['top1']) + float(m['top5'])) * int(m['n']))


def run(params):
    return [hits(params, *s) for s in SETS]


def sanity(params):
    return [hits(params, *s) for s in SANITY]


def both_halves_gain(d):
    """Each half gains, and no dev set loses more than one hit."""
    even = sum(x for x, s in zip(d, SETS) if s[2] == 'even')
    odd = sum(x for x, s in zip(d, SETS) if s[2] == 'odd')
    return even > 0 and odd > 0 and min(d) >= -1


def main():
    grid = json.loads(sys.argv[1]) if len(sys.argv) > 1 else GRID
    cur = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    base = run(cur)
    print('start', base, 'sanity (not deciding)', sanity(cur), flush=True)
    for _ in range(3):
        improved = False
        for key, values in grid.items():
            for v in values:
                if cur.get(key) == v:
                    continue
                trial = dict(cur, **{key: v})
                r = run(trial)
                d = [a - b for a, b in zip(r, base)]
                if both_halves_gain(d):
                    base, cur, improved = r, trial, True
                    print(f'{key}={v}', d, 'sanity (not deciding)', sanity(cur), flush=True)
        if not improved:
            break
    print('final', json.dumps(cur))


if __name__ == '__main__':
    main()
