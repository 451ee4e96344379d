// Both eras on one `toolwire serve --http` endpoint at the same time: legacy
// clients (the TypeScript SDK v1, in initialize-based sessions) beside
// modern 2026-07-28 clients (raw HTTP with `_meta`, and our Rust client, the
// `toolwire call` command).
//
//   node mixed-eras.mjs <http://127.0.0.1:PORT/mcp> <path to the toolwire binary>
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Checks,
  MODERN,
  WAIT_MS,
  Wire,
  closeQuietly,
  connect,
  httpTransport,
  loopbackUrl,
  newClient,
  until,
  withTimeout,
} from './lib.mjs';

const [target, bin] = process.argv.slice(2);
if (!target || !bin) {
  console.error('usage: mixed-eras.mjs URL BIN');
  process.exit(2);
}
const url = loopbackUrl(target);
const checks = new Checks('mixed http:');
const opts = { timeout: WAIT_MS };
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

let nextId = 1;

/**
 * One modern (2026-07-28) request over plain HTTP: `_meta` in the body and
 * the headers the revision requires. Returns the final JSON-RPC message and
 * the notifications streamed before it.
 */
async function modern(method, params = {}, { capabilities = {}, headers = {} } = {}) {
  const id = `modern-${nextId++}`;
  const body = {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        ...(params._meta ?? {}),
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'interop-raw-modern', version: '1.0.0' },
      },
    },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(params.name ? { 'mcp-name': params.name } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${method}: HTTP ${res.status}: ${text}`);
  const messages = (res.headers.get('content-type') ?? '').startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)))
    : [JSON.parse(text)];
  const last = messages.at(-1);
  assert.equal(last.id, id, `the last message answers ${id}: ${text}`);
  return { response: last, notifications: messages.slice(0, -1), headers: res.headers };
}

/** The result of a modern call, which must be a complete one. */
async function modernCall(name, args, options) {
  const { response } = await modern('tools/call', { name, arguments: args }, options);
  assert.ok(response.result, `tools/call ${name}: ${JSON.stringify(response)}`);
  assert.equal(response.result.resultType, 'complete');
  assert.equal(response.result._meta?.[SERVER_INFO_KEY]?.name, 'toolwire-demo');
  return response.result;
}

/** Runs `toolwire call URL ...` (our Rust client) and returns its JSON output. */
function rustCall(args) {
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      ['call', url, ...args, '--json', '--timeout', String(WAIT_MS / 1000)],
      { timeout: WAIT_MS + 2000, killSignal: 'SIGKILL', env: { PATH: process.env.PATH ?? '', TOOLWIRE_LOG: 'warn' } },
      (error, stdout, stderr) => {
        if (error && !stdout) return reject(new Error(`toolwire call ${args.join(' ')}: ${error.message}\n${stderr}`));
        try {
          resolve({ code: error?.code ?? 0, result: JSON.parse(stdout) });
        } catch (e) {
          reject(new Error(`toolwire call printed no JSON: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}

/** A legacy TS SDK client in its own HTTP session, answering elicitations with `answer`. */
async function legacyClient(name, answer) {
  const transport = httpTransport(url);
  const wire = new Wire(transport);
  const client = newClient(name, { elicitation: { form: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params));
  const listChanges = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanges.push(Date.now()));
  client.onerror = () => {};
  await connect(client, transport);
  return { client, transport, wire, listChanges };
}

const legacies = [];
try {
  let release;
  const released = new Promise((resolve) => {
    release = resolve;
  });
  let asked = false;
  let main;
  await checks.check('a legacy client opens its session beside the modern clients', async () => {
    main = await legacyClient('interop-legacy-main', async (params) => {
      asked = true;
      await released;
      return { action: 'accept', content: { confirm: params.message === 'Confirm: ship?' } };
    });
    legacies.push(main);
    assert.match(main.transport.sessionId ?? '', /^[0-9a-f]{32}$/);
    // The modern side needs no session: server/discover answers statelessly.
    const { response, headers } = await modern('server/discover');
    assert.equal(headers.get('mcp-session-id'), null);
    assert.deepEqual(response.result.supportedVersions, [MODERN]);
  });

  await checks.check('a modern call and our Rust client are served while a legacy call waits for its elicitation', async () => {
    const pending = main.client.callTool({ name: 'confirm_action', arguments: { action: 'ship' } }, undefined, {
      timeout: 3 * WAIT_MS,
    });
    await until(() => asked, WAIT_MS, 'the legacy elicitation/create');
    // The legacy call is suspended in the server; both modern clients go through.
    assert.deepEqual((await modernCall('echo', { text: 'modern meanwhile' })).content, [
      { type: 'text', text: 'modern meanwhile' },
    ]);
    const rust = await rustCall(['add', 'a=20', 'b=22']);
    assert.equal(rust.code, 0);
    assert.equal(rust.result.resultType, 'complete');
    assert.deepEqual(rust.result.structuredContent, { sum: 42 });
    release();
    assert.deepEqual(await pending, { content: [{ type: 'text', text: 'confirmed: ship' }] });
    const raw = main.wire.lastResult('tools/call', 'confirm_action');
    assert.deepEqual(raw, { content: [{ type: 'text', text: 'confirmed: ship' }] }, 'no 2026 members');
  });

  await checks.check('confirm_action in both eras at once: MRTR rounds for modern, elicitation/create for legacy', async () => {
    let releaseLegacy;
    const legacyHeld = new Promise((resolve) => {
      releaseLegacy = resolve;
    });
    const second = await legacyClient('interop-legacy-second', async () => {
      await legacyHeld;
      return { action: 'decline' };
    });
    legacies.push(second);
    const legacyCall = second.client.callTool({ name: 'confirm_action', arguments: { action: 'both' } }, undefined, opts);
    await until(() => second.wire.requests('elicitation/create').length === 1, WAIT_MS, 'the legacy elicitation');

    // Modern, by hand: round one asks, the retry carries the answer and the state.
    const caps = { elicitation: { form: {} } };
    const first = await modern('tools/call', { name: 'confirm_action', arguments: { action: 'both' } }, { capabilities: caps });
    const ask = first.response.result;
    assert.equal(ask.resultType, 'input_required');
    assert.deepEqual(ask.inputRequests, {
      confirm: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Confirm: both?',
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean', description: 'Whether to go ahead with the action.' } },
            required: ['confirm'],
          },
        },
      },
    });
    assert.equal(typeof ask.requestState, 'string');
    const { response } = await modern(
      'tools/call',
      {
        name: 'confirm_action',
        arguments: { action: 'both' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        requestState: ask.requestState,
      },
      { capabilities: caps },
    );
    assert.equal(response.result.resultType, 'complete');
    assert.deepEqual(response.result.content, [{ type: 'text', text: 'confirmed: both' }]);
    // The Rust client runs its own MRTR loop meanwhile.
    const rust = await rustCall(['confirm_action', 'action=rust', '--input', 'confirm={"confirm":true}']);
    assert.deepEqual(rust.result.content, [{ type: 'text', text: 'confirmed: rust' }]);

    releaseLegacy();
    assert.deepEqual(await legacyCall, { content: [{ type: 'text', text: 'not confirmed: both' }], isError: true });
    // Each legacy session got exactly its own elicitation.
    assert.equal(second.wire.requests('elicitation/create').length, 1);
    assert.equal(main.wire.requests('elicitation/create').length, 1);
  });

  await checks.check('a modern request naming the legacy session id is served statelessly', async () => {
    const sid = main.transport.sessionId;
    assert.match(sid, /^[0-9a-f]{32}$/);
    const result = await modernCall('echo', { text: 'with a session id' }, { headers: { 'mcp-session-id': sid } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'with a session id' }]);
    // The legacy session is untouched by it.
    assert.deepEqual(await main.client.ping(opts), {});
    assert.equal(main.transport.sessionId, sid);
  });

  await checks.check('progress streams of both eras at once stay apart', async () => {
    const seen = [];
    const legacyRun = main.client.callTool({ name: 'countdown', arguments: { steps: 5, interval_ms: 20 } }, undefined, {
      ...opts,
      onprogress: (p) => seen.push(p.progress),
    });
    const modernRun = modern('tools/call', {
      name: 'countdown',
      arguments: { steps: 3, interval_ms: 30 },
      _meta: { progressToken: 'modern-progress' },
    });
    const [legacyResult, modernResult] = await Promise.all([legacyRun, modernRun]);
    assert.deepEqual(legacyResult, { content: [{ type: 'text', text: 'done after 5 steps' }] });
    assert.deepEqual(modernResult.response.result.content, [{ type: 'text', text: 'done after 3 steps' }]);
    assert.deepEqual(
      modernResult.notifications.map((n) => [n.method, n.params.progressToken, n.params.progress]),
      [1, 2, 3].map((p) => ['notifications/progress', 'modern-progress', p]),
    );
    const token = main.wire.lastSent('tools/call', 'countdown').params._meta.progressToken;
    assert.deepEqual(
      main.wire.notifications('notifications/progress').filter((n) => n.params.progressToken === token).map((n) => n.params.progress),
      [1, 2, 3, 4, 5],
    );
    assert.equal(
      main.wire.notifications('notifications/progress').some((n) => n.params.progressToken === 'modern-progress'),
      false,
      'modern progress leaked into the legacy session',
    );
    assert.ok(seen.length >= 4, `onprogress saw ${seen}`); // the last may race the result (typescript-sdk#2580)
  });

  await checks.check('a modern define_tool reaches every legacy session as tools/list_changed', async () => {
    const name = 'interop_mixed_tool';
    const before = legacies.map((l) => l.listChanges.length);
    assert.deepEqual((await modernCall('define_tool', { name, text: 'made by a modern client' })).content, [
      { type: 'text', text: `defined ${name}` },
    ]);
    await until(
      () => legacies.every((l, i) => l.listChanges.length > before[i]),
      WAIT_MS,
      'tools/list_changed on every legacy session stream',
    );
    const { tools } = await main.client.listTools(undefined, opts);
    assert.ok(tools.some((t) => t.name === name));
    assert.deepEqual(await main.client.callTool({ name, arguments: {} }, undefined, opts), {
      content: [{ type: 'text', text: 'made by a modern client' }],
    });
    // ...and a legacy undefine_tool is seen by modern clients.
    await main.client.callTool({ name: 'undefine_tool', arguments: { name } }, undefined, opts);
    const { response } = await modern('tools/list');
    assert.equal(response.result.resultType, 'complete');
    assert.equal(
      response.result.tools.some((t) => t.name === name),
      false,
    );
  });

  await checks.check('ending a legacy session leaves the others and modern clients in service', async () => {
    const [first, second] = legacies;
    await second.transport.terminateSession();
    assert.deepEqual(await first.client.ping(opts), {});
    assert.deepEqual((await modernCall('echo', { text: 'still modern' })).content, [{ type: 'text', text: 'still modern' }]);
  });
} finally {
  await withTimeout(Promise.all(legacies.map((l) => closeQuietly(l.client))), 10_000, 'closing').catch(() => {});
  checks.finish();
}
