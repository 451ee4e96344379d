// `toolwire gateway` in front of a real REST API: a FastAPI app from PyPI
// (python/openapi_app.py) serving its own OpenAPI 3.1 document. One
// upstream reads the document from the app's URL, with an API key from the
// environment, a denied operation and a renamed one; a second reads the
// same document from a file, with base_url. Called with the `toolwire`
// command: path, query and body parameters, a $ref'd body schema, a 404, a
// 422 from the API's own validation, a 204, and arguments refused at the
// gateway before they reach the API.
//
//   node gateway-openapi.mjs <toolwire binary> <python of the openapi venv>
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { Checks, MODERN, WAIT_MS, withTimeout } from './lib.mjs';

const [bin, python] = process.argv.slice(2);
if (!bin || !python) {
  console.error('usage: gateway-openapi.mjs BIN PYTHON');
  process.exit(2);
}
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const checks = new Checks('gateway (OpenAPI):');
const children = [];
const dir = mkdtempSync(join(tmpdir(), 'toolwire-openapi-'));
const env = { ...process.env, RUST_BACKTRACE: '0', TOOLWIRE_LOG: 'warn', PETS_KEY: 'k-123' };

/** Spawns `cmd args` and resolves with the first match of `pattern` in its stream `from`. */
async function startPrinting(cmd, args, from, pattern) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.push(child);
  let seen = '';
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += String(chunk)));
  return withTimeout(
    new Promise((resolve, reject) => {
      child[from].on('data', (chunk) => {
        seen += String(chunk);
        // Whole lines only: a chunk may end inside the URL.
        const m = seen.slice(0, seen.lastIndexOf('\n') + 1).match(pattern);
        if (m) resolve(m[1] ?? m[0]);
      });
      child.on('exit', (code) => reject(new Error(`${cmd} exited (${code}) before printing:\n${errors}`)));
    }),
    4 * WAIT_MS,
    `${cmd} ${args.join(' ')}`,
  );
}

/** Runs `toolwire ARGS`; resolves with its exit code and output. */
function toolwire(args) {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 60_000, env }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The median of `n` sequential runs of `fn`, in ms. */
async function median(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(n / 2)];
}

/** A process's user + system CPU so far, in clock ticks (/proc/PID/stat). */
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** One modern `tools/call` straight over HTTP (no CLI process in the way). */
async function rawCall(url, name, args) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(text, /"Rex"/);
}

/** `toolwire call --json URL TOOL ARGS`: the result, and whether the command succeeded. */
async function call(url, tool, ...args) {
  const r = await toolwire(['call', '--json', url, tool, ...args]);
  let result;
  try {
    result = JSON.parse(r.stdout);
  } catch {
    assert.fail(`toolwire call ${tool} printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
  return { code: r.code, result, text: (result.content ?? []).map((c) => c.text ?? '').join('\n') };
}

try {
  const port = await startPrinting(python, [here('python/openapi_app.py')], 'stdout', /^(\d+)\s/m);
  const api = `http://127.0.0.1:${port}`;
  const document = await (await fetch(`${api}/openapi.json`)).text();
  const file = join(dir, 'openapi.json');
  writeFileSync(file, document);
  const config = join(dir, 'gateway.toml');
  writeFileSync(
    config,
    `[upstreams.pets]
openapi = "${api}/openapi.json"
headers = { "X-Api-Key" = "\${PETS_KEY}" }
deny = ["admin_*"]
[upstreams.pets.tools.create_pet]
name = "add_pet"
[upstreams.pets.tools.list_pets]
description = "Every pet, a page at a time"

[upstreams.copy]
openapi = "${file}"
base_url = "${api}"
allow = ["get_pet"]
`,
  );

  await checks.check('gateway check lists the operations with their token cost', async () => {
    const r = await toolwire(['gateway', 'check', '--config', config]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    for (const name of ['pets__list_pets', 'pets__get_pet', 'pets__add_pet', 'pets__delete_pet', 'copy__get_pet']) {
      assert.match(r.stdout, new RegExp(`^${name} +\\d+ +-$`, 'm'), r.stdout);
    }
    assert.doesNotMatch(r.stdout, /admin_reset|create_pet|copy__list_pets/, 'deny, rename and allow apply');
    assert.match(r.stdout, /^6 tools, about \d+ tokens$/m, r.stdout);
  });

  const url = await startPrinting(bin, ['gateway', '--config', config, '--http', '127.0.0.1:0'], 'stderr', /http:\/\/127\.0\.0\.1:\d+\/mcp/);
  const gatewayPid = children.at(-1).pid;

  await checks.check('operations are tools: schemas, outputSchema, annotations, overrides', async () => {
    const r = await toolwire(['list', '--json', url]);
    assert.equal(r.code, 0, r.stderr);
    const tools = Object.fromEntries(JSON.parse(r.stdout).map((t) => [t.name, t]));
    const get = tools.pets__get_pet;
    assert.deepEqual(get.inputSchema.required, ['pet_id']);
    assert.equal(get.inputSchema.properties.pet_id.type, 'integer');
    assert.equal(get.outputSchema.type, 'object');
    assert.equal(get.outputSchema.properties.name.type, 'string', 'the $ref to Pet is inlined');
    assert.equal(get.annotations.readOnlyHint, true);
    assert.equal(get.annotations.idempotentHint, true);
    const add = tools.pets__add_pet;
    assert.deepEqual(add.inputSchema.required, ['name'], "the $ref'd body's required properties");
    assert.equal(add.inputSchema.properties.name.minLength, 1);
    assert.equal(add.annotations.readOnlyHint, false);
    assert.equal(tools.pets__delete_pet.annotations.destructiveHint, true);
    assert.equal(tools.pets__delete_pet.outputSchema, undefined, 'a 204 promises no JSON');
    assert.equal(tools.pets__list_pets.description, 'Every pet, a page at a time');
    assert.equal(tools.pets__list_pets.outputSchema.properties.result.type, 'array', 'an array answer is wrapped');
    const whoami = Object.keys(tools).find((n) => n.startsWith('pets__whoami'));
    assert.ok(whoami, Object.keys(tools).join());
    assert.deepEqual(Object.keys(tools[whoami].inputSchema.properties), [], 'the configured X-Api-Key is no argument');
  });

  await checks.check('a path parameter', async () => {
    const { code, result } = await call(url, 'pets__get_pet', 'pet_id=1');
    assert.equal(code, 0);
    assert.deepEqual(result.structuredContent, { id: 1, name: 'Rex', tag: 'dog' });
  });

  await checks.check('query parameters', async () => {
    const { code, result } = await call(url, 'pets__list_pets', 'tag=cat', 'limit=1');
    assert.equal(code, 0);
    assert.deepEqual(result.structuredContent, { result: [{ id: 2, name: 'Tom', tag: 'cat' }] });
  });

  await checks.check("a $ref'd body (201)", async () => {
    const { code, result } = await call(url, 'pets__add_pet', 'name=Kit', 'tag=cat');
    assert.equal(code, 0);
    assert.deepEqual(result.structuredContent, { id: 3, name: 'Kit', tag: 'cat' });
  });

  await checks.check('a 404 is an isError result with the status and the body', async () => {
    const { result, text } = await call(url, 'pets__get_pet', 'pet_id=999');
    assert.equal(result.isError, true);
    assert.match(text, /HTTP 404 Not Found from GET \/pets\/999: \{"detail":"Pet 999 not found"\}/);
  });

  await checks.check("a 422 from the API's own validation reaches the model", async () => {
    const { result, text } = await call(url, 'pets__add_pet', 'name=admin');
    assert.equal(result.isError, true);
    assert.match(text, /HTTP 422 Unprocessable Entity from POST \/pets/);
    assert.match(text, /the name 'admin' is reserved/);
  });

  await checks.check('the configured header reaches the API', async () => {
    const tools = JSON.parse((await toolwire(['list', '--json', url])).stdout).map((t) => t.name);
    const whoami = tools.find((n) => n.startsWith('pets__whoami'));
    const { result } = await call(url, whoami);
    assert.deepEqual(result.structuredContent, { key: 'k-123' });
  });

  await checks.check('a 204, then the pet is gone', async () => {
    const gone = await call(url, 'pets__delete_pet', 'pet_id=3');
    assert.equal(gone.code, 0);
    assert.equal(gone.text, 'HTTP 204 No Content');
    const { result } = await call(url, 'copy__get_pet', 'pet_id=3');
    assert.equal(result.isError, true, 'the file-read upstream calls the same API');
    assert.match(JSON.stringify(result.content), /404/);
  });

  await checks.check('arguments outside the schema are refused at the gateway', async () => {
    const { result, text } = await call(url, 'pets__list_pets', 'limit=0');
    assert.equal(result.isError, true);
    assert.match(text, /limit/);
    assert.doesNotMatch(text, /HTTP 422/, 'the API was not asked');
  });

  // For BENCHMARKS.md: reported, not asserted (a debug build of the
  // gateway on a shared machine).
  await checks.check('timing: a call straight to the API and through the gateway', async () => {
    const n = 300;
    const direct = await median(n, async () => {
      const r = await fetch(`${api}/pets/1`);
      assert.equal(r.status, 200);
      await r.text();
    });
    const before = cpuTicks(gatewayPid);
    const via = await median(n, () => rawCall(url, 'pets__get_pet', { pet_id: 1 }));
    const ticks = cpuTicks(gatewayPid) - before;
    console.log(
      `          ${n} sequential calls: p50 straight to FastAPI ${direct.toFixed(2)} ms, ` +
        `through the gateway ${via.toFixed(2)} ms (+${(via - direct).toFixed(2)} ms); ` +
        `gateway CPU ${((ticks * 10_000) / n).toFixed(0)} µs a call (debug build)`,
    );
  }, 120_000);
} catch (e) {
  await checks.check('set-up', () => {
    throw e;
  });
} finally {
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
  checks.finish();
}
