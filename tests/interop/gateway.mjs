// `toolwire gateway` in front of real peers: `toolwire serve` over stdio
// and HTTP, a legacy TypeScript SDK v1 server (legacy-server.mjs) over stdio
// and stateful HTTP, and a PyPI mcp 2 server (python/mcp_modern_server.py,
// 2026-07-28) over stdio. Downstream: the TypeScript SDK v1 client (legacy
// era) over stdio and HTTP, the PyPI mcp 2 client
// (python/mcp_client_gateway.py, modern), the TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned to 2026-07-28: modern, answering
// input_required with its handlers) and the `toolwire` command (modern).
//
//   node gateway.mjs <toolwire binary> <URL of a running `toolwire serve --http`> <python of the mcp 2 venv>
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import {
  Checks,
  WAIT_MS,
  Wire,
  closeQuietly,
  connect,
  httpTransport,
  loopbackUrl,
  newClient,
  onlyText,
  until,
  withTimeout,
} from './lib.mjs';

const [bin, serveUrl, python] = process.argv.slice(2);
if (!bin || !serveUrl || !python) {
  console.error('usage: gateway.mjs BIN SERVE_URL PYTHON');
  process.exit(2);
}
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const checks = new Checks('gateway:');
const children = [];

/** Spawns `cmd args`, returning the child and the first http:// URL it prints on stderr. */
async function startPrinting(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let seen = '';
  const url = await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        seen += String(chunk);
        const m = seen.match(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
        if (m) resolve(m[0]);
      });
      child.on('exit', (code) => reject(new Error(`${cmd} exited with ${code}: ${seen}`)));
    }),
    30_000,
    `${cmd} prints its URL`,
  );
  return loopbackUrl(url);
}

function run(args) {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 60_000 }, (error, stdout, stderr) => resolve({ ok: !error, stdout, stderr }));
  });
}

const tsHttp = await startPrinting(process.execPath, [here('./legacy-server.mjs'), 'http', 'stateful']);
const dir = mkdtempSync(join(tmpdir(), 'toolwire-gateway-interop-'));
const config = join(dir, 'gateway.toml');
const q = JSON.stringify;
writeFileSync(
  config,
  `# The checks list once and expect every upstream, so start-up waits for
# all of them (a cold Python start on a busy machine takes seconds).
start_wait_ms = 60000

[upstreams.tw]
command = [${q(bin)}, "serve"]

[upstreams.twhttp]
url = ${q(loopbackUrl(serveUrl))}

[upstreams.ts]
command = [${q(process.execPath)}, ${q(here('./legacy-server.mjs'))}, "stdio"]

[upstreams.tshttp]
url = ${q(tsHttp)}

[upstreams.py]
command = [${q(python)}, ${q(here('./python/mcp_modern_server.py'))}, "stdio"]
# Known modern: no server/discover probe, whose 10 s limit a cold Python
# start on a busy machine can miss (the client would then try initialize).
protocol = "modern"
`,
);

const EXPECTED = ['tw__echo', 'twhttp__echo', 'ts__echo', 'tshttp__echo', 'py__echo', 'py__add', 'ts__add'];

const SAMPLED = { role: 'assistant', content: { type: 'text', text: 'from the client model' }, model: 'interop' };
const ROOTS = { roots: [{ uri: 'file:///interop', name: 'interop' }] };

/** A TS SDK v1 client with elicitation, answering with `answer`, and
 * sampling and roots. */
function tsClient(name) {
  const client = newClient(name, { elicitation: {}, sampling: {}, roots: {} });
  client.answer = async () => ({ action: 'decline' });
  client.withdrawn = [];
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    extra.signal.addEventListener('abort', () => client.withdrawn.push(request.params.message));
    return client.answer(request.params);
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => SAMPLED);
  client.setRequestHandler(ListRootsRequestSchema, async () => ROOTS);
  client.listChanges = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => client.listChanges.push(Date.now()));
  return client;
}

const opts = { timeout: WAIT_MS };

try {
  const client = tsClient('gateway-interop-stdio');
  const transport = new StdioClientTransport({
    command: bin,
    args: ['gateway', '--config', config],
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', TOOLWIRE_LOG: 'warn' },
  });
  const wire = new Wire(transport);

  await checks.check('TS SDK v1 client (legacy) over stdio: initialize with the gateway', async () => {
    await connect(client, transport);
    assert.equal(client.getServerVersion().name, 'toolwire-gateway');
  });

  await checks.check('tools/list: every upstream, prefixed, in upstream order', async () => {
    const { tools } = await client.listTools(undefined, opts);
    const names = tools.map((t) => t.name);
    for (const n of EXPECTED) assert.ok(names.includes(n), `${n} missing from ${names}`);
    const firstOf = (p) => names.findIndex((n) => n.startsWith(`${p}__`));
    const order = ['tw', 'twhttp', 'ts', 'tshttp', 'py'].map(firstOf);
    assert.deepEqual([...order].sort((a, b) => a - b), order, `upstream order: ${names}`);
  });

  await checks.check('a structured result of a PyPI mcp 2 upstream (modern) passes through', async () => {
    // Its `add` returns a model: JSON text and the same structuredContent.
    const r = await client.callTool({ name: 'py__add', arguments: { a: 1, b: 2 } }, undefined, opts);
    assert.deepEqual(JSON.parse(onlyText(r)), { sum: 3 });
    assert.deepEqual(r.structuredContent, { sum: 3 });
  });

  for (const [tool, label] of [
    ['ts__add', 'a TS SDK v1 upstream over stdio (legacy)'],
    ['tshttp__add', 'a TS SDK v1 upstream over HTTP (legacy)'],
    ['twhttp__add', 'toolwire serve over HTTP'],
  ]) {
    await checks.check(`a structured result of ${label} passes through`, async () => {
      const r = await client.callTool({ name: tool, arguments: { a: 1, b: 2 } }, undefined, opts);
      assert.deepEqual(r.structuredContent, { sum: 3 });
      assert.notEqual(r.isError, true);
    });
  }

  await checks.check('progress of a legacy upstream reaches the client', async () => {
    const seen = [];
    const r = await client.callTool(
      { name: 'ts__countdown', arguments: { steps: 3 } },
      undefined,
      { ...opts, onprogress: (p) => seen.push(p) },
    );
    assert.equal(onlyText(r), 'done after 3 steps');
    // On the wire: the three steps under the request's own token, all
    // before the result.
    const sent = wire.lastSent('tools/call', 'ts__countdown');
    const token = sent.params._meta.progressToken;
    const onWire = wire.notifications('notifications/progress').filter((n) => n.params.progressToken === token);
    assert.deepEqual(
      onWire.map((n) => n.params.progress),
      [1, 2, 3],
    );
    const resultAt = wire.received.findIndex((m) => m.id === sent.id);
    assert.ok(onWire.every((n) => wire.received.indexOf(n) < resultAt), 'progress after the result');
    // In the callback: SDK 1.x runs notification handlers a microtask after
    // responses, so it drops a last progress that arrives in the same read
    // as the result (see legacy-client.mjs); on a busy machine the earlier
    // steps can share that read too. What it delivers is in order.
    assert.deepEqual(
      seen.map((p) => p.progress),
      [1, 2, 3].slice(0, seen.length),
    );
  });

  await checks.check('confirm_action through the gateway, accepted (a real elicitation/create)', async () => {
    client.answer = async () => ({ action: 'accept', content: { confirm: true } });
    const r = await client.callTool({ name: 'tw__confirm_action', arguments: { action: 'deploy' } }, undefined, opts);
    assert.equal(onlyText(r), 'confirmed: deploy');
  });

  await checks.check('confirm_action through the gateway, declined', async () => {
    client.answer = async () => ({ action: 'decline' });
    const r = await client.callTool({ name: 'tw__confirm_action', arguments: { action: 'deploy' } }, undefined, opts);
    assert.equal(r.isError, true);
    assert.equal(onlyText(r), 'not confirmed: deploy');
  });

  await checks.check("a legacy upstream's own elicitation/create reaches the client, accepted and declined", async () => {
    client.answer = async () => ({ action: 'accept', content: { confirm: true } });
    const yes = await client.callTool({ name: 'ts__confirm', arguments: { action: 'deploy' } }, undefined, opts);
    assert.equal(onlyText(yes), 'confirmed: deploy');
    client.answer = async () => ({ action: 'decline' });
    const no = await client.callTool({ name: 'ts__confirm', arguments: { action: 'deploy' } }, undefined, opts);
    assert.equal(no.isError, true);
    assert.equal(onlyText(no), 'not confirmed: deploy');
  });

  await checks.check("a legacy upstream's sampling/createMessage and roots/list reach the client", async () => {
    const s = await client.callTool({ name: 'ts__sample', arguments: { prompt: 'hi' } }, undefined, opts);
    assert.equal(onlyText(s), 'model said: from the client model');
    const r = await client.callTool({ name: 'ts__roots', arguments: {} }, undefined, opts);
    assert.equal(onlyText(r), 'roots: file:///interop');
  });

  await checks.check("a legacy upstream that withdraws its elicitation: the client's request is cancelled too", async () => {
    // Nobody answers; the upstream gives up after 500 ms.
    client.answer = () => new Promise(() => {});
    const before = client.withdrawn.length;
    const r = await client.callTool(
      { name: 'ts__hurried_confirm', arguments: { action: 'go', ms: 500 } },
      undefined,
      opts,
    );
    assert.equal(onlyText(r), 'withdrawn: go');
    await until(() => client.withdrawn.length > before, WAIT_MS, 'notifications/cancelled for the elicitation');
  });

  await checks.check("a legacy upstream's list change reaches the client, and the new tool works", async () => {
    const before = client.listChanges.length;
    const r = await client.callTool({ name: 'ts__define', arguments: { name: 'fresh' } }, undefined, opts);
    assert.equal(onlyText(r), 'defined fresh');
    await until(() => client.listChanges.length > before, WAIT_MS, 'tools/list_changed');
    const { tools } = await client.listTools(undefined, opts);
    assert.ok(tools.some((t) => t.name === 'ts__fresh'), 'ts__fresh listed');
    const fresh = await client.callTool({ name: 'ts__fresh', arguments: {} }, undefined, opts);
    assert.equal(onlyText(fresh), 'fresh');
  });
  await closeQuietly(client);

  const gatewayUrl = await startPrinting(bin, ['gateway', '--config', config, '--http', '127.0.0.1:0']);
  const httpClient = tsClient('gateway-interop-http');
  await checks.check('TS SDK v1 client over HTTP: tools and confirm_action accepted', async () => {
    await connect(httpClient, httpTransport(gatewayUrl));
    const { tools } = await httpClient.listTools(undefined, opts);
    assert.ok(tools.some((t) => t.name === 'py__echo'));
    httpClient.answer = async () => ({ action: 'accept', content: { confirm: true } });
    const r = await httpClient.callTool(
      { name: 'tw__confirm_action', arguments: { action: 'ship' } },
      undefined,
      opts,
    );
    assert.equal(onlyText(r), 'confirmed: ship');
  });
  await closeQuietly(httpClient);

  const v2 = new ClientV2(
    { name: 'gateway-interop-v2', version: '2.4.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  v2.answer = async () => ({ action: 'accept', content: { confirm: true } });
  v2.setRequestHandler('elicitation/create', async (request) => v2.answer(request.params));
  v2.setRequestHandler('sampling/createMessage', async () => SAMPLED);
  v2.setRequestHandler('roots/list', async () => ROOTS);
  await checks.check('TypeScript SDK v2 client (modern) over HTTP: 2026-07-28, every upstream listed', async () => {
    await v2.connect(new HttpTransportV2(new URL(gatewayUrl)));
    assert.equal(v2.getNegotiatedProtocolVersion(), '2026-07-28');
    const { tools } = await v2.listTools();
    const names = tools.map((t) => t.name);
    for (const n of EXPECTED) assert.ok(names.includes(n), `${n} missing from ${names}`);
  });

  await checks.check('TypeScript SDK v2 client: structured results pass through (Python and legacy TS upstreams)', async () => {
    for (const tool of ['py__add', 'tshttp__add']) {
      const r = await v2.callTool({ name: tool, arguments: { a: 1, b: 2 } });
      assert.deepEqual(r.structuredContent, { sum: 3 }, tool);
      assert.notEqual(r.isError, true, tool);
    }
  });

  await checks.check('TypeScript SDK v2 client: confirm_action through input_required, accepted and declined', async () => {
    v2.answer = async () => ({ action: 'accept', content: { confirm: true } });
    const yes = await v2.callTool({ name: 'tw__confirm_action', arguments: { action: 'go' } });
    assert.equal(onlyText(yes), 'confirmed: go');
    v2.answer = async () => ({ action: 'decline' });
    const no = await v2.callTool({ name: 'tw__confirm_action', arguments: { action: 'go' } });
    assert.equal(no.isError, true);
    assert.equal(onlyText(no), 'not confirmed: go');
  });

  await checks.check("TypeScript SDK v2 client: a legacy upstream's elicitation, sampling and roots as input_required", async () => {
    v2.answer = async () => ({ action: 'accept', content: { confirm: true } });
    const c = await v2.callTool({ name: 'tshttp__confirm', arguments: { action: 'go' } });
    assert.equal(onlyText(c), 'confirmed: go');
    const s = await v2.callTool({ name: 'ts__sample', arguments: { prompt: 'hi' } });
    assert.equal(onlyText(s), 'model said: from the client model');
    const r = await v2.callTool({ name: 'ts__roots', arguments: {} });
    assert.equal(onlyText(r), 'roots: file:///interop');
  });
  await closeQuietly(v2);

  await checks.check('toolwire call (modern) over HTTP: a Python upstream, the same result as direct', async () => {
    const via = await run(['call', gatewayUrl, 'py__add', 'a=2', 'b=3', '--json']);
    assert.ok(via.ok, via.stderr);
    const pyServer = `${python} ${here('./python/mcp_modern_server.py')} stdio`;
    const direct = await run(['call', '--stdio', pyServer, 'add', 'a=2', 'b=3', '--json']);
    assert.ok(direct.ok, direct.stderr);
    const [a, b] = [JSON.parse(via.stdout), JSON.parse(direct.stdout)];
    for (const key of ['resultType', 'content', 'structuredContent', 'isError']) {
      assert.deepEqual(a[key], b[key], key);
    }
    assert.deepEqual(JSON.parse(a.content[0].text), { sum: 5 });
  });

  await checks.check('the PyPI mcp 2 client over HTTP (python/mcp_client_gateway.py)', async () => {
    const out = await new Promise((resolve) => {
      execFile(
        python,
        [here('./python/mcp_client_gateway.py'), gatewayUrl],
        { timeout: 120_000 },
        (error, stdout, stderr) => resolve({ ok: !error, stdout, stderr }),
      );
    });
    process.stdout.write(out.stdout.replace(/^ {2}(ok|FAIL)/gm, '    $1'));
    assert.ok(out.ok, `${out.stdout}${out.stderr}`);
    assert.match(out.stdout, /ok {4}mcp client: confirm_action/);
  }, 130_000);

  await checks.check("toolwire call (modern): a legacy TS upstream's elicitation as input_required", async () => {
    const yes = await run(['call', gatewayUrl, 'tshttp__confirm', 'action=go', '--input', '*={"confirm":true}']);
    assert.ok(yes.ok, yes.stderr);
    assert.equal(yes.stdout.trim(), 'confirmed: go');
  });

  await checks.check('toolwire call (modern): confirm_action accepted and declined', async () => {
    const yes = await run(['call', gatewayUrl, 'tw__confirm_action', 'action=go', '--input', '*={"confirm":true}']);
    assert.ok(yes.ok, yes.stderr);
    assert.equal(yes.stdout.trim(), 'confirmed: go');
    const no = await run(['call', gatewayUrl, 'tw__confirm_action', 'action=go', '--input', '*=decline']);
    assert.equal(no.ok, false);
    assert.match(no.stderr, /^not confirmed: go\n/);
  });
} finally {
  for (const c of children) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  checks.finish();
}
