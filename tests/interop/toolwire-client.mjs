// toolwire's client (the `toolwire` command, protocol mode `auto`) against
// a legacy TypeScript SDK v1 server (legacy-server.mjs) over stdio and over
// Streamable HTTP in its stateful and stateless modes, and against
// `toolwire serve` (modern) to show that `auto` never falls back there.
// Every check asserts the era the client chose.
//
//   node toolwire-client.mjs <toolwire binary> stdio|http-stateful|http-stateless|modern
//   node toolwire-client.mjs <toolwire binary> fastmcp-stdio|fastmcp-http <python>
//   node toolwire-client.mjs <toolwire binary> python-modern-stdio|python-modern-http <python>
//
// The fastmcp legs run python/fastmcp_server.py (fastmcp 2, legacy) and the
// python-modern legs python/mcp_modern_server.py (PyPI mcp 2, 2026-07-28),
// each from the venv scripts/interop makes for it.
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createServer, connect as tcpConnect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Checks, loopbackUrl, withTimeout } from './lib.mjs';

const [bin, leg, python] = process.argv.slice(2);
const LEGS = [
  'stdio',
  'http-stateful',
  'http-stateless',
  'modern',
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
const serverScript = fileURLToPath(new URL('./legacy-server.mjs', import.meta.url));
const fastmcp = leg.startsWith('fastmcp');
const pythonModern = leg.startsWith('python-modern');
const pythonScript = fileURLToPath(
  new URL(fastmcp ? './python/fastmcp_server.py' : './python/mcp_modern_server.py', import.meta.url),
);
/** What the legacy peer offers and how it words things. */
const peer = fastmcp
  ? {
      name: 'fastmcp-legacy-interop',
      instructions: 'A fastmcp 2 server.',
      tools: ['echo', 'add', 'confirm'],
      progress: false,
      templates: false,
      wrongType: /valid number/,
      // fastmcp answers with its own code (0) and words.
      unknownResource: /Unknown resource: 'demo:\/\/nope'/,
    }
  : {
      name: 'ts-legacy-interop',
      instructions: 'A TypeScript SDK v1 server.',
      tools: ['echo', 'add', 'countdown', 'confirm', 'define'],
      progress: true,
      templates: true,
      wrongType: /expected number/,
      unknownResource: /-32602/,
    };

/** A free loopback port (the OS picks it; the server binds it next). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on `port`. */
async function listening(port, child) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
    const ok = await new Promise((resolve) => {
      const sock = tcpConnect(port, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on ${port} after 60 s`);
}
const checks = new Checks(`toolwire client, ${leg}:`);

/** Runs `toolwire ARGS`; resolves with its exit code and output. */
function toolwire(args) {
  return new Promise((resolve) => {
    execFile(
      bin,
      args,
      { timeout: 60_000, env: { ...process.env, RUST_BACKTRACE: '0', TOOLWIRE_LOG: 'warn' } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `toolwire ARGS` and insists it succeeded. */
async function ok(args) {
  const r = await toolwire(args);
  assert.equal(r.code, 0, `toolwire ${args.join(' ')} failed:\n${r.stderr}`);
  return r;
}

/** Starts a server child; resolves with its URL (printed on stderr). */
async function startHttp(command, args, pattern) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        err += String(chunk);
        const m = err.match(pattern);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`the server exited (${code}):\n${err}`)));
    }),
    20_000,
    'the server to listen',
  );
  return { child, url: loopbackUrl(url) };
}

let target;
let server;
if (leg === 'stdio') {
  target = ['--stdio', `'${process.execPath}' '${serverScript}' stdio`];
} else if (leg === 'fastmcp-stdio' || leg === 'python-modern-stdio') {
  target = ['--stdio', `'${python}' '${pythonScript}' stdio`];
} else if (leg === 'fastmcp-http' || leg === 'python-modern-http') {
  const port = await freePort();
  const child = spawn(python, [pythonScript, 'http', String(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
  server = { child, url: `http://127.0.0.1:${port}/mcp` };
  await listening(port, child);
  target = [server.url];
} else if (leg === 'modern') {
  server = await startHttp(bin, ['serve', '--http', '127.0.0.1:0'], /serving MCP at (\S+)/);
  target = [server.url];
} else {
  const flavour = leg.slice('http-'.length);
  server = await startHttp(process.execPath, [serverScript, 'http', flavour], /serving MCP at (\S+)/);
  target = [server.url];
}
const stateful = leg !== 'http-stateless';

try {
  if (pythonModern) {
    await checks.check('auto stays modern with the Python SDK 2 server', async () => {
      const d = JSON.parse((await ok(['discover', '--json', ...target])).stdout);
      assert.equal(d.era, 'modern');
      assert.equal(d.protocolVersion, '2026-07-28');
      assert.equal(d.instructions, 'A Python SDK 2 server.');
    });
    await checks.check('list, call and a JSON result', async () => {
      const tools = JSON.parse((await ok(['list', '--json', ...target])).stdout);
      assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'echo']);
      assert.equal((await ok(['call', ...target, 'echo', 'text=hi'])).stdout, 'hi\n');
      const r = JSON.parse((await ok(['call', '--json', ...target, 'add', 'a=2', 'b=3'])).stdout);
      assert.equal(r.resultType, 'complete');
      assert.equal(JSON.parse(r.content[0].text).sum, 5);
    });
    await checks.check('read and prompt get', async () => {
      assert.equal((await ok(['read', ...target, 'demo://readme'])).stdout, 'Read me.\n');
      const r = await ok(['prompt', ...target, 'greet', 'name=bob']);
      assert.ok(r.stdout.endsWith('user:\nPlease greet bob.\n'), r.stdout);
    });
    await checks.check('a wrong argument type is reported', async () => {
      const r = await toolwire(['call', ...target, 'add', '--args', '{"a":"x","b":1}']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /valid number/);
    });
  } else if (leg === 'modern') {
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
    await checks.check('discover falls back to initialize: era legacy, 2025-11-25', async () => {
      const d = JSON.parse((await ok(['discover', '--json', ...target])).stdout);
      assert.equal(d.era, 'legacy');
      assert.equal(d.protocolVersion, '2025-11-25');
      assert.deepEqual(d.supportedVersions, ['2025-11-25']);
      assert.equal(d._meta['io.modelcontextprotocol/serverInfo'].name, peer.name);
      assert.equal(d.instructions, peer.instructions);
    });
    await checks.check('discover text names the era', async () => {
      const r = await ok(['discover', ...target]);
      assert.match(r.stdout, /^era: +legacy \(2025-11-25\)$/m);
    });
    await checks.check('list', async () => {
      const tools = JSON.parse((await ok(['list', '--json', ...target])).stdout);
      const names = tools.map((t) => t.name);
      for (const n of peer.tools) assert.ok(names.includes(n), names.join());
    });
    await checks.check('call', async () => {
      assert.equal((await ok(['call', ...target, 'echo', 'text=hi there'])).stdout, 'hi there\n');
    });
    await checks.check('structured result (outputSchema checked)', async () => {
      const r = JSON.parse((await ok(['call', '--json', ...target, 'add', 'a=2', 'b=3'])).stdout);
      assert.deepEqual(r.structuredContent, { sum: 5 });
      assert.equal(r.resultType, 'complete');
    });
    if (peer.progress) {
      await checks.check('a call that reports progress completes', async () => {
        assert.equal((await ok(['call', ...target, 'countdown', 'steps=3'])).stdout, 'done after 3 steps\n');
      });
    }
    if (stateful) {
      await checks.check('elicitation accepted through a real elicitation/create', async () => {
        const r = await ok(['call', '--input', '*={"confirm":true}', ...target, 'confirm', 'action=ship']);
        assert.equal(r.stdout, 'confirmed: ship\n');
      });
      await checks.check('elicitation declined through a real elicitation/create', async () => {
        const r = await toolwire(['call', '--input', '*=decline', ...target, 'confirm', 'action=ship']);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /not confirmed: ship/);
      });
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
    if (peer.templates) await checks.check('completion of a prompt argument and a template variable', async () => {
      assert.equal((await ok(['complete', '--prompt', 'greet', ...target, 'name=al'])).stdout, 'alice\nalbert\n');
      const r = await ok(['complete', '--template', 'demo://greeting/{name}', ...target, 'name=b']);
      assert.equal(r.stdout, 'bob\n');
    });
    await checks.check('--protocol modern does not fall back, and fails', async () => {
      const r = await toolwire(['list', '--protocol', 'modern', ...target]);
      assert.notEqual(r.code, 0);
    });
  }
} finally {
  server?.child.kill('SIGTERM');
}
checks.finish();
