// The official TypeScript SDK client (@modelcontextprotocol/client, pinned in
// package.json) driving `quiver mcp serve` the way an agent host would, for
// crates/cli/tests/mcp_sdk.rs. It lives beside package.json so that the bare
// import resolves to the pinned package, as in any user's project.
//
//   node sdk_client.mjs REVISION --url URL
//   node sdk_client.mjs REVISION -- COMMAND ARGS...   (stdio; env passed through)
//
// REVISION is 2025-11-25 (the SDK's default `legacy` mode: initialize) or
// 2026-07-28 (`versionNegotiation: { mode: { pin } }`: server/discover, then
// stateless requests with the `_meta` envelope). Prints one JSON summary line
// on stdout; the Rust test asserts on it. The script only records what it saw:
// an SDK exception in a step is recorded in that step, not thrown, so the
// test's message names the step that broke.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [revision, mode, ...rest] = process.argv.slice(2);
if (!revision || (mode !== '--url' && mode !== '--')) {
    console.error('usage: sdk_client.mjs REVISION (--url URL | -- COMMAND ARGS...)');
    process.exit(2);
}
const transport =
    mode === '--url'
        ? new StreamableHTTPClientTransport(new URL(rest[0]))
        : new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: 'inherit' });

const versionNegotiation = revision === '2025-11-25' ? { mode: 'legacy' } : { mode: { pin: revision } };
const client = new Client({ name: 'quiver-sdk-test-ts', version: '1.0.0' }, { versionNegotiation });

const text = result => (result.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
// A tool result as the summary records it; an SDK exception (a JSON-RPC error
// or a client-side refusal) as `error`.
async function step(fn) {
    try {
        const result = await fn();
        return { is_error: result.isError === true, text: text(result), meta: result._meta ?? null };
    } catch (e) {
        return { error: { code: e.code ?? null, message: String(e.message ?? e) } };
    }
}

const summary = { sdk: 'typescript', revision };
// Set when a search answers with the tail token (2026-07-28), sent back on the
// next list so that the loaded tool is listed, as quiver's docs describe.
let tail = null;
let listChanged = 0;
try {
    client.setNotificationHandler('notifications/tools/list_changed', () => {
        listChanged += 1;
    });
    await client.connect(transport);
    summary.protocol_version = client.getNegotiatedProtocolVersion() ?? null;
    summary.server_name = client.getServerVersion()?.name ?? null;

    summary.head = (await client.listTools()).tools.map(t => t.name);

    const search = await step(() =>
        client.callTool({ name: 'tool_search', arguments: { query: 'overview of the project structure' } })
    );
    tail = search.meta?.['quiver/tail'] ?? null;
    summary.search = { ...search, meta: undefined, tail_token: tail !== null };

    // A session (2025-11-25) is told of the change; the notification may
    // trail the call's answer, so wait for it (a ceiling, not a guess).
    for (let waited = 0; revision === '2025-11-25' && listChanged === 0 && waited < 10000; waited += 50) {
        await new Promise(resolve => setTimeout(resolve, 50));
    }
    // A fresh list, not the SDK's cached one: the search changed it.
    const params = tail ? { _meta: { 'quiver/tail': tail } } : undefined;
    summary.after_search = (await client.listTools(params, { cacheMode: 'refresh' })).tools.map(t => t.name);
    summary.list_changed_seen = listChanged;

    summary.loaded_call = await step(() => client.callTool({ name: 'project_map', arguments: {} }));

    const items = { items: [{ content: 'ship it', status: 'pending' }] };
    summary.alias_call = await step(() => client.callTool({ name: 'todo_write', arguments: items }));
    summary.canonical_call = await step(() => client.callTool({ name: 'checklist_write', arguments: items }));

    // `path` is a string in read_file's schema.
    summary.bad_argument = await step(() => client.callTool({ name: 'read_file', arguments: { path: 42 } }));
} catch (e) {
    summary.fatal = String(e.stack ?? e);
}
try {
    await client.close();
} catch (e) {
    summary.close_error = String(e);
}
console.log(JSON.stringify(summary));
process.exit(0);
