# quiver RLM bootstrap: a persistent Python REPL driven by quiver over a small
# JSON-lines protocol. quiver writes one request per line to our stdin and
# reads one message per line from our stdout; user code never sees either
# stream (its print() goes to a bounded capture, raw fd 1 goes to stderr).
# Child-model calls (sub_query*) go back to quiver over the same protocol:
# this process has no network and no API key.
import ast
import io
import json
import os
import sys
import threading
import traceback

_PROTO_OUT = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
_PROTO_IN = os.fdopen(os.dup(0), "r", encoding="utf-8")
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.dup2(2, 1)
sys.stdin = open(os.devnull, "r")

BATCH_CAP = 16
_LOCK = threading.Lock()
_QUERY_ID = [0]


def _send(message):
    _PROTO_OUT.write(json.dumps(message, ensure_ascii=False) + "\n")
    _PROTO_OUT.flush()


def _recv():
    line = _PROTO_IN.readline()
    if not line:
        os._exit(0)
    return json.loads(line)


class SubQueryError(RuntimeError):
    """A child-model call failed; `partial` holds the answers that did arrive (None where one failed)."""

    def __init__(self, message, partial=None):
        super().__init__(message)
        self.partial = partial


class _Finalize(BaseException):
    def __init__(self, payload):
        super().__init__("finalize")
        self.payload = payload


def _item(entry, context):
    if isinstance(entry, str):
        prompt, ctx = entry, context
    elif isinstance(entry, (tuple, list)) and len(entry) == 2:
        prompt, ctx = entry
    elif isinstance(entry, dict) and "prompt" in entry:
        prompt, ctx = entry["prompt"], entry.get("context", context)
    else:
        raise TypeError("each prompt is a str, a (prompt, context) pair or a dict with 'prompt' (got %s)" % type(entry).__name__)
    if not isinstance(prompt, str):
        raise TypeError("a prompt must be a str, not %s" % type(prompt).__name__)
    if ctx is not None and not isinstance(ctx, str):
        ctx = json.dumps(ctx, ensure_ascii=False, default=str) if isinstance(ctx, (dict, list)) else str(ctx)
    return {"prompt": prompt, "context": ctx}


def _ask(kind, items):
    with _LOCK:
        _QUERY_ID[0] += 1
        qid = _QUERY_ID[0]
        _send({"type": "query", "id": qid, "kind": kind, "items": items})
        while True:
            message = _recv()
            # A reply to a query that an interrupt abandoned is stale: skip it.
            if message.get("op") == "reply" and message.get("id") == qid:
                break
    if message.get("error"):
        raise SubQueryError(message["error"])
    results = message.get("results", [])
    failed = [i for i, r in enumerate(results) if not r.get("ok")]
    if failed:
        details = "; ".join("#%d: %s" % (i, results[i].get("error", "failed")) for i in failed[:4])
        raise SubQueryError(
            "%d of %d child queries failed (%s)" % (len(failed), len(results), details),
            [r.get("text") if r.get("ok") else None for r in results],
        )
    return [r.get("text", "") for r in results]


def sub_query(prompt, context=None, timeout_secs=None):
    """One child-model completion; returns its text. The session's configured timeout applies."""
    return _ask("query", [_item(prompt, context)])[0]


def sub_query_batch(prompts, context=None, timeout_secs=None):
    """Up to 16 child-model completions run concurrently; returns their texts in order."""
    prompts = list(prompts)
    if len(prompts) > BATCH_CAP:
        raise ValueError(
            "sub_query_batch takes at most %d prompts per call (got %d): split the list, or use sub_query_map, which batches for you"
            % (BATCH_CAP, len(prompts))
        )
    if not prompts:
        return []
    return _ask("query", [_item(p, context) for p in prompts])


def sub_query_map(fn_or_prompt, items, timeout_secs=None):
    """One child query per item, in batches of 16: fn(item) builds each prompt, or a prompt string is followed by the item."""
    items = list(items)
    if callable(fn_or_prompt):
        prompts = [fn_or_prompt(item) for item in items]
    elif isinstance(fn_or_prompt, str):
        prompts = [{"prompt": fn_or_prompt, "context": item} for item in items]
    else:
        raise TypeError("sub_query_map needs a function or a prompt string first")
    out = []
    for start in range(0, len(prompts), BATCH_CAP):
        out.extend(_ask("query", [_item(p, None) for p in prompts[start:start + BATCH_CAP]]))
    return out


def sub_rlm(prompt, context=None, timeout_secs=None):
    """A nested RLM session over `context` (depth-limited): a child model writes Python for it until it calls finalize(); returns the finalized value."""
    answer = _ask("rlm", [_item(prompt, context)])[0]
    try:
        return json.loads(answer)
    except ValueError:
        return answer


def finalize(value, confidence=None):
    """End this eval with a JSON-serializable result (strings become text handles, the rest JSON handles)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TypeError("finalize needs a JSON-serializable value (dict, list, str, number, bool, None): %s" % e)
    if confidence is not None and not isinstance(confidence, (int, float, str)):
        raise TypeError("confidence is a number or a short string")
    raise _Finalize({"value": value, "confidence": confidence})


FINAL = finalize


class _Capture(io.TextIOBase):
    """Keeps the first `limit` characters written and counts the rest."""

    def __init__(self, limit):
        super().__init__()
        self.parts = []
        self.size = 0
        self.limit = limit
        self.dropped = 0

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        room = self.limit - self.size
        if room > 0:
            kept = text[:room]
            self.parts.append(kept)
            self.size += len(kept)
            self.dropped += len(text) - len(kept)
        else:
            self.dropped += len(text)
        return len(text)

    def value(self):
        return "".join(self.parts)


_GLOBALS = {"__name__": "__rlm__", "__builtins__": __builtins__}


def _user_traceback(exc):
    tb = exc.__traceback__
    # Drop the bootstrap's own frames: the model wrote only <rlm_eval>.
    while tb is not None and tb.tb_frame.f_code.co_filename != "<rlm_eval>":
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()


def _eval(request):
    limit = int(request.get("capture_chars", 1 << 20))
    out, err = _Capture(limit), _Capture(limit)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    reply = {"type": "result", "id": request["id"]}
    try:
        # The host's wall-time limit (and its interrupt) starts here: an
        # interrupt that came while the request was still being read would
        # have been taken for a stale one and the eval would run unchecked.
        _send({"type": "started", "id": request["id"]})
        tree = ast.parse(request["code"], "<rlm_eval>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<rlm_eval>", "exec"), _GLOBALS)
        if last is not None:
            value = eval(compile(last, "<rlm_eval>", "eval"), _GLOBALS)
            if value is not None:
                text = repr(value)
                reply["value"] = text[:limit]
                reply["value_chars"] = len(text)
    except _Finalize as f:
        reply["final"] = f.payload
    except KeyboardInterrupt:
        reply["error"] = "KeyboardInterrupt"
        reply["interrupted"] = True
    except SystemExit as e:
        reply["error"] = "SystemExit(%r): exiting is not allowed inside rlm_eval; the REPL keeps running" % (e.code,)
    except SyntaxError as e:
        reply["error"] = "".join(traceback.format_exception_only(type(e), e)).rstrip()
    except BaseException as e:  # noqa: BLE001 - every user error is reported, never fatal
        reply["error"] = _user_traceback(e)
    finally:
        sys.stdout, sys.stderr = saved
    reply["stdout"] = out.value()
    reply["stderr"] = err.value()
    reply["stdout_dropped"] = out.dropped
    reply["stderr_dropped"] = err.dropped
    return reply


def _load(path, kind):
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        text = f.read()
    return json.loads(text) if kind == "json" else text


def main():
    context = _load(sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else None
    _GLOBALS.update(
        _context=context, _ctx=context, content=context,
        sub_query=sub_query, sub_query_batch=sub_query_batch, sub_query_map=sub_query_map, sub_rlm=sub_rlm,
        finalize=finalize, FINAL=finalize, SubQueryError=SubQueryError,
    )
    _send({"type": "ready", "python": sys.version.split()[0], "pid": os.getpid()})
    while True:
        try:
            request = _recv()
            if request.get("op") == "eval":
                _send(_eval(request))
            # Anything else (a stale reply) is ignored.
        except KeyboardInterrupt:
            # An interrupt that arrived between evals: nothing to stop.
            continue


if __name__ == "__main__":
    main()
