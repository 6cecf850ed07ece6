#!/usr/bin/env python3
"""A light MCP client over stdio: what quiver's gateway costs a relayed call.

One client process, no dependencies, that keeps `--inflight` `tools/call`
requests outstanding on one session (a new one goes out as each answer
comes in) against server-everything called directly and through
`quiver mcp serve` (the same server behind it, exposed directly), in
rounds. Reports per round: sequential p50/p99 latency (the paths' calls
interleaved one by one, so each is timed under the same load), calls/s with
`--inflight` outstanding, and the CPU per call of each process over that
phase (from /proc: quiver, and the server behind it). The client is lighter than an
rmcp client, so it keeps more calls in flight per wake-up, but it is one
Python process: its own speed caps the calls/s of both paths alike.

    npm ci --prefix crates/mcp/tests/node
    cargo build --profile bench-fast -p quiver-cli --bin quiver
    python3 bench/gateway/light_client.py --quiver target/bench-fast/quiver [--rounds 3] [--seconds 5] [--inflight 8]

`--quiver` may be given more than once (say, the binary before a change and
after it): each round then measures direct and every binary in turn, so they
are compared under the same machine load.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EVERYTHING = os.path.join(ROOT, "crates/mcp/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(pid):
    """Every process below `pid`: a sandboxed server sits under the sandbox's
    own helper processes, not directly under quiver."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        below = [child for child, p in parents.items() if p == parent]
        found.extend(below)
        queue.extend(below)
    return found


class Session:
    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0)
        self.buf = b""
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())

    def lines(self):
        while b"\n" not in self.buf:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise SystemExit("the server closed its output")
            self.buf += chunk
        *whole, self.buf = self.buf.split(b"\n")
        return whole

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def answer(self, wanted):
        while True:
            for line in self.lines():
                message = json.loads(line)
                if message.get("id") == wanted and "method" not in message:
                    return message

    def close(self):
        self.proc.stdin.close()
        self.proc.kill()
        self.proc.wait()


CALL = {"name": "echo", "arguments": {"message": "hi"}}


def open_session(command, list_first=True):
    """A session started as MCP clients start one, its server behind warmed up."""
    s = Session(command)
    s.answer(s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "light", "version": "1"}}))
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if list_first:
        # As MCP clients do before they call (Claude Code, Codex, the inspector).
        assert "result" in s.answer(s.request("tools/list", {}))
    first = s.answer(s.request("tools/call", CALL))  # starts the server behind a gateway
    assert "result" in first, first
    return s


def latencies(sessions, sequential):
    """Sequential calls, interleaved: call i goes to every session in turn
    (starting with a different one each time), so the paths are timed in the
    same moments under the same machine load and their difference is the
    gateway's, not the machine's drift between two measurements."""
    taken = [[] for _ in sessions]
    for i in range(sequential):
        for k in range(len(sessions)):
            j = (i + k) % len(sessions)
            started = time.perf_counter()
            sessions[j].answer(sessions[j].request("tools/call", CALL))
            taken[j].append(time.perf_counter() - started)
    for t in taken:
        t.sort()
    return [{"p50": t[len(t) // 2] * 1e6, "p99": t[int(len(t) * 0.99)] * 1e6} for t in taken]


def throughput(s, seconds, inflight):
    """Calls/s with `inflight` outstanding, and the CPU per call of the
    session's process and of the processes it started (over this phase only)."""
    pids = [s.proc.pid] + descendants(s.proc.pid)
    before = [cpu_seconds(p) for p in pids]
    started = time.perf_counter()
    for _ in range(inflight):
        s.request("tools/call", CALL)
    answered = 0
    while time.perf_counter() - started < seconds:
        for line in s.lines():
            if b'"result"' in line or b'"error"' in line:
                answered += 1
                s.request("tools/call", CALL)
    elapsed = time.perf_counter() - started
    after = [cpu_seconds(p) for p in pids]
    s.close()  # the calls still out go with it
    per_call = [(a - b) * 1e6 / answered for a, b in zip(after, before)]
    return {"rate": answered / elapsed, "cpu": per_call[0], "behind": sum(per_call[1:])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quiver", action="append", help="a quiver binary (repeat to compare binaries in one run)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--inflight", type=int, default=8)
    ap.add_argument("--sequential", type=int, default=500)
    ap.add_argument("--no-list", action="store_true",
                    help="call without listing tools first, as the runs before plain calls were relayed did")
    o = ap.parse_args()
    binaries = o.quiver or [os.path.join(ROOT, "target/bench-fast/quiver")]
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "gateway.toml")
        with open(config, "w") as f:
            f.write(f'[mcp_servers.everything]\ncommand = "node"\nargs = [{json.dumps(EVERYTHING)}, "stdio"]\n'
                    'expose = "direct"\n')
        def gateway(binary):
            return [binary, "mcp", "serve", "--mode", "yolo", "--config", config, "--workspace", tmp]
        print("| round | path | p50 us | +p50 us | p99 us | calls/s | of direct | CPU us/call | server behind us/call |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in range(1, o.rounds + 1):
            commands = [["node", EVERYTHING, "stdio"]] + [gateway(b) for b in binaries]
            sessions = [open_session(c, not o.no_list) for c in commands]
            time.sleep(0.5)
            lat = latencies(sessions, o.sequential)
            # Each round measures the paths in another order: no path always
            # runs first (or last) after the others warmed or loaded the machine.
            order = [(n - 1 + k) % len(sessions) for k in range(len(sessions))]
            runs = [None] * len(sessions)
            for k in order:
                runs[k] = throughput(sessions[k], o.seconds, o.inflight)
            d = dict(lat[0], **runs[0])
            print(f"| {n} | direct | {d['p50']:.0f} | 0 | {d['p99']:.0f} | {d['rate']:.0f} | 100% | {d['cpu']:.1f} | |",
                  flush=True)
            for binary, l, r in zip(binaries, lat[1:], runs[1:]):
                q = dict(l, **r)
                path = "quiver" if len(binaries) == 1 else binary
                print(f"| {n} | {path} | {q['p50']:.0f} | {q['p50'] - d['p50']:.0f} | {q['p99']:.0f} | {q['rate']:.0f} | "
                      f"{100 * q['rate'] / d['rate']:.0f}% | {q['cpu']:.1f} | {q['behind']:.1f} |", flush=True)

if __name__ == "__main__":
    main()
