#!/usr/bin/env python3
"""Learned fusion: a linear ranker over a candidate's lexical and semantic
signals, trained on the dev sets' `quiver bench search --dump` files.

Pure Python (no numpy). Each query's candidates are the lexical and the
semantic top `POOL` (as `quiver_search::fuse` takes them); each candidate gets
the features below, computed exactly as `crates/search/src/learned.rs` does;
the weights maximise the softmax likelihood of the expected tool within its
query (listwise logistic), every dev set weighing the same in all, with an L2
pull towards the hand-set fusion (which the features can express exactly:
0.5 x lexical_shared + 0.2 x semantic_leaned), so a weight moves only where
the data asks it to.

usage: train.py DUMP_DIR [OUT_JSON]   (DUMP_DIR/<set>.jsonl from bench search --dump;
       the crate embeds crates/search/src/learned_fusion.json)
       train.py --eval WEIGHTS_JSON DUMP_DIR   (top-1/top-5 per set, hand vs learned)
Dev sets only decide (DEV below); the check sets are reported, never trained on.
"""
import json, math, os, sys

POOL = 30
DEV = ['azure', 'mixed', 'native', 'native.ev', 'daily.dev', 'daily.dev2', 'daily.dev3', 'daily.dev4', 'daily.dev5', 'authored', 'turns',
       'bfcl.live']
REPORT = DEV + ['gh.mix', 'live.mix', 'CK.native', 'CK.daily', 'CK.seal']
FEATURES = ['lexical', 'lexical_shared', 'share', 'semantic', 'semantic_leaned',
            'cosine_gap', 'lexical_rank', 'semantic_rank', 'lexical_confident', 'semantic_alone']
HAND = {'lexical_shared': 0.5, 'semantic_leaned': 0.2}
L2 = float(os.environ.get('LEARN_L2', 0.02))
# softmax temperature: fused scores live in [0, ~1]
SCALE = float(os.environ.get('LEARN_SCALE', 50))
EPOCHS = int(os.environ.get('LEARN_EPOCHS', 80))
RATE = 0.01  # Adam's step


def candidates(line):
    """[(name, features)] for one dumped query, in the fused candidate set."""
    rows = line['candidates']
    lex = [r for r in rows if r[1] > 0][:POOL]
    sem = sorted(rows, key=lambda r: (-r[2], r[0]))[:POOL]
    top = lex[0][1] if lex else 0.0
    best_share = lex[0][3] if lex else 0.0
    best_c, floor = sem[0][2], sem[-1][2]
    span = best_c - floor
    lrank = {r[0]: i for i, r in enumerate(lex)}
    srank = {r[0]: i for i, r in enumerate(sem)}
    out = []
    for r in rows:
        name, l, c, s = r
        if name not in lrank and name not in srank:
            continue
        lexn = l / top if name in lrank and top > 0 else 0.0
        semn = max(0.0, (c - floor) / span) if name in srank and span > 0 else (1.0 if name in srank else 0.0)
        sem15 = semn ** 1.5
        f = {
            'lexical': lexn,
            'lexical_shared': lexn * (s ** 0.25 if s > 0 else 0.0),
            'share': s if name in lrank else 0.0,
            'semantic': semn,
            'semantic_leaned': sem15 * max(0.0, 1.5 - best_share),
            'cosine_gap': c - best_c,
            'lexical_rank': 1.0 / (1 + lrank[name]) if name in lrank else 0.0,
            'semantic_rank': 1.0 / (1 + srank[name]) if name in srank else 0.0,
            'lexical_confident': lexn * best_share,
            'semantic_alone': sem15 * (1.0 - s),
        }
        out.append((name, [f[k] for k in FEATURES]))
    return out


def load(dump_dir, sets):
    data = {}
    for s in sets:
        path = os.path.join(dump_dir, f'{s}.jsonl')
        if not os.path.exists(path):
            continue
        qs = []
        for raw in open(path):
            line = json.loads(raw)
            qs.append((set(line['expected']), candidates(line)))
        data[s] = qs
    return data


def is_hit(name, expected):
    short = name.rsplit('__', 1)[-1]
    return name in expected or short in expected


def rank_of(w, expected, cands):
    scored = sorted(cands, key=lambda c: (-sum(a * b for a, b in zip(w, c[1])), c[0]))
    for i, (n, _) in enumerate(scored):
        if is_hit(n, expected):
            return i
    return None


def metrics(w, qs):
    ranks = [rank_of(w, e, c) for e, c in qs]
    n = len(ranks)
    return sum(r == 0 for r in ranks) / n, sum(r is not None and r < 5 for r in ranks) / n


def train(data):
    w0 = [HAND.get(k, 0.0) for k in FEATURES]
    w = list(w0)
    rows = []  # (set weight, expected index, features)
    for s, qs in data.items():
        if s not in DEV:
            continue
        sw = len(qs) ** -float(os.environ.get('LEARN_SET_POW', 1))
        for expected, cands in qs:
            idx = [i for i, (n, _) in enumerate(cands) if is_hit(n, expected)]
            if idx:
                rows.append((sw, idx[0], [f for _, f in cands]))
    total = sum(r[0] for r in rows)
    scale = SCALE
    mom, sq = [0.0] * len(w), [0.0] * len(w)
    for epoch in range(EPOCHS):
        grad = [L2 * (a - b) for a, b in zip(w, w0)]
        loss = 0.0
        for sw, k, feats in rows:
            z = [scale * sum(a * b for a, b in zip(w, f)) for f in feats]
            m = max(z)
            e = [math.exp(x - m) for x in z]
            zs = sum(e)
            loss += sw * (math.log(zs) + m - z[k])
            for f, ex in zip(feats, e):
                p = ex / zs
                for j, v in enumerate(f):
                    grad[j] += sw * scale * p * v / total
            for j, v in enumerate(feats[k]):
                grad[j] -= sw * scale * v / total
        # Adam: the features differ in scale (ranks, cosine gaps, shares)
        mom = [0.9 * a + 0.1 * g for a, g in zip(mom, grad)]
        sq = [0.999 * a + 0.001 * g * g for a, g in zip(sq, grad)]
        t = epoch + 1
        w = [a - RATE * (m / (1 - 0.9**t)) / (math.sqrt(v / (1 - 0.999**t)) + 1e-8) for a, m, v in zip(w, mom, sq)]
        if epoch % 20 == 0 or epoch == EPOCHS - 1:
            print(f'epoch {epoch} loss {loss / total:.4f}', file=sys.stderr)
    return w


def report(data, w):
    w0 = [HAND.get(k, 0.0) for k in FEATURES]
    print(f'{"set":10} {"n":>5}  hand top1/top5   learned top1/top5')
    for s in REPORT:
        if s in data:
            h, l = metrics(w0, data[s]), metrics(w, data[s])
            print(f'{s:10} {len(data[s]):5}  {h[0]:.3f} / {h[1]:.3f}    {l[0]:.3f} / {l[1]:.3f}')


def main():
    if sys.argv[1] == '--eval':
        w = json.load(open(sys.argv[2]))
        report(load(sys.argv[3], REPORT), [w['weights'][k] for k in FEATURES])
        return
    data = load(sys.argv[1], REPORT)
    w = train({k: v for k, v in data.items() if k in DEV})
    report(data, w)
    if len(sys.argv) > 2:
        out = {'comment': 'bench/search/learn/train.py over the dev sets; see bench/search/README.md',
               'temperature': SCALE, 'weights': {k: round(v, 6) for k, v in zip(FEATURES, w)}}
        with open(sys.argv[2], 'w') as f:
            json.dump(out, f, indent=1)
            f.write('\n')


if __name__ == '__main__':
    main()
