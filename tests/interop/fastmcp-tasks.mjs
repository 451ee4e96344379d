// The Tasks extension (io.modelcontextprotocol/tasks) with the Python
// ecosystem from PyPI: fastmcp 4 with fastmcp-tasks (the versions pinned in
// python/requirements-tasks.txt), in both directions.
//
//   node fastmcp-tasks.mjs client <toolwire binary> <python of the tasks venv>
//   node fastmcp-tasks.mjs server <toolwire binary> <python of the tasks venv>
//
// client: the fastmcp 4 client (python/fastmcp_client_tasks.py) calls
// `toolwire serve`'s task-optional demo tool `report` as a task, over
// Streamable HTTP (a `toolwire serve --http 127.0.0.1:0` of its own) and over
// stdio (fastmcp starts `toolwire serve`): the call becomes a task, is polled
// to completed, its input request (publish) is answered through fastmcp's
// elicitation handler, and a cancelled one ends cancelled. The Python
// script's check lines are this scenario's own; one more check here says
// whether it ran all of them to the end.
//
// What does not interoperate, and why: over HTTP fastmcp-tasks 4.1.4 sends
// tasks/get, tasks/update and tasks/cancel without the Mcp-Name header the
// extension requires (its request models in fastmcp_tasks/client_models.py
// declare no `name_param`), which toolwire rightly refuses with -32020; one
// check asserts that refusal, and the other HTTP checks add the header for
// the client (see the Python script).
//
// server: the `toolwire` command against a fastmcp 4 + fastmcp-tasks server
// (python/fastmcp_tasks_server.py, docket's in-memory backend) over HTTP,
// where tasks outlive requests: `call --task` follows a task to its result,
// answering its input request; `call --task --detach` prints the id, and
// `task get|wait|cancel` follow it from processes of their own; the routing
// headers toolwire sends on tasks/* are what the extension asks. Over stdio
// (a server process per command, its tasks in its memory) only `call --task`
// can be checked.
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Checks, loopbackUrl, sleep, withTimeout } from './lib.mjs';

const [mode, bin, python] = process.argv.slice(2);
if (!['client', 'server'].includes(mode) || !bin || !python) {
  console.error('usage: fastmcp-tasks.mjs client|server BIN PYTHON');
  process.exit(2);
}
const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const env = { ...process.env, RUST_BACKTRACE: '0', TOOLWIRE_LOG: 'warn' };
const children = [];

/** Starts a server child; resolves with its URL (matched on stderr). */
async function startHttp(command, args, pattern, ms = 30_000) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  children.push(child);
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
  return loopbackUrl(url);
}

/** Runs `command ARGS`; resolves with its exit code and output. */
function run(command, args, ms = 60_000) {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: ms, env }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const toolwire = (args) => run(bin, args);

/** `s` as a literal in a regular expression. */
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Runs `toolwire ARGS` and insists it succeeded. */
async function ok(args) {
  const r = await toolwire(args);
  assert.equal(r.code, 0, `toolwire ${args.join(' ')} failed (${r.code}):\n${r.stdout}${r.stderr}`);
  return r;
}

/** `toolwire task get --json`: the task, parsed. */
async function taskGet(target, id) {
  return JSON.parse((await ok(['task', 'get', '--json', ...target, id])).stdout);
}

/** Polls `task get` until `done(task)` holds, at most `ms`. */
async function taskUntil(target, id, done, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const task = await taskGet(target, id);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(task)}`);
    await sleep(100);
  }
}

/** `call --task --detach`: the id it prints. */
async function detach(target, tool, ...args) {
  const r = await ok(['call', '--task', '--detach', ...target, tool, ...args]);
  assert.match(r.stdout, /^\S+\n$/, `not one id: ${JSON.stringify(r.stdout)}`);
  return r.stdout.trim();
}

async function clientLegs(checks) {
  const url = await startHttp(bin, ['serve', '--http', '127.0.0.1:0'], /serving MCP at (\S+)/);
  for (const [kind, where] of [
    ['http', url],
    ['stdio', bin],
  ]) {
    await checks.check(
      `the fastmcp client over ${kind} (python/fastmcp_client_tasks.py) ran all its checks`,
      async () => {
        const r = await run(python, [here('./python/fastmcp_client_tasks.py'), kind, where], 150_000);
        // Its check lines are this scenario's.
        const lines = r.stdout.split('\n').filter((l) => /^ {2}(ok {4}|FAIL {2})|^ {10}/.test(l));
        if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
        const failed = r.stdout.match(/^ {2}FAIL {2}/gm)?.length ?? 0;
        const passed = r.stdout.match(/^ {2}ok {4}/gm)?.length ?? 0;
        const end = r.stdout.match(/^fastmcp_client_tasks: (\d+) checks$/m);
        assert.ok(end, `it did not run to its end (exit ${r.code}):\n${r.stdout}${r.stderr.slice(-4000)}`);
        assert.equal(passed + failed, Number(end[1]), 'check lines printed vs. checks run');
        assert.equal(r.code, failed ? 1 : 0, `exit status ${r.code} with ${failed} failed:\n${r.stderr.slice(-4000)}`);
      },
      160_000,
    );
  }
}

async function serverLegs(checks) {
  const script = here('./python/fastmcp_tasks_server.py');
  // Port 0: the OS picks a free one, and uvicorn names it.
  const base = await startHttp(python, [script, 'http', '0'], /Uvicorn running on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
  const http = [new URL('/mcp', base).href];
  const stdio = ['--stdio', `'${python}' '${script}' stdio`];

  checks.prefix = 'toolwire client, fastmcp-tasks server over HTTP:';
  await checks.check('discover: modern, the server offers the tasks extension', async () => {
    const d = JSON.parse((await ok(['discover', '--json', ...http])).stdout);
    assert.equal(d.era, 'modern');
    assert.equal(d.protocolVersion, '2026-07-28');
    assert.deepEqual(d.capabilities?.extensions?.['io.modelcontextprotocol/tasks'], {});
  });
  await checks.check('call --task follows crunch to its result', async () => {
    assert.equal((await ok(['call', '--task', ...http, 'crunch', 'steps=3'])).stdout, 'crunched 3 steps\n');
  });
  await checks.check('call --task --detach prints an id; task get (another process) shows it working with its status message', async () => {
    const id = await detach(http, 'crunch', 'steps=30');
    const task = await taskUntil(http, id, (t) => t.statusMessage, 10_000, 'a status message');
    assert.equal(task.taskId, id);
    assert.equal(task.status, 'working');
    assert.match(task.statusMessage, /^step \d+ of 30$/);
    assert.equal(task.pollIntervalMs, 100);
    const text = (await ok(['task', 'get', ...http, id])).stdout;
    assert.match(text, new RegExp(`^${escape(id)}: working(: step \\d+ of 30)?\\n$`));
    const done = await ok(['task', 'wait', ...http, id]);
    assert.equal(done.stdout, 'crunched 30 steps\n');
    const after = await taskGet(http, id);
    assert.equal(after.status, 'completed');
    assert.equal(after.result.content[0].text, 'crunched 30 steps');
  });
  await checks.check('call --task answers the in-task input request (--input *), accepted and declined', async () => {
    const yes = await ok(['call', '--task', '--input', '*={"approve":true}', ...http, 'approve', 'item=ship']);
    assert.equal(yes.stdout, 'approved: ship\n');
    const no = await toolwire(['call', '--task', '--input', '*=decline', ...http, 'approve', 'item=ship']);
    assert.notEqual(no.code, 0);
    assert.match(no.stderr, /not approved: ship/);
  });
  await checks.check('a detached task waits in input_required; task wait --input KEY answers it', async () => {
    const id = await detach(http, 'approve', 'item=later');
    const task = await taskUntil(http, id, (t) => t.status !== 'working', 10_000, 'input_required');
    assert.equal(task.status, 'input_required');
    const keys = Object.keys(task.inputRequests ?? {});
    assert.equal(keys.length, 1, JSON.stringify(task));
    const asked = task.inputRequests[keys[0]];
    assert.equal(asked.method, 'elicitation/create');
    assert.equal(asked.params.message, 'Approve later?');
    const done = await ok(['task', 'wait', '--input', `${keys[0]}={"approve":true}`, ...http, id]);
    assert.equal(done.stdout, 'approved: later\n');
    assert.equal((await taskGet(http, id)).status, 'completed');
  });
  await checks.check('task cancel of a long one: it ends cancelled, and task wait says so', async () => {
    const id = await detach(http, 'crunch', 'steps=300');
    assert.equal((await taskGet(http, id)).status, 'working');
    const r = await ok(['task', 'cancel', ...http, id]);
    assert.equal(r.stdout, `${id}: cancel requested\n`);
    await taskUntil(http, id, (t) => t.status === 'cancelled', 10_000, 'cancelled');
    const wait = await toolwire(['task', 'wait', ...http, id]);
    assert.notEqual(wait.code, 0);
    assert.match(wait.stderr, /cancelled/);
  });
  await checks.check('toolwire sends Mcp-Method and Mcp-Name: <taskId> on tasks/get, tasks/update and tasks/cancel', async () => {
    const id = await detach(http, 'approve', 'item=headers');
    const task = await taskUntil(http, id, (t) => t.status === 'input_required', 10_000, 'input_required');
    const [key] = Object.keys(task.inputRequests);
    const declined = await toolwire(['task', 'wait', '--input', `${key}=decline`, ...http, id]);
    assert.match(declined.stderr, /not approved: headers/);
    await ok(['task', 'cancel', ...http, id]);
    const seen = JSON.parse((await ok(['call', ...http, 'routing'])).stdout);
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const mine = seen.filter(([, name]) => name === id).map(([m]) => m);
      assert.ok(mine.includes(method), `no ${method} with Mcp-Name ${id}: ${JSON.stringify(seen)}`);
    }
    const unnamed = seen.filter(([, name]) => name === null || name === undefined);
    assert.deepEqual(unnamed, [], 'tasks/* requests without Mcp-Name');
  });
  await checks.check('a tool without task support answers at once under --task', async () => {
    assert.equal((await ok(['call', '--task', ...http, 'echo', 'text=hi'])).stdout, 'hi\n');
  });
  await checks.check('a task-required tool: -32021 without --task, its result with it', async () => {
    const without = await toolwire(['call', ...http, 'batch', 'size=3']);
    assert.notEqual(without.code, 0);
    assert.match(without.stderr, /-32021/);
    assert.equal((await ok(['call', '--task', ...http, 'batch', 'size=3'])).stdout, 'batch of 3 done\n');
  });
  await checks.check('task get of an unknown id: an error (-32602)', async () => {
    const r = await toolwire(['task', 'get', ...http, 'no-such-task']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /-32602/);
  });

  checks.prefix = 'toolwire client, fastmcp-tasks server over stdio:';
  await checks.check('call --task follows crunch to its result', async () => {
    assert.equal((await ok(['call', '--task', ...stdio, 'crunch', 'steps=3'])).stdout, 'crunched 3 steps\n');
  });
  await checks.check('call --task answers the in-task input request', async () => {
    const r = await ok(['call', '--task', '--input', '*={"approve":true}', ...stdio, 'approve', 'item=a']);
    assert.equal(r.stdout, 'approved: a\n');
  });
  await checks.check('a task-required tool runs under --task', async () => {
    assert.equal((await ok(['call', '--task', ...stdio, 'batch', 'size=2'])).stdout, 'batch of 2 done\n');
  });
}

const checks = new Checks(`fastmcp-tasks ${mode}:`, 30_000);
try {
  if (mode === 'client') await clientLegs(checks);
  else await serverLegs(checks);
} catch (e) {
  // A server that would not start: one failure, with the reason.
  await checks.check('the scenario ran', () => {
    throw e;
  });
} finally {
  for (const c of children) c.kill('SIGTERM');
  checks.finish();
}
