"""The official Python SDK client (PyPI `mcp`, the version `.ci/run` installs)
driving `quiver mcp serve` the way an agent host would, for
crates/cli/tests/mcp_sdk.rs.

    python sdk_client.py REVISION --url URL
    python sdk_client.py REVISION -- COMMAND ARGS...   (stdio; env passed through)

REVISION is 2025-11-25 (`mode="legacy"`: the initialize handshake) or
2026-07-28 (`mode="auto"`: `server/discover`, and the SDK's newest revision the
answer offers; then stateless requests with the `_meta` envelope). Not
`mode="2026-07-28"`, which adopts the revision without asking the server:
`auto` also checks that quiver's discover answer leads the SDK to 2026-07-28
(the test asserts the negotiated version; a fallback to initialize fails it). Prints one JSON summary line on stdout; the Rust test
asserts on it. The script only records what it saw: an SDK exception in a step
is recorded in that step, not raised, so the test's message names the step
that broke.
"""

import json
import os
import sys
import traceback

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


def usage() -> None:
    print("usage: sdk_client.py REVISION (--url URL | -- COMMAND ARGS...)", file=sys.stderr)
    sys.exit(2)


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def step(call):
    """A tool result as the summary records it; an SDK exception (a JSON-RPC
    error or a client-side refusal) as `error`."""
    try:
        result = await call()
    except MCPError as e:
        return {"error": {"code": e.code, "message": str(e)}}
    except Exception as e:  # any other refusal is a finding, not a crash
        return {"error": {"code": None, "message": f"{type(e).__name__}: {e}"}}
    return {"is_error": bool(result.is_error), "text": text(result), "meta": result.meta}


async def main() -> None:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] not in ("--url", "--"):
        usage()
    revision, how, rest = args[0], args[1], args[2:]
    if how == "--url":
        server = rest[0]
    else:
        server = StdioServerParameters(command=rest[0], args=rest[1:], env=dict(os.environ))
    mode = "legacy" if revision == "2025-11-25" else "auto"

    list_changed = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            list_changed.set()

    summary: dict = {"sdk": "python", "revision": revision}
    try:
        async with Client(
            server,
            mode=mode,
            message_handler=on_message,
            client_info=types.Implementation(name="quiver-sdk-test-py", version="1.0.0"),
        ) as client:
            summary["protocol_version"] = client.protocol_version
            summary["server_name"] = client.server_info.name if client.server_info else None
            summary["head"] = [t.name for t in (await client.list_tools()).tools]

            search = await step(
                lambda: client.call_tool("tool_search", {"query": "overview of the project structure"})
            )
            # The tail token (2026-07-28) goes back on the next list, so that
            # the loaded tool is listed, as quiver's docs describe.
            tail = (search.get("meta") or {}).get("quiver/tail")
            summary["search"] = {k: v for k, v in search.items() if k != "meta"} | {"tail_token": tail is not None}

            if revision == "2025-11-25":
                # A session is told of the change; the notification may trail
                # the call's answer. A ceiling, not a guess.
                with anyio.move_on_after(10):
                    await list_changed.wait()
            summary["list_changed_seen"] = int(list_changed.is_set())
            meta = {"quiver/tail": tail} if tail is not None else None
            # A fresh list, not the SDK's cached one: the search changed it.
            listed = await client.list_tools(meta=meta, cache_mode="refresh")
            summary["after_search"] = [t.name for t in listed.tools]

            summary["loaded_call"] = await step(lambda: client.call_tool("project_map", {}))

            items = {"items": [{"content": "ship it", "status": "pending"}]}
            summary["alias_call"] = await step(lambda: client.call_tool("todo_write", items))
            summary["canonical_call"] = await step(lambda: client.call_tool("checklist_write", items))

            # `path` is a string in read_file's schema.
            summary["bad_argument"] = await step(lambda: client.call_tool("read_file", {"path": 42}))
    except BaseException:  # noqa: BLE001 - recorded, the test shows it
        summary["fatal"] = traceback.format_exc()
    print(json.dumps(summary, default=str))


if __name__ == "__main__":
    anyio.run(main)
