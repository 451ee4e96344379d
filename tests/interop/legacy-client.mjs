// A real legacy client, the TypeScript SDK v1 (@modelcontextprotocol/sdk
// 1.32.2, protocol 2025-11-25), against the demo tools of `toolwire serve`.
//
//   node legacy-client.mjs stdio <path to the toolwire binary>
//   node legacy-client.mjs http  <http://127.0.0.1:PORT/mcp of a running `toolwire serve --http`>
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  McpError,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Checks,
  MODERN,
  SDK_LATEST,
  WAIT_MS,
  Wire,
  closeQuietly,
  connect,
  httpTransport,
  loopbackUrl,
  newClient,
  onlyText,
  sleep,
  stdioTransport,
  until,
} from './lib.mjs';

const [mode, target] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !target) {
  console.error('usage: legacy-client.mjs stdio BIN | http URL');
  process.exit(2);
}
const url = mode === 'http' ? loopbackUrl(target) : undefined;
const transportFor = () => (mode === 'stdio' ? stdioTransport(target) : httpTransport(url));
const checks = new Checks(`legacy ${mode}:`);

const DEMO_TOOLS = ['echo', 'add', 'countdown', 'regional_echo', 'confirm_action', 'define_tool', 'undefine_tool', 'report'];
const CONFIRM_SCHEMA = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'Whether to go ahead with the action.' } },
  required: ['confirm'],
};
/** The members a legacy result must never carry. */
const MODERN_ONLY = ['resultType', 'ttlMs', 'cacheScope', '_meta'];

// The client under test: elicitation declared the way most SDK users do
// (`{}` means form mode), and its answers decided per check.
const transport = transportFor();
const wire = new Wire(transport);
const client = newClient(`toolwire-interop-${mode}`, { elicitation: {} });
let answer = async () => ({ action: 'decline' });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
  elicitations.push(request.params);
  return answer(request.params, extra);
});
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(n.params);
});
const listChanges = [];
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanges.push(Date.now());
});
// The SDK reports stray messages through onerror (see the progress check);
// they are kept for diagnostics, not failures by themselves.
const clientErrors = [];
client.onerror = (e) => clientErrors.push(String(e));

const opts = { timeout: WAIT_MS };

/** Asserts that a raw (wire) result has none of the 2026-only members. */
function assertLegacyShape(raw) {
  for (const key of MODERN_ONLY) assert.equal(key in raw, false, `result carries ${key}: ${JSON.stringify(raw)}`);
}

/** Calls a tool and returns the raw result as it came over the wire. */
async function callRaw(name, args, options = opts) {
  await client.callTool({ name, arguments: args }, undefined, options);
  const raw = wire.lastResult('tools/call', name);
  assertLegacyShape(raw);
  return raw;
}

try {
  await checks.check('initialize negotiates 2025-11-25 and names the demo server', async () => {
    await connect(client, transport);
    const init = wire.responseTo(wire.lastSent('initialize').id).result;
    assert.equal(wire.lastSent('initialize').params.protocolVersion, SDK_LATEST);
    assert.equal(init.protocolVersion, SDK_LATEST);
    assert.equal(init.serverInfo.name, 'toolwire-demo');
    assert.match(init.serverInfo.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(init.capabilities.tools, { listChanged: true });
    assert.deepEqual(init.capabilities.logging, {});
    assert.deepEqual(client.getServerVersion(), init.serverInfo);
    if (mode === 'http') {
      assert.match(transport.sessionId ?? '', /^[0-9a-f]{32}$/, 'Mcp-Session-Id');
      assert.equal(transport.protocolVersion, SDK_LATEST);
    }
  });

  await checks.check('tools/list: the demo tools, in order, in the legacy shape', async () => {
    const { tools } = await client.listTools(undefined, opts);
    assert.deepEqual(
      tools.map((t) => t.name),
      DEMO_TOOLS,
    );
    const raw = wire.lastResult('tools/list');
    assert.deepEqual(Object.keys(raw), ['tools'], 'no nextCursor, resultType or _meta');
    const add = raw.tools.find((t) => t.name === 'add');
    assert.equal(add.outputSchema.type, 'object');
    assert.deepEqual(add.outputSchema.required, ['sum']);
    assert.equal(add.outputSchema.properties.sum.type, 'number');
    for (const t of raw.tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      if (t.name !== 'add') assert.equal('outputSchema' in t, false, t.name);
    }
    assert.deepEqual(raw.tools.find((t) => t.name === 'confirm_action').inputSchema.required, ['action']);
  });

  await checks.check('tools/call echo: the same text back', async () => {
    const raw = await callRaw('echo', { text: 'hello, interop ✓' });
    assert.deepEqual(raw, { content: [{ type: 'text', text: 'hello, interop ✓' }] });
  });

  await checks.check('tools/call add: structuredContent {sum: 5.5}, mirrored as text', async () => {
    // callTool also validates structuredContent against add's outputSchema.
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3.5 } }, undefined, opts);
    assert.deepEqual(result.structuredContent, { sum: 5.5 });
    const raw = wire.lastResult('tools/call', 'add');
    assert.deepEqual(raw, { content: [{ type: 'text', text: '{"sum":5.5}' }], structuredContent: { sum: 5.5 } });
  });

  await checks.check('tools/call with invalid arguments: an isError result naming the problem', async () => {
    const raw = await callRaw('add', { a: 1 });
    assert.equal(raw.isError, true);
    assert.match(onlyText(raw), /^Invalid arguments for tool "add":\n.*"b" is a required property/s);
  });

  await checks.check('tools/call of an unknown tool: JSON-RPC error -32602', async () => {
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, opts), (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32602);
      assert.match(e.message, /unknown tool: no_such_tool/);
      return true;
    });
  });

  await checks.check('countdown: progress 1..4 of 4 for the request token, then the result', async () => {
    const STEPS = 4;
    const seen = [];
    const raw = await callRaw(
      'countdown',
      { steps: STEPS, interval_ms: 50 },
      { ...opts, onprogress: (p) => seen.push(p) },
    );
    assert.deepEqual(raw, { content: [{ type: 'text', text: `done after ${STEPS} steps` }] });
    const sent = wire.lastSent('tools/call', 'countdown');
    const token = sent.params._meta.progressToken;
    const expected = Array.from({ length: STEPS }, (_, i) => ({
      progress: i + 1,
      total: STEPS,
      message: `step ${i + 1}`,
    }));
    // On the wire: exactly these, all before the result.
    const onWire = wire.notifications('notifications/progress').filter((n) => n.params.progressToken === token);
    assert.deepEqual(
      onWire.map(({ params: { progressToken, ...rest } }) => rest),
      expected,
    );
    const resultAt = wire.received.findIndex((m) => m.id === sent.id);
    assert.ok(onWire.every((n) => wire.received.indexOf(n) < resultAt), 'progress after the result');
    // In the callback: SDK 1.x dispatches notifications a microtask later
    // than responses, so a last progress that arrives in the same read as
    // the result is dropped by the SDK itself (typescript-sdk#2580). Every
    // earlier step arrives 50 ms apart and must be delivered, exactly.
    assert.ok(seen.length >= STEPS - 1, `onprogress saw ${JSON.stringify(seen)}`);
    assert.deepEqual(seen, expected.slice(0, seen.length));
    // No log level set yet: the session sends no log messages.
    assert.deepEqual(wire.notifications('notifications/message'), []);
  });

  await checks.check('logging/setLevel debug: countdown logs each step', async () => {
    await client.setLoggingLevel('debug', opts);
    assert.deepEqual(wire.lastResult('logging/setLevel'), {});
    await callRaw('countdown', { steps: 2, interval_ms: 0 });
    await until(() => logs.length >= 2, WAIT_MS, 'two log messages');
    assert.deepEqual(logs, [
      { level: 'debug', logger: 'countdown', data: { step: 1, of: 2 } },
      { level: 'debug', logger: 'countdown', data: { step: 2, of: 2 } },
    ]);
    await client.setLoggingLevel('warning', opts);
  });

  await checks.check('confirm_action, accepted: a real elicitation/create, then "confirmed: deploy"', async () => {
    elicitations.length = 0;
    answer = async () => ({ action: 'accept', content: { confirm: true } });
    const raw = await callRaw('confirm_action', { action: 'deploy' });
    assert.deepEqual(raw, { content: [{ type: 'text', text: 'confirmed: deploy' }] });
    const [request, ...more] = wire.requests('elicitation/create');
    assert.deepEqual(more, [], 'one elicitation');
    assert.deepEqual(request.params, { message: 'Confirm: deploy?', mode: 'form', requestedSchema: CONFIRM_SCHEMA });
    const reply = wire.sent.find((m) => m.id === request.id && 'result' in m);
    assert.deepEqual(reply.result, { action: 'accept', content: { confirm: true } });
  });

  await checks.check('confirm_action, declined: isError "not confirmed: deploy"', async () => {
    answer = async () => ({ action: 'decline' });
    const raw = await callRaw('confirm_action', { action: 'deploy' });
    assert.deepEqual(raw, { content: [{ type: 'text', text: 'not confirmed: deploy' }], isError: true });
  });

  await checks.check('confirm_action, cancelled or confirm: false: isError', async () => {
    answer = async () => ({ action: 'cancel' });
    assert.deepEqual(await callRaw('confirm_action', { action: 'reboot' }), {
      content: [{ type: 'text', text: 'not confirmed: reboot' }],
      isError: true,
    });
    answer = async () => ({ action: 'accept', content: { confirm: false } });
    assert.deepEqual(await callRaw('confirm_action', { action: 'reboot' }), {
      content: [{ type: 'text', text: 'not confirmed: reboot' }],
      isError: true,
    });
  });

  await checks.check('two confirm_action calls at once: each elicitation answered for its own call', async () => {
    elicitations.length = 0;
    let release;
    const both = new Promise((resolve) => {
      release = resolve;
    });
    answer = async (params) => {
      // Hold the first answer until both elicitations are out.
      if (elicitations.length === 2) release();
      await both;
      return params.message === 'Confirm: left?'
        ? { action: 'accept', content: { confirm: true } }
        : { action: 'decline' };
    };
    const [left, right] = await Promise.all([
      client.callTool({ name: 'confirm_action', arguments: { action: 'left' } }, undefined, opts),
      client.callTool({ name: 'confirm_action', arguments: { action: 'right' } }, undefined, opts),
    ]);
    assert.deepEqual(left, { content: [{ type: 'text', text: 'confirmed: left' }] });
    assert.deepEqual(right, { content: [{ type: 'text', text: 'not confirmed: right' }], isError: true });
    assert.equal(elicitations.length, 2);
  });

  await checks.check('an elicitation answered with an error: the call fails with -32603', async () => {
    answer = async () => {
      throw new McpError(-32000, 'the user closed the dialog');
    };
    await assert.rejects(client.callTool({ name: 'confirm_action', arguments: { action: 'x' } }, undefined, opts), (e) => {
      assert.ok(e instanceof McpError, String(e));
      assert.equal(e.code, -32603);
      assert.match(e.message, /elicitation\/create/);
      assert.deepEqual(e.data, { code: -32000, data: null });
      return true;
    });
  });

  await checks.check('ping: an empty result', async () => {
    assert.deepEqual(await client.ping(opts), {});
    assert.deepEqual(wire.lastResult('ping'), {});
  });

  await checks.check('prompts/list, resources/list, a read and a prompt: the demo prompt and resources', async () => {
    const prompts = (await client.listPrompts(undefined, opts)).prompts;
    assert.deepEqual(prompts.map((p) => p.name), ['greet']);
    assert.equal(wire.lastResult('prompts/list').resultType, undefined);
    const resources = (await client.listResources(undefined, opts)).resources;
    assert.deepEqual(resources.map((r) => r.uri), ['demo://readme']);
    const templates = (await client.listResourceTemplates(undefined, opts)).resourceTemplates;
    assert.deepEqual(templates.map((t) => t.uriTemplate), ['demo://greeting/{name}']);
    const read = await client.readResource({ uri: 'demo://greeting/ann' }, opts);
    assert.equal(read.contents[0].text, 'Hello, ann!');
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'ann' } }, opts);
    assert.equal(prompt.messages[0].content.text, 'Please greet ann warmly.');
  });

  await checks.check('define_tool / undefine_tool: notifications/tools/list_changed, and the list follows', async () => {
    const name = `interop_${mode}_tool`;
    const before = listChanges.length;
    assert.deepEqual(await callRaw('define_tool', { name, text: 'defined over ' + mode }), {
      content: [{ type: 'text', text: `defined ${name}` }],
    });
    await until(() => listChanges.length > before, WAIT_MS, 'tools/list_changed after define_tool');
    assert.deepEqual(
      (await client.listTools(undefined, opts)).tools.map((t) => t.name),
      [...DEMO_TOOLS, name],
    );
    assert.deepEqual(await callRaw(name, {}), { content: [{ type: 'text', text: `defined over ${mode}` }] });
    await callRaw('undefine_tool', { name });
    await until(() => listChanges.length > before + 1, WAIT_MS, 'tools/list_changed after undefine_tool');
    assert.deepEqual(
      (await client.listTools(undefined, opts)).tools.map((t) => t.name),
      DEMO_TOOLS,
    );
  });

  await checks.check('notifications/cancelled stops a running countdown: no more progress, no response', async () => {
    const abort = new AbortController();
    let progressed = 0;
    const call = client.callTool({ name: 'countdown', arguments: { steps: 100, interval_ms: 50 } }, undefined, {
      ...opts,
      signal: abort.signal,
      onprogress: () => {
        progressed++;
      },
    });
    const settled = call.then(
      () => 'resolved',
      () => 'rejected',
    );
    await until(() => progressed >= 2, WAIT_MS, 'two progress notifications');
    abort.abort('interop: stop');
    assert.equal(await settled, 'rejected');
    const sent = wire.lastSent('tools/call', 'countdown');
    const cancel = wire.sent.find((m) => m.method === 'notifications/cancelled' && m.params?.requestId === sent.id);
    assert.ok(cancel, 'the SDK sent notifications/cancelled');
    const count = () =>
      wire.notifications('notifications/progress').filter((n) => n.params.progressToken === sent.params._meta.progressToken)
        .length;
    await sleep(200); // what was already on its way
    const atCancel = count();
    await sleep(500); // ten more steps, had it kept running
    assert.equal(count(), atCancel, 'progress kept coming after the cancellation');
    assert.ok(atCancel < 20, `the countdown ran on (${atCancel} steps)`);
    assert.equal(
      wire.received.some((m) => m.id === sent.id && ('result' in m || 'error' in m)),
      false,
      'a cancelled request got a response',
    );
  });

  await checks.check('notifications/cancelled during an elicitation: the server cancels its elicitation/create', async () => {
    const abort = new AbortController();
    let elicitSignal;
    answer = (_params, extra) => {
      elicitSignal = extra.signal;
      // Never answered: only the server's cancellation ends it.
      return new Promise(() => {});
    };
    const before = wire.requests('elicitation/create').length;
    const call = client
      .callTool({ name: 'confirm_action', arguments: { action: 'wait' } }, undefined, { ...opts, signal: abort.signal })
      .then(
        () => 'resolved',
        () => 'rejected',
      );
    await until(() => elicitSignal !== undefined, WAIT_MS, 'the elicitation/create request');
    const elicit = wire.requests('elicitation/create')[before];
    abort.abort('interop: never mind');
    assert.equal(await call, 'rejected');
    await until(() => elicitSignal.aborted, WAIT_MS, "the server's notifications/cancelled for the elicitation");
    const cancelled = wire.notifications('notifications/cancelled').find((n) => n.params.requestId === elicit.id);
    assert.ok(cancelled, 'notifications/cancelled names the elicitation');
    const sent = wire.lastSent('tools/call', 'confirm_action');
    await sleep(200);
    assert.equal(
      wire.received.some((m) => m.id === sent.id && ('result' in m || 'error' in m)),
      false,
      'a cancelled request got a response',
    );
    // The session is still in service.
    assert.deepEqual(await client.ping(opts), {});
  });

  await checks.check('a client without the elicitation capability: confirm_action fails with -32600', async () => {
    const t = transportFor();
    const other = newClient(`toolwire-interop-${mode}-plain`);
    try {
      await connect(other, t);
      await assert.rejects(other.callTool({ name: 'confirm_action', arguments: { action: 'x' } }, undefined, opts), (e) => {
        assert.ok(e instanceof McpError, String(e));
        assert.equal(e.code, -32600);
        assert.deepEqual(e.data?.requiredCapabilities, { elicitation: { form: {} } });
        return true;
      });
      // Everything else works for it.
      assert.deepEqual(await other.callTool({ name: 'echo', arguments: { text: 'plain' } }, undefined, opts), {
        content: [{ type: 'text', text: 'plain' }],
      });
    } finally {
      await closeQuietly(other);
    }
  });

  await checks.check('older clients: 2025-06-18 keeps structured output, 2025-03-26 gets none', async () => {
    for (const version of ['2025-06-18', '2025-03-26']) {
      const t = transportFor();
      const w = new Wire(t, { askFor: version });
      const old = newClient(`toolwire-interop-${mode}-${version}`, { elicitation: {} });
      old.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { confirm: true } }));
      try {
        await connect(old, t);
        assert.equal(w.responseTo(w.lastSent('initialize').id).result.protocolVersion, version);
        if (mode === 'http') assert.equal(t.protocolVersion, version);
        const structured = version >= '2025-06-18';
        const { tools } = await old.listTools(undefined, opts);
        assert.equal('outputSchema' in tools.find((x) => x.name === 'add'), structured, version);
        await old.callTool({ name: 'add', arguments: { a: 1.5, b: 1 } }, undefined, opts);
        assert.deepEqual(
          w.lastResult('tools/call', 'add'),
          structured
            ? { content: [{ type: 'text', text: '{"sum":2.5}' }], structuredContent: { sum: 2.5 } }
            : { content: [{ type: 'text', text: '{"sum":2.5}' }] },
          version,
        );
        // The elicitation shim speaks the negotiated revision: `mode`
        // arrived with 2025-11-25.
        assert.deepEqual(await old.callTool({ name: 'confirm_action', arguments: { action: version } }, undefined, opts), {
          content: [{ type: 'text', text: `confirmed: ${version}` }],
        });
        assert.deepEqual(w.requests('elicitation/create')[0].params, {
          message: `Confirm: ${version}?`,
          requestedSchema: CONFIRM_SCHEMA,
        });
      } finally {
        await closeQuietly(old);
      }
    }
  });

  if (mode === 'stdio') {
    await checks.check('a modern request on the legacy client\'s stdio connection is served statelessly', async () => {
      const result = await client.request(
        {
          method: 'tools/call',
          params: {
            name: 'echo',
            arguments: { text: 'modern on the same pipe' },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        },
        CallToolResultSchema,
        opts,
      );
      assert.deepEqual(result.content, [{ type: 'text', text: 'modern on the same pipe' }]);
      const raw = wire.lastResult('tools/call', 'echo');
      assert.equal(raw.resultType, 'complete');
      assert.equal(raw._meta['io.modelcontextprotocol/serverInfo'].name, 'toolwire-demo');
      // The legacy session carries on.
      assert.deepEqual(await client.ping(opts), {});
    });
  }

  if (mode === 'http') {
    await checks.check('DELETE ends the session: its id is then unknown (404)', async () => {
      const sid = transport.sessionId;
      await transport.terminateSession();
      assert.equal(transport.sessionId, undefined);
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sid,
          'mcp-protocol-version': SDK_LATEST,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        signal: AbortSignal.timeout(WAIT_MS),
      });
      assert.equal(res.status, 404);
      await res.body?.cancel();
    });
  }
} finally {
  await closeQuietly(client);
  if (checks.failed > 0) {
    if (clientErrors.length) console.log(`          client errors: ${clientErrors.slice(0, 10).join(' | ')}`);
    if (transport.serverStderr?.length) console.log(`          server stderr: ${transport.serverStderr.join('').slice(0, 2000)}`);
  }
  checks.finish();
}
