#!/usr/bin/env python3
"""Learned fusion v2: a linear re-ranker over the hand-set fusion's top
candidates, trained on the dev sets.

Input: the feature file `lab_eval --features FILE` writes (first line
{"features": [...], "depth": K}; then one line per query: {"set", "line",
"hits": [candidate indexes that are an expected tool], "f": [[features] per
candidate, hand-set fused order]}). The features are computed by the crate
(`crates/search/src/learned.rs`), the same code that ranks with the weights,
so there is nothing to keep in parity here.

Model: score = w . f over a query's candidates (score fusion's top `depth`).
Trained on each query's deciding pair (the best-scored expected tool against
the best-scored other candidate) with the smoothed top-1 error
1 - sigmoid(T (s_expected - s_other)) as the loss (LEARN_MODE=smooth, the
default): only near misses and near hits pull, so a tool deep in the list
does not decide the weights. Also `pair` (RankNet's logistic loss on the same
pair) and `list` (softmax over the candidates). Full-batch Adam with an L2
pull towards the hand-set ranking (w = 1 on `hand`, 0 elsewhere: that
reproduces score fusion rank for rank), so a weight moves only where the
data asks. Every training set weighs the same in all. Deterministic: no
sampling, fixed order, fixed epochs. Pure Python (no numpy).

usage:
  train.py FEATURES [OUT_JSON]      train on every dev set, write the weights
                                    (the crate embeds crates/search/src/learned_fusion.json)
  train.py --cv FEATURES            the cross-validation tables (leave one native
                                    set out; odd / even lines; leave one third-party set out)
  train.py --eval WEIGHTS FEATURES  top-1 / top-5 per set, hand-set vs the weights
Environment: LEARN_MODE (smooth), LEARN_T (50), LEARN_L2 (0.01), LEARN_EPOCHS (120),
LEARN_RATE (Adam's step, 0.01), LEARN_SET_POW (a query weighs n_set^-POW, 1),
LEARN_SETS (the training sets, comma-separated; default every dev set),
LEARN_JOBS (parallel folds in --cv, 2).
Only dev sets are in the feature file (lab_eval lists no check set).
"""
import json, math, os, sys

# the native dev sets a held-out fold is made of, and the third-party dev sets
NATIVE_HELD = ['native.ev', 'daily.dev', 'daily.dev2', 'daily.dev3', 'daily.dev4', 'daily.dev5']
NATIVE_ALL = ['native'] + NATIVE_HELD
THIRD = ['azure', 'mixed', 'authored', 'turns', 'bfcl']
TRAIN = os.environ['LEARN_SETS'].split(',') if os.environ.get('LEARN_SETS') else NATIVE_ALL + THIRD
SANITY = ['gh.mix', 'live.mix']  # reported, never trained on
T = float(os.environ.get('LEARN_T', 50))
L2 = float(os.environ.get('LEARN_L2', 0.01))
EPOCHS = int(os.environ.get('LEARN_EPOCHS', 120))
MODE = os.environ.get('LEARN_MODE', 'smooth')
RATE = float(os.environ.get('LEARN_RATE', 0.01))  # Adam's step


def load(path):
    with open(path) as fh:
        head = json.loads(fh.readline())
        queries = []
        for raw in fh:
            q = json.loads(raw)
            sparse = [[(j, v) for j, v in enumerate(f) if v != 0.0] for f in q['f']]
            queries.append({'set': q['set'], 'line': q['line'], 'hits': set(q['hits']), 'x': sparse})
    return head['features'], head['depth'], queries


def hand_weights(names):
    return [1.0 if n == 'hand' else 0.0 for n in names]


def scores(w, q):
    return [sum(w[j] * v for j, v in c) for c in q['x']]


def rank_of_hit(w, q):
    """0-based rank of the best-placed expected tool after re-ranking (ties keep
    the hand-set order, as the crate's sort by score then name nearly does);
    None when no candidate is expected."""
    if not q['hits']:
        return None
    s = scores(w, q)
    order = sorted(range(len(s)), key=lambda i: (-s[i], i))
    return min(order.index(i) for i in q['hits'])


def train(names, queries):
    w0 = hand_weights(names)
    w = list(w0)
    n = len(w)
    per_set = {}
    for q in queries:
        per_set[q['set']] = per_set.get(q['set'], 0) + 1
    # every set weighs the same in all; a query with no expected tool among
    # the candidates cannot teach the re-ranker anything
    pow_ = float(os.environ.get('LEARN_SET_POW', 1))
    rows = [(per_set[q['set']] ** -pow_, q) for q in queries if q['hits'] and len(q['x']) > 1]
    total = sum(r for r, _ in rows) or 1.0
    pair = MODE in ('pair', 'smooth')
    SMOOTH = MODE == 'smooth'
    mom, sq = [0.0] * n, [0.0] * n
    for epoch in range(EPOCHS):
        grad = [L2 * (a - b) for a, b in zip(w, w0)]
        loss = 0.0
        for sw, q in rows:
            s = scores(w, q)
            c = sw * T / total
            if pair:
                # the deciding pair: the best-scored expected tool against the
                # best-scored other candidate (top-1 is theirs to decide)
                h = max(q['hits'], key=lambda i: (s[i], -i))
                o = max((i for i in range(len(s)) if i not in q['hits']), key=lambda i: (s[i], -i), default=None)
                if o is None:
                    continue
                m = max(-30.0, min(30.0, T * (s[h] - s[o])))
                if SMOOTH:
                    # the smoothed top-1 error 1 - sigmoid(m): only near
                    # misses and near hits pull (a tool deep in the list
                    # would otherwise decide the weights)
                    p = 1.0 / (1.0 + math.exp(-m))
                    loss += sw * (1.0 - p)
                    g = p * (1.0 - p)  # -d loss / d m
                else:
                    loss += sw * math.log1p(math.exp(-m))
                    g = 1.0 / (1.0 + math.exp(m))  # -d loss / d m
                for j, v in q['x'][h]:
                    grad[j] -= c * g * v
                for j, v in q['x'][o]:
                    grad[j] += c * g * v
                continue
            z = [T * x for x in s]
            m = max(z)
            e = [math.exp(x - m) for x in z]
            zs = sum(e)
            zh = sum(e[i] for i in q['hits'])
            loss += sw * (math.log(zs) - math.log(zh))
            for i, feats in enumerate(q['x']):
                # d loss / d s_i = T (p_i - p_i [i hit] / P(hit))
                g = e[i] / zs - (e[i] / zh if i in q['hits'] else 0.0)
                if g != 0.0:
                    for j, v in feats:
                        grad[j] += c * g * v
        mom = [0.9 * a + 0.1 * g for a, g in zip(mom, grad)]
        sq = [0.999 * a + 0.001 * g * g for a, g in zip(sq, grad)]
        t = epoch + 1
        w = [a - RATE * (mm / (1 - 0.9**t)) / (math.sqrt(v / (1 - 0.999**t)) + 1e-8) for a, mm, v in zip(w, mom, sq)]
        if os.environ.get('LEARN_VERBOSE') and (epoch % 25 == 0 or epoch == EPOCHS - 1):
            print(f'epoch {epoch} loss {loss / total:.4f}', file=sys.stderr)
    return w


def counts(w, qs):
    """(top-1, top-5, n) hits of `qs` ranked by `w`."""
    ranks = [rank_of_hit(w, q) for q in qs]
    return sum(r == 0 for r in ranks), sum(r is not None and r < 5 for r in ranks), len(qs)


def table(title, rows):
    """rows: (set, hand (t1, t5, n), learned (t1, t5, n))."""
    print(f'\n{title}')
    print(f'| held out | n | hand-set top-1 / top-5 | learned top-1 / top-5 | top-1 +/- |')
    print('|---|---|---|---|---|')
    for s, h, l in rows:
        n = h[2]
        if not n:
            continue
        print(f'| {s} | {n} | {h[0] / n:.3f} / {h[1] / n:.3f} | {l[0] / n:.3f} / {l[1] / n:.3f} | {l[0] - h[0]:+d} |')


def aggregate(label, rows):
    if not rows:
        return (label, (0, 0, 0), (0, 0, 0))
    h1 = sum(h[0] for _, h, _ in rows)
    l1 = sum(l[0] for _, _, l in rows)
    h5 = sum(h[1] for _, h, _ in rows)
    l5 = sum(l[1] for _, _, l in rows)
    n = sum(h[2] for _, h, _ in rows)
    return (label, (h1, h5, n), (l1, l5, n))


def held_out(kind, key, q):
    """Whether fold (kind, key) holds query q out of its training set."""
    if kind == 'a':
        return q['set'] == key
    if kind == 'b':
        return (q['line'] % 2 == 0) == key  # key True: the odd lines (1-based) are out
    return q['set'] in key


_QUERIES = []


def _fold(args):
    names, kind, key = args
    return train(names, [q for q in _QUERIES if q['set'] in TRAIN and not held_out(kind, key, q)])


def cv(names, queries):
    hand = hand_weights(names)
    by_set = {}
    for q in queries:
        by_set.setdefault(q['set'], []).append(q)
    # every fold's training set: (a) leave one native set out (the other
    # native sets and every third-party dev set train); (b) odd / even lines
    # of every dev set (line 1 is odd); (c) leave one third-party set out
    # (azure and mixed share their requests: out together)
    third_out = [['azure', 'mixed'], ['authored'], ['turns'], ['bfcl']]
    folds = [('a', h) for h in NATIVE_HELD] + [('b', True), ('b', False)] + [('c', tuple(h)) for h in third_out]
    jobs = int(os.environ.get('LEARN_JOBS', 2))
    _QUERIES[:] = queries  # the workers inherit them (fork)
    args = [(names, kind, key) for kind, key in folds]
    if jobs > 1:
        import multiprocessing
        with multiprocessing.get_context('fork').Pool(jobs) as pool:
            weights = pool.map(_fold, args)
    else:
        weights = [_fold(a) for a in args]
    trained = dict(zip(folds, weights))
    rows = []
    for held in NATIVE_HELD:
        w = trained[('a', held)]
        rows.append((held, counts(hand, by_set[held]), counts(w, by_set[held])))
    rows.append(aggregate('**all six**', rows))
    table('(a) leave one native dev set out (trained on the others + native + azure, mixed, authored, multi-turn, BFCL live)', rows)
    rows = []
    for s in NATIVE_ALL + THIRD + SANITY:
        if s not in by_set:
            continue
        # a line is tested by the weights trained on the other half
        pairs = [(trained[('b', q['line'] % 2 == 0)], q) for q in by_set[s]]
        h = counts(hand, by_set[s])
        ranks = [rank_of_hit(w, q) for w, q in pairs]
        rows.append((s, h, (sum(r == 0 for r in ranks), sum(r is not None and r < 5 for r in ranks), len(ranks))))
    rows.append(aggregate('**six native held-out sets**', [r for r in rows if r[0] in NATIVE_HELD]))
    rows.append(aggregate('**third-party**', [r for r in rows if r[0] in THIRD]))
    table('(b) odd / even lines (trained on one half of every dev set, tested on the other; both ways)', rows)
    rows = []
    for held in third_out:
        w = trained[('c', tuple(held))]
        for s in held:
            rows.append((s, counts(hand, by_set[s]), counts(w, by_set[s])))
    table('(c) leave one third-party set out (trained on every other dev set)', rows)


def main():
    args = sys.argv[1:]
    if args and args[0] == '--cv':
        names, _, queries = load(args[1])
        cv(names, queries)
        return
    if args and args[0] == '--eval':
        w = json.load(open(args[1]))['weights']
        names, _, queries = load(args[2])
        wv = [w[n] for n in names]
        rows = []
        for s in NATIVE_ALL + THIRD + SANITY:
            qs = [q for q in queries if q['set'] == s]
            if qs:
                rows.append((s, counts(hand_weights(names), qs), counts(wv, qs)))
        table('in sample (the weights against the hand-set fusion)', rows)
        return
    if not args:
        sys.exit(__doc__)
    names, depth, queries = load(args[0])
    w = train(names, [q for q in queries if q['set'] in TRAIN])
    out = {'depth': depth, 'temperature': T, 'l2': L2, 'epochs': EPOCHS,
           'weights': {n: round(x, 6) for n, x in zip(names, w)}}
    text = json.dumps(out, indent=1) + '\n'
    if len(args) > 1:
        open(args[1], 'w').write(text)
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main()
