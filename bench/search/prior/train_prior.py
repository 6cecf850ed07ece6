#!/usr/bin/env python3
"""Trains the built-in tools' intent prior: a softmax classifier
over quiver's own tools on sentence vectors, added to the fused score of the
built-in tools it knows (crates/search/src/semantic/prior.rs).

Training texts (never a check set: native-check, native-daily-check,
native-everyday-check2, native-blind-check3,
Seal-Tools):
  - each built-in tool's embedded description, manifest phrasings and example
    requests (crates/engine/manifest/examples.toml), from the exported docs;
  - the second blind batch of examples (bench/search/experiments/examples-b.toml),
    used here only: indexed lexically it cost the older dev sets (bench/search/README.md);
  - the native dev sets' requests (NATIVE_DEV below); `--cv` leaves each out in turn;
  - with --other, requests for third-party tools (the azure prompts and the
    BFCL dev sets' requests) as one more class, "not one of quiver's tools", so
    a request for an MCP server's tool does not lend its weight to a built-in one.

Two classifiers on the same rows, their probabilities averaged: softmax
regression, and with `--hidden H` (> 0) a network with one hidden layer of H
ReLU units. The regression weighs words one at a time; the hidden layer can
weigh them together. Averaged, neither one's slips decide alone; under leave-one-set-out the pair gained 37 requests first (61 in
the top five) on the dev sets for the static embedding, added as a log
(bench/search/runs/2026-12-05/prior-ensemble.txt).

The vectors are the static embedding's (crates/search/static-model): one prior
serves every model, a transformer's ranking reading requests through the
static model for it. `--cv` takes any model's hand scores: MiniLM's fusion
with this prior beat it with a prior trained on MiniLM's own vectors
(bench/search/runs/2026-12-05/one-prior.txt).

Deterministic: full batch, Adam, fixed epochs, float64, a fixed seed.

usage: train_prior.py DOCS VECTORS OUT [--other] [--l2 X] [--epochs N] [--other-weight K] [--batches b,c]
                      [--hidden H] [--hidden-epochs N]
       train_prior.py DOCS VECTORS - [--other] --cv HAND_SCORES [--w W] [--log-w W]   (leave one dev set out)
  DOCS:    `quiver bench search --native --export-docs FILE`
  VECTORS: `[text, vector]` lines for every training text (embed_texts example)
  OUT:     the weights file (crates/search/src/semantic/static_prior.json)
`--texts` prints the training texts (JSON strings, one a line) and exits:
  train_prior.py DOCS - - --texts | cargo run ... --example embed_texts -- MODEL VECTORS
Needs numpy (`pip install numpy`).
"""
import json
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
OTHER = "(other)"
# Texts whose vectors identify the model at load time: a prior trained on one
# model's vectors means nothing on another's.
PROBES = ["read the file src/main.rs", "is the working tree clean?", "open a pull request for this branch"]


def doc_text(d):
    """The text a tool's description row is embedded as (semantic::doc_text)."""
    short = d["name"].rsplit("__", 1)[-1]
    words, prev_lower = "", False
    for c in short:
        if c in "_-./":
            words += " "
            prev_lower = False
        else:
            if c.isupper() and prev_lower:
                words += " "
            prev_lower = c.islower()
            words += c.lower()
    words = " ".join(words.split())
    desc = d["description"].strip()
    return f"{words}: {desc}" if desc else words


def jsonl(p):
    return [json.loads(line) for line in open(p, encoding="utf-8") if line.strip()]


# quiver's own everyday request sets that are dev sets (bench/search/README.md);
# the check sets (native-check, native-daily-check, native-everyday-check2,
# native-blind-check3) never.
NATIVE_DEV = {
    "native": "data/queries/native.jsonl",
    "native.ev": "dev/native-everyday.jsonl",
    "daily.dev": "queries/native-daily-dev.jsonl",
    "daily.dev2": "queries/native-daily-dev2.jsonl",
    "daily.dev3": "queries/native-daily-dev3.jsonl",
    "daily.dev4": "queries/native-daily-dev4.jsonl",
    "daily.dev5": "queries/native-daily-dev5.jsonl",
    "blind.dev6": "queries/native-blind-dev6.jsonl",
    "blind.dev7": "queries/native-blind-dev7.jsonl",
    "blind.dev8": "queries/native-blind-dev8.jsonl",
    "blind.dev9": "queries/native-blind-dev9.jsonl",
    "blind.dev10": "queries/native-blind-dev10.jsonl",
    "blind.dev11": "queries/native-blind-dev11.jsonl",
    "blind.dev12": "queries/native-blind-dev12.jsonl",
}
# blind.dev13 and blind.dev14 (writers I and J) are measured, not trained on.
# Adding dev11 and dev12 (writers G and H) to training was measured on them:
# see bench/search/runs/2026-12-05/one-prior.txt.


def dev_rows(leave_out=None):
    """The native dev sets' requests, each with every tool it accepts."""
    rows = []
    for key, p in NATIVE_DEV.items():
        if key != leave_out:
            rows += [(q["query"], e) for q in jsonl(HERE.parent / p) for e in q["expected"]]
    return rows


# Blind batches of example requests used here only (bench/search/experiments/).
BATCHES = "b"


def training_rows(docs_path, other, dev=True, leave_out=None, batches=BATCHES):
    docs = json.load(open(docs_path, encoding="utf-8"))["tools"]
    extra = [tomllib.load(open(HERE.parent / f"experiments/examples-{k}.toml", "rb"))["tools"]
             for k in batches.split(",") if k]
    rows = []
    for d in sorted(docs, key=lambda d: d["name"]):
        n = d["name"]
        rows.append((doc_text(d), n))
        rows += [(t.strip(), n) for t in d.get("phrasings", []) + d.get("examples", []) if t.strip()]
        for batch in extra:
            rows += [(t.strip(), n) for t in batch.get(n, {}).get("examples", []) if t.strip()]
    if dev:
        rows += dev_rows(leave_out)
    if other:
        for p in ["data/queries/azure-mcp.jsonl", "dev/bfcl-authored.jsonl", "dev/bfcl-multiturn.jsonl",
                  "generalization/bfcl-live.jsonl"]:
            rows += [(q["query"], OTHER) for q in jsonl(HERE.parent / p)]
    return rows


def design(rows, vec, classes, other_weight):
    """The training matrix, labels (as indices and one-hot) and each row's
    weight in the loss: every class weighs the same, the other class
    `other_weight` times that ("other" has thousands of rows, a tool about
    forty)."""
    import numpy as np
    ix = {c: i for i, c in enumerate(classes)}
    X = np.array([vec[t] for t, _ in rows], dtype=np.float64)
    y = np.array([ix[n] for _, n in rows])
    n = len(rows)
    C = len(classes)
    counts = np.bincount(y, minlength=C).astype(np.float64)
    class_w = n / (C * counts)
    if OTHER in ix:
        class_w[ix[OTHER]] *= other_weight
    return X, y, np.eye(C)[y], class_w[y]


def adam(params, grads, m, v, ep, lr):
    """One Adam step (beta 0.9 / 0.999), in place."""
    import numpy as np
    b1, b2 = 0.9, 0.999
    for k, (p, g) in enumerate(zip(params, grads)):
        m[k] = b1 * m[k] + (1 - b1) * g
        v[k] = b2 * v[k] + (1 - b2) * g * g
        p -= lr * (m[k] / (1 - b1 ** ep)) / (np.sqrt(v[k] / (1 - b2 ** ep)) + 1e-8)


def fit(rows, vec, other, l2, epochs, other_weight):
    """Softmax regression, every class weighing the same in the loss."""
    import numpy as np
    classes = sorted({n for _, n in rows if n != OTHER}) + ([OTHER] if other else [])
    X, y, Y, sample_w = design(rows, vec, classes, other_weight)
    n, dim = X.shape
    W = np.zeros((dim, len(classes))); b = np.zeros(len(classes))
    m = [np.zeros_like(W), np.zeros_like(b)]; v = [np.zeros_like(W), np.zeros_like(b)]
    for ep in range(1, epochs + 1):
        Z = X @ W + b
        Z -= Z.max(1, keepdims=True)
        P = np.exp(Z); P /= P.sum(1, keepdims=True)
        G = (P - Y) * sample_w[:, None] / n
        adam((W, b), [X.T @ G + l2 * W, G.sum(0)], m, v, ep, 0.05)
    acc = float(((X @ W + b).argmax(1) == y).mean())
    return classes, W, b, acc


def fit_hidden(rows, vec, classes, hidden, epochs, other_weight, seed=0):
    """A network with one hidden layer of ReLU units, trained like `fit`
    (the same row weights, full batch, Adam at 0.01, no decay)."""
    import numpy as np
    X, _, Y, sample_w = design(rows, vec, classes, other_weight)
    n, dim = X.shape
    C = len(classes)
    rng = np.random.default_rng(seed)
    P = [rng.normal(0, 1 / np.sqrt(dim), (dim, hidden)), np.zeros(hidden), np.zeros((hidden, C)), np.zeros(C)]
    m = [np.zeros_like(p) for p in P]; v = [np.zeros_like(p) for p in P]
    for ep in range(1, epochs + 1):
        A = X @ P[0] + P[1]
        H = np.maximum(A, 0)
        Z = H @ P[2] + P[3]
        Z -= Z.max(1, keepdims=True)
        Q = np.exp(Z); Q /= Q.sum(1, keepdims=True)
        G = (Q - Y) * sample_w[:, None] / n
        GH = (G @ P[2].T) * (A > 0)
        adam(P, (X.T @ GH, GH.sum(0), H.T @ G, G.sum(0)), m, v, ep, 0.01)
    return P


def softmax(z):
    import numpy as np
    e = np.exp(z - z.max())
    return e / e.sum()


def probabilities(q, W, b, hidden):
    """What the prior says of one query vector (prior.rs does the same)."""
    import numpy as np
    q = np.array(q)
    p = softmax(q @ W + b)
    if hidden is not None:
        p = 0.5 * p + 0.5 * softmax(np.maximum(q @ hidden[0] + hidden[1], 0) @ hidden[2] + hidden[3])
    return p


# What a known tool's score gains, `w p + log_w ln(p + FLOOR)` (fusion.rs).
FLOOR = 1e-4


def cross_validate(docs_path, vec, scores_path, other, l2, epochs, other_weight, w, log_w, batches, hidden, hidden_epochs):
    """Leave one native dev set out: the prior trained without it (with and
    without the other dev sets' requests), added as `w p + log_w ln(p)` to
    the hand-set fusion's scores (`lab_eval --prior off --scores FILE`)."""
    import math
    import numpy as np
    hand = {}
    for line in open(scores_path, encoding="utf-8"):
        r = json.loads(line)
        hand.setdefault(r["set"], []).append(r)
    print("| held out | n | fused, no prior | + prior (examples only) | + prior (examples + other dev sets) | its top-5 |")
    print("|---|---|---|---|---|---|")
    total = [0, 0, 0, 0, 0]
    # the both-halves rule: the leave-one-out hits (top-1 + top-5) on odd and even lines
    halves = [0, 0]
    for key in NATIVE_DEV:
        cols = []
        for dev in (False, True):
            rows = training_rows(docs_path, other, dev, key, batches)
            classes, W, b, _ = fit(rows, vec, other, l2, epochs, other_weight)
            net = fit_hidden(rows, vec, classes, hidden, hidden_epochs, other_weight) if hidden else None
            ix = {c: i for i, c in enumerate(classes)}
            hits = base = set_top5 = 0
            for line, r in enumerate(hand[key]):
                p = probabilities(vec[r["query"]], W, b, net)
                sc = r["scores"]
                ranked = lambda f: sorted(sc, key=lambda t: (-f(t), t))
                base += ranked(lambda t: sc[t])[0] in r["expected"]
                gain = lambda t: w * p[ix[t]] + log_w * math.log(p[ix[t]] + FLOOR) if t in ix else 0.0
                order = ranked(lambda t: sc[t] + gain(t))
                hit = order[0] in r["expected"]
                hits += hit
                if dev:
                    in5 = any(t in r["expected"] for t in order[:5])
                    set_top5 += in5
                    halves[line % 2] += hit + in5
            cols.append(hits)
        n = len(hand[key])
        print(f"| {key} | {n} | {base} | {cols[0]} | {cols[1]} | {set_top5} |")
        for i, x in enumerate((n, base, *cols, set_top5)):
            total[i] += x
    print(f"| all | {total[0]} | {total[1]} | {total[2]} | {total[3]} | {total[4]} |")
    print(f"halves (last column, top-1 + top-5): odd lines {halves[0]}, even lines {halves[1]}")


def main():
    args = sys.argv[1:]
    flag = lambda f: f in args and (args.remove(f) or True)
    def opt(f, default):
        if f in args:
            i = args.index(f); v = args[i + 1]; del args[i:i + 2]; return v
        return default
    other = flag("--other")
    texts_only = flag("--texts")
    l2 = float(opt("--l2", "0"))
    epochs = int(opt("--epochs", "500"))
    other_weight = float(opt("--other-weight", "1"))
    cv = opt("--cv", None)
    batches = opt("--batches", BATCHES)
    w = float(opt("--w", "0"))
    log_w = float(opt("--log-w", "0.15"))
    hidden = int(opt("--hidden", "512"))
    hidden_epochs = int(opt("--hidden-epochs", "150"))
    docs_path, vec_path, out = args
    rows = training_rows(docs_path, other, batches=batches)
    if texts_only:
        for t in sorted({t for t, _ in rows} | set(PROBES)):
            print(json.dumps(t))
        return
    vec = {}
    for line in open(vec_path, encoding="utf-8"):
        t, v = json.loads(line)
        vec[t] = v
    missing = [t for t, _ in rows if t not in vec] + [t for t in PROBES if t not in vec]
    if missing:
        sys.exit(f"{len(missing)} training texts have no vector, e.g. {missing[0]!r}: run embed_texts first")
    if cv:
        cross_validate(docs_path, vec, cv, other, l2, epochs, other_weight, w, log_w, batches, hidden, hidden_epochs)
        return
    classes, W, b, acc = fit(rows, vec, other, l2, epochs, other_weight)
    net = fit_hidden(rows, vec, classes, hidden, hidden_epochs, other_weight) if hidden else None
    r = lambda x: float(f"{x:.5g}")
    blob = {
        "about": "Built-in tools' intent prior: softmax(W q + b) over `classes` for a query vector q; "
                 "written by bench/search/prior/train_prior.py, do not edit by hand.",
        "model_probes": [{"text": t, "vector": [r(x) for x in vec[t]]} for t in PROBES],
        "classes": classes,
        "other": OTHER if other else None,
        "dim": W.shape[0],
        "weights": [[r(x) for x in W[:, c]] for c in range(len(classes))],
        "bias": [r(x) for x in b],
        # one row per hidden unit (dim wide), then one per class (hidden wide)
        "hidden": None if net is None else {
            "weights_in": [[r(x) for x in net[0][:, h]] for h in range(hidden)],
            "bias_in": [r(x) for x in net[1]],
            "weights_out": [[r(x) for x in net[2][:, c]] for c in range(len(classes))],
            "bias_out": [r(x) for x in net[3]],
        },
        "trained_on": {"rows": len(rows), "batches": batches, "l2": l2, "epochs": epochs, "other_weight": other_weight,
                       "hidden": hidden, "hidden_epochs": hidden_epochs, "train_accuracy": round(acc, 4)},
    }
    Path(out).write_text(json.dumps(blob, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows, {len(classes)} classes, train accuracy {acc:.3f} -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
