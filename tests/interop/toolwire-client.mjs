// toolwire's client (the `toolwire` command, protocol mode `auto`) against
// a legacy TypeScript SDK v1 server (legacy-server.mjs) over stdio, over
// Streamable HTTP in its stateful and stateless modes and over the
// 2024-11-05 HTTP+SSE transport; against `toolwire serve` and the
// TypeScript SDK v2 (modern-ts-server.mjs), modern servers with which
// `auto` must never fall back; and against two Python servers. Every leg
// runs the whole matrix its peer can serve (discover, list, call,
// structured result, progress, elicitation accepted and declined, list
// change, resource read, prompt get, a wrong argument type), and every
// check asserts the era the client chose.
//
//   node toolwire-client.mjs <toolwire binary> stdio|http-stateful|http-stateless|http-sse|modern
//   node toolwire-client.mjs <toolwire binary> ts-modern-stdio|ts-modern-http
//   node toolwire-client.mjs <toolwire binary> fastmcp-stdio|fastmcp-http <python>
//   node toolwire-client.mjs <toolwire binary> python-modern-stdio|python-modern-http <python>
//
// The fastmcp legs run python/fastmcp_server.py (fastmcp 2, legacy) and the
// python-modern legs python/mcp_modern_server.py (PyPI mcp 2, 2026-07-28),
// each from the venv scripts/interop makes for it.
//
// What a leg cannot check, and why: a stateless legacy HTTP server has no
// stream for requests or notifications of its own, so it cannot elicit or
// announce a list change (the 2025 protocol's limit, not toolwire's).
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Checks, loopbackUrl, withTimeout } from './lib.mjs';

const [bin, leg, python] = process.argv.slice(2);
const LEGS = [
  'stdio',
  'http-stateful',
  'http-stateless',
  'http-sse',
  'modern',
  'ts-modern-stdio',
  'ts-modern-http',
  'fastmcp-stdio',
  'fastmcp-http',
  'python-modern-stdio',
  'python-modern-http',
];
const pythonLeg = leg?.startsWith('fastmcp') || leg?.startsWith('python-modern');
if (!bin || !LEGS.includes(leg) || (pythonLeg && !python)) {
  console.error(`usage: toolwire-client.mjs BIN ${LEGS.join('|')} [PYTHON]`);
  process.exit(2);
}
const script = (name) => fileURLToPath(new URL(name, import.meta.url));
const fastmcp = leg.startsWith('fastmcp');
const pythonModern = leg.startsWith('python-modern');
const tsModern = leg.startsWith('ts-modern');
const pythonScript = script(fastmcp ? './python/fastmcp_server.py' : './python/mcp_modern_server.py');
const overHttp = leg.includes('http');

/**
 * What each peer offers and how it words things. `era` is the era `auto`
 * must settle on; the flags say which rows of the matrix the peer can
 * serve on this leg.
 */
const PEERS = {
  tsLegacy: {
    era: 'legacy',
    version: '2025-11-25',
    name: 'ts-legacy-interop',
    instructions: 'A TypeScript SDK v1 server.',
    tools: ['echo', 'add', 'countdown', 'confirm', 'define'],
    progress: true,
    // A stateless legacy server cannot send requests or notifications of
    // its own.
    elicitation: leg !== 'http-stateless',
    confirmKey: '*',
    listChange: leg !== 'http-stateless' ? 'late' : null,
    templates: true,
    wrongType: /expected number/,
    unknownResource: /-32602/,
  },
  fastmcp: {
    era: 'legacy',
    version: '2025-11-25',
    name: 'fastmcp-legacy-interop',
    instructions: 'A fastmcp 2 server.',
    tools: ['echo', 'add', 'countdown', 'confirm'],
    progress: true,
    elicitation: true,
    confirmKey: '*',
    // fastmcp 2 announces a change only inside a request, to that request's
    // session, and each toolwire command is a session of its own: the
    // fixture adds `late` to every session shortly after it starts.
    listChange: 'late',
    templates: false,
    wrongType: /valid number/,
    // fastmcp answers with its own code (0) and words.
    unknownResource: /Unknown resource: 'demo:\/\/nope'/,
  },
  tsModern: {
    era: 'modern',
    version: '2026-07-28',
    name: 'ts-modern-interop',
    instructions: 'A TypeScript SDK v2 server.',
    tools: ['echo', 'add', 'countdown', 'confirm', 'define'],
    progress: true,
    elicitation: true,
    confirmKey: 'confirm',
    // Over stdio one connection is one process: no second client can
    // define a tool while the first listens; the fixture adds `late` to a
    // connection shortly after its subscription opens.
    listChange: overHttp ? 'define' : 'late',
    templates: true,
    wrongType: /expected number/,
    unknownResource: /-32602/,
  },
  pythonModern: {
    era: 'modern',
    version: '2026-07-28',
    name: 'python-modern-interop',
    instructions: 'A Python SDK 2 server.',
    tools: ['echo', 'add', 'countdown', 'confirm', 'define'],
    progress: true,
    elicitation: true,
    confirmKey: 'confirm',
    // As for the TypeScript SDK v2: over stdio there is no second client,
    // and the fixture adds `late` instead.
    listChange: overHttp ? 'define' : 'late',
    templates: false,
    wrongType: /valid number/,
    unknownResource: /-32602: Unknown resource: demo:\/\/nope/,
  },
};
const peer =
  leg === 'modern'
    ? null
    : fastmcp
      ? PEERS.fastmcp
      : pythonModern
        ? PEERS.pythonModern
        : tsModern
          ? PEERS.tsModern
          : PEERS.tsLegacy;

// A Python server takes seconds to start, and a stdio leg starts one for
// every toolwire command.
const checks = new Checks(`toolwire client, ${leg}:`, pythonLeg ? 90_000 : 20_000);
const env = { ...process.env, RUST_BACKTRACE: '0', TOOLWIRE_LOG: 'warn' };

/** Runs `toolwire ARGS`; resolves with its exit code and output. */
function toolwire(args) {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 60_000, env }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `toolwire ARGS` and insists it succeeded. */
async function ok(args) {
  const r = await toolwire(args);
  assert.equal(r.code, 0, `toolwire ${args.join(' ')} failed:\n${r.stderr}`);
  return r;
}

/**
 * Runs `toolwire listen --json TARGET` until it prints a tools list change,
 * doing `meanwhile` once it listens; then interrupts it, which must end it
 * cleanly. It must have listened in the peer's era.
 */
async function listChange(target, meanwhile) {
  const child = spawn(bin, ['listen', '--json', ...target], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += String(c)));
  child.stderr.on('data', (c) => (err += String(c)));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await withTimeout(
      (async () => {
        while (!/listening \([^)]*\)/.test(err)) {
          if (child.exitCode !== null) throw new Error(`listen exited early:\n${err}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
      20_000,
      'listen to start',
    );
    assert.match(err, new RegExp(`listening \\(${peer.era} ${peer.version}\\)`));
    await meanwhile();
    await withTimeout(
      (async () => {
        while (!out.includes('notifications/tools/list_changed')) {
          if (child.exitCode !== null) throw new Error(`listen exited:\n${out}\n${err}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })(),
      20_000,
      'the list change',
    );
    assert.deepEqual(JSON.parse(out.split('\n')[0]), { method: 'notifications/tools/list_changed' });
  } finally {
    child.kill('SIGINT');
  }
  assert.equal(await withTimeout(exited, 10_000, 'listen to stop'), 0, err);
}

/** Starts a server child; resolves with its URL (printed on stderr). */
async function startHttp(command, args, pattern, ms = 20_000) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        err += String(chunk);
        // Whole lines only: a chunk may end inside the URL.
        const m = err.slice(0, err.lastIndexOf('\n') + 1).match(pattern);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`the server exited (${code}):\n${err}`)));
    }),
    ms,
    'the server to listen',
  );
  return { child, url: loopbackUrl(url) };
}

let target;
let server;
const node = `'${process.execPath}'`;
if (leg === 'stdio') {
  target = ['--stdio', `${node} '${script('./legacy-server.mjs')}' stdio`];
} else if (leg === 'ts-modern-stdio') {
  target = ['--stdio', `${node} '${script('./modern-ts-server.mjs')}' stdio`];
} else if (leg === 'fastmcp-stdio') {
  target = ['--stdio', `'${python}' '${pythonScript}' stdio`];
} else if (leg === 'python-modern-stdio') {
  target = ['--stdio', `'${python}' '${pythonScript}' stdio --late`];
} else if (leg === 'fastmcp-http' || leg === 'python-modern-http') {
  // Port 0: the OS picks a free one, and uvicorn names it.
  server = await startHttp(python, [pythonScript, 'http', '0'], /Uvicorn running on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
  server.url = new URL('/mcp', server.url).href;
  target = [server.url];
} else if (leg === 'modern') {
  server = await startHttp(bin, ['serve', '--http', '127.0.0.1:0'], /serving MCP at (\S+)\r?\n/);
  target = [server.url];
} else if (leg === 'ts-modern-http') {
  server = await startHttp(process.execPath, [script('./modern-ts-server.mjs'), 'http'], /serving MCP at (\S+)\r?\n/);
  target = [server.url];
} else {
  const flavour = leg.slice('http-'.length);
  server = await startHttp(process.execPath, [script('./legacy-server.mjs'), 'http', flavour], /serving MCP at (\S+)\r?\n/);
  target = [server.url];
}

try {
  if (leg === 'modern') {
    await checks.check('auto stays modern with toolwire serve over HTTP', async () => {
      const d = JSON.parse((await ok(['discover', '--json', ...target])).stdout);
      assert.equal(d.era, 'modern');
      assert.equal(d.protocolVersion, '2026-07-28');
    });
    await checks.check('auto stays modern with toolwire serve over stdio', async () => {
      const d = JSON.parse((await ok(['discover', '--json', '--stdio', `'${bin}' serve`])).stdout);
      assert.equal(d.era, 'modern');
      assert.equal(d.protocolVersion, '2026-07-28');
    });
    await checks.check('a call in auto mode stays modern (an MRTR round, no fallback)', async () => {
      const r = await ok(['call', '--input', 'confirm={"confirm":true}', ...target, 'confirm_action', 'action=x']);
      assert.equal(r.stdout, 'confirmed: x\n');
    });
  } else {
    const era = `era ${peer.era}`;
    await checks.check(`discover: ${era}, ${peer.version}`, async () => {
      const d = JSON.parse((await ok(['discover', '--json', ...target])).stdout);
      assert.equal(d.era, peer.era);
      assert.equal(d.protocolVersion, peer.version);
      if (peer.era === 'legacy') {
        assert.deepEqual(d.supportedVersions, [peer.version]);
        assert.equal(d._meta['io.modelcontextprotocol/serverInfo'].name, peer.name);
      }
      assert.equal(d.instructions, peer.instructions);
    });
    await checks.check('discover text names the era', async () => {
      const r = await ok(['discover', ...target]);
      assert.match(r.stdout, new RegExp(`^era: +${peer.era} \\(${peer.version}\\)$`, 'm'));
    });
    await checks.check('list', async () => {
      const tools = JSON.parse((await ok(['list', '--json', ...target])).stdout);
      const names = tools.map((t) => t.name);
      for (const n of peer.tools) assert.ok(names.includes(n), names.join());
    });
    await checks.check('call', async () => {
      assert.equal((await ok(['call', ...target, 'echo', 'text=hi there'])).stdout, 'hi there\n');
    });
    await checks.check('structured result', async () => {
      const r = JSON.parse((await ok(['call', '--json', ...target, 'add', 'a=2', 'b=3'])).stdout);
      assert.equal(r.resultType, 'complete');
      const structured = r.structuredContent ?? JSON.parse(r.content[0].text);
      assert.equal(structured.sum, 5);
    });
    if (peer.progress) {
      await checks.check('progress reaches --progress', async () => {
        const r = await ok(['call', '--progress', ...target, 'countdown', 'steps=3']);
        assert.equal(r.stdout, 'done after 3 steps\n');
        assert.match(r.stderr, /^progress 1\/3 \(33%\)$/m);
        assert.match(r.stderr, /^progress 3\/3 \(100%\)$/m);
      });
    }
    if (peer.elicitation) {
      const how = peer.era === 'legacy' ? 'a real elicitation/create' : 'an MRTR input_required round';
      await checks.check(`elicitation accepted through ${how}`, async () => {
        const r = await ok(['call', '--input', `${peer.confirmKey}={"confirm":true}`, ...target, 'confirm', 'action=ship']);
        assert.equal(r.stdout, 'confirmed: ship\n');
      });
      await checks.check(`elicitation declined through ${how}`, async () => {
        const r = await toolwire(['call', '--input', `${peer.confirmKey}=decline`, ...target, 'confirm', 'action=ship']);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /not confirmed: ship/);
      });
    }
    if (peer.listChange === 'late') {
      await checks.check('a list change reaches toolwire listen', () => listChange(target, async () => {}), 60_000);
    } else if (peer.listChange === 'define') {
      await checks.check('a list change reaches toolwire listen', () =>
        listChange(target, async () => {
          assert.equal((await ok(['call', ...target, 'define', 'name=extra'])).stdout, 'defined extra\n');
        }),
      60_000);
    }
    await checks.check('a wrong argument type is reported', async () => {
      const r = await toolwire(['call', ...target, 'add', '--args', '{"a":"x","b":1}']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, peer.wrongType);
    });
    await checks.check('resources, read', async () => {
      const resources = JSON.parse((await ok(['resources', '--json', ...target])).stdout);
      assert.equal(resources[0].uri, 'demo://readme');
      assert.equal((await ok(['read', ...target, 'demo://readme'])).stdout, 'Read me.\n');
    });
    if (peer.templates) {
      await checks.check('templates, read through a template', async () => {
        const templates = JSON.parse((await ok(['templates', '--json', ...target])).stdout);
        assert.equal(templates[0].uriTemplate, 'demo://greeting/{name}');
        assert.equal((await ok(['read', ...target, 'demo://greeting/bob'])).stdout, 'Hello, bob!\n');
      });
    }
    await checks.check('an unknown resource is an error', async () => {
      const r = await toolwire(['read', ...target, 'demo://nope']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, peer.unknownResource);
    });
    await checks.check('prompts, prompt get', async () => {
      const prompts = JSON.parse((await ok(['prompts', '--json', ...target])).stdout);
      assert.equal(prompts[0].name, 'greet');
      const r = await ok(['prompt', ...target, 'greet', 'name=bob']);
      assert.ok(r.stdout.endsWith('user:\nPlease greet bob.\n'), r.stdout);
    });
    if (peer.templates) {
      await checks.check('completion of a prompt argument and a template variable', async () => {
        assert.equal((await ok(['complete', '--prompt', 'greet', ...target, 'name=al'])).stdout, 'alice\nalbert\n');
        const r = await ok(['complete', '--template', 'demo://greeting/{name}', ...target, 'name=b']);
        assert.equal(r.stdout, 'bob\n');
      });
    }
    if (peer.era === 'legacy') {
      await checks.check('--protocol modern does not fall back, and fails', async () => {
        const r = await toolwire(['list', '--protocol', 'modern', ...target]);
        assert.notEqual(r.code, 0);
      });
    } else {
      await checks.check('--protocol legacy is refused or served, never mistaken for modern', async () => {
        const r = await toolwire(['discover', '--json', '--protocol', 'legacy', ...target]);
        if (r.code === 0) assert.equal(JSON.parse(r.stdout).era, 'legacy');
      });
    }
  }
} finally {
  server?.child.kill('SIGTERM');
}
checks.finish();
