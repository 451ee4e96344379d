// `toolwire app` in a real browser: Debian's Chromium, headless, driven by
// puppeteer-core (package.json; no browser download). The example app
// server (examples/app_server.rs) offers `chart`, whose interface draws the
// series the tool computed and has two buttons: one calls `stats`, a tool
// only the interface may call, the other `series`, a tool for the model
// only, which the host must refuse. Run straight against the example over
// stdio, then through `toolwire gateway` with the example as its upstream.
// Then interop with the PyPI mcp 2 SDK (its `mcp.server.apps`): a Python
// server that declares an app (python/mcp_apps_server.py) in `toolwire app`,
// straight and behind the gateway, and the Python client reading the
// example's tools and interface (python/mcp_client_apps.py). A screenshot
// of each run lands in the out dir.
//
//   node app-browser.mjs <toolwire binary> <app_server binary> <out dir> <python of the mcp 2 venv>
//
// One line per check (see lib.mjs); exits non-zero if any check failed.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { Checks, WAIT_MS, withTimeout } from './lib.mjs';

const [bin, example, out, python] = process.argv.slice(2);
if (!bin || !example || !out || !python) {
  console.error('usage: app-browser.mjs BIN APP_SERVER OUT_DIR PYTHON');
  process.exit(2);
}
const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const checks = new Checks('toolwire app:', 60_000);
const children = [];
const dir = mkdtempSync(join(tmpdir(), 'toolwire-app-'));

/** Starts `toolwire app ARGS` and resolves with the URL it prints. */
async function startApp(args) {
  const child = spawn(bin, ['app', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TOOLWIRE_LOG: 'warn' },
  });
  children.push(child);
  let seen = '';
  return withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        seen += String(chunk);
        const m = seen.match(/toolwire: app at (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64})/);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`toolwire app exited (${code}):\n${seen}`)));
    }),
    4 * WAIT_MS,
    'toolwire app',
  );
}

/** A raw GET of `url` with `headers`: its status. */
function status(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on('error', reject);
  });
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  // Root in CI: Chromium's own sandbox needs a user namespace it may not
  // get. The iframe sandbox under test is the page's, not this one.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});

/** One run: the page, the interface, its two buttons (unless `names` is null), a screenshot. */
async function run(label, url, names) {
  const page = await browser.newPage();
  const views = [];
  page.on('response', (r) => {
    if (new URL(r.url()).pathname === '/view') views.push(r.headers()['content-security-policy']);
  });
  await checks.check(`${label}: the page loads and the tool's result reaches the interface`, async () => {
    await page.goto(url);
    await page.waitForSelector('body[data-state="result-sent"]', { timeout: WAIT_MS });
    const frame = page.frames().find((f) => new URL(f.url()).pathname === '/view');
    assert.ok(frame, 'the interface is in an iframe');
    await frame.waitForFunction(
      () => document.getElementById('points').textContent === '0, 1, 4, 9, 16, 25',
      { timeout: WAIT_MS },
    );
    assert.equal(await frame.$eval('#title', (e) => e.textContent), 'A series of 6 points');
    assert.match(await page.$eval('#result', (e) => e.textContent), /The squares of 0 to 5: 0, 1, 4, 9, 16, 25/);
  });
  await checks.check(`${label}: the interface is sandboxed, under the default CSP`, async () => {
    assert.equal(await page.$eval('#frame', (e) => e.getAttribute('sandbox')), 'allow-scripts');
    assert.equal(views.length, 1);
    assert.match(views[0], /default-src 'none'/);
    assert.match(views[0], /connect-src 'none'/);
    const frame = page.frames().find((f) => new URL(f.url()).pathname === '/view');
    // An opaque origin: no access to the host page.
    assert.equal(await frame.evaluate(() => { try { return parent.document.title; } catch { return 'blocked'; } }), 'blocked');
  });
  if (names) await checks.check(`${label}: a button calls the app-only tool and shows its result`, async () => {
    const frame = page.frames().find((f) => new URL(f.url()).pathname === '/view');
    await frame.click('#stats');
    await frame.waitForFunction(
      () => document.getElementById('stats-result').textContent.length > 0,
      { timeout: WAIT_MS },
    );
    assert.equal(await frame.$eval('#stats-result', (e) => e.textContent), '6 points, sum 55, mean 9.17');
  });
  if (names) await checks.check(`${label}: calling a model-only tool from the interface is refused`, async () => {
    const frame = page.frames().find((f) => new URL(f.url()).pathname === '/view');
    await frame.click('#secret');
    await frame.waitForFunction(
      () => document.getElementById('secret-result').textContent.length > 0,
      { timeout: WAIT_MS },
    );
    const text = await frame.$eval('#secret-result', (e) => e.textContent);
    assert.match(text, /^refused: .*not callable by apps/, text);
    const calls = await page.$eval('#calls', (e) => e.textContent);
    assert.match(calls, new RegExp(`tools/call ${names.stats}: ok`), calls);
    assert.match(calls, new RegExp(`tools/call ${names.series}: refused`), calls);
  });
  await page.screenshot({ path: join(out, `app-browser-${label}.png`), fullPage: true });
  await page.close();
}

try {
  const url = await startApp(['--stdio', example, 'chart', 'n=6']);
  await checks.check('the page needs its token and its own Host', async () => {
    const base = new URL(url);
    assert.equal(await status(url), 200);
    assert.equal(await status(`${base.origin}/`), 403, 'no token');
    assert.equal(await status(`${base.origin}/?token=${'0'.repeat(64)}`), 403, 'a wrong token');
    assert.equal(await status(url, { host: 'evil.example' }), 403, 'another Host (DNS rebinding)');
  });
  await run('direct', url, { stats: 'stats', series: 'series' });

  // Through the gateway. One upstream, names as it gives them: the
  // interface calls its tools by its own server's names.
  const config = join(dir, 'gateway.toml');
  writeFileSync(config, `namespace = "never"\n[upstreams.ex]\ncommand = [${JSON.stringify(example)}]\n`);
  const viaGateway = await startApp(['--stdio', `${bin} gateway --config ${config}`, 'chart', 'n=6']);
  await run('gateway', viaGateway, { stats: 'stats', series: 'series' });

  // Namespaced (the default): the tool is ex__chart and its interface
  // ui://ex/series/chart, still a ui:// URI, read through the gateway. (The
  // interface's buttons call its own server's names, which the gateway
  // prefixes: the README says so.)
  const prefixed = join(dir, 'prefixed.toml');
  writeFileSync(prefixed, `[upstreams.ex]\ncommand = [${JSON.stringify(example)}]\n`);
  await checks.check('gateway, namespaced: the tool names its interface under the prefix', async () => {
    const listed = await new Promise((resolve, reject) => {
      const child = spawn(bin, ['list', '--json', '--stdio', `${bin} gateway --config ${prefixed}`], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (c) => (text += String(c)));
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`exit ${code}`))));
    });
    const chart = listed.find((t) => t.name === 'ex__chart');
    assert.deepEqual(chart._meta.ui, { resourceUri: 'ui://ex/series/chart' });
    assert.equal(chart._meta['ui/resourceUri'], 'ui://ex/series/chart');
    const stats = listed.find((t) => t.name === 'ex__stats');
    assert.deepEqual(stats._meta.ui.visibility, ['app'], 'visibility passes through');
  });
  const viaPrefix = await startApp(['--stdio', `${bin} gateway --config ${prefixed}`, 'ex__chart', 'n=6']);
  await run('gateway-namespaced', viaPrefix, null);

  // The Python SDK's app in toolwire's host, straight and behind the gateway.
  const pyServer = `${python} ${here('python/mcp_apps_server.py')}`;
  const pyConfig = join(dir, 'python.toml');
  writeFileSync(
    pyConfig,
    `namespace = "never"\nstart_wait_ms = 20000\n[upstreams.py]\ncommand = [${JSON.stringify(python)}, ${JSON.stringify(here('python/mcp_apps_server.py'))}]\n`,
  );
  for (const [label, server] of [['python', pyServer], ['python-gateway', `${bin} gateway --config ${pyConfig}`]]) {
    const url = await startApp(['--stdio', server, 'greet', 'name=ada']);
    const page = await browser.newPage();
    await checks.check(`${label}: a Python SDK app renders, and its app-only tool answers its button`, async () => {
      await page.goto(url);
      await page.waitForSelector('body[data-state="result-sent"]', { timeout: WAIT_MS });
      const frame = page.frames().find((f) => new URL(f.url()).pathname === '/view');
      await frame.waitForFunction(() => document.getElementById('greeting').textContent.startsWith('Hello'), {
        timeout: WAIT_MS,
      });
      // The host declared MCP Apps; the Python server saw it.
      assert.equal(await frame.$eval('#greeting', (e) => e.textContent), 'Hello, ada! (rendered)');
      await frame.click('#shout');
      await frame.waitForFunction(() => document.getElementById('shouted').textContent.length > 0, {
        timeout: WAIT_MS,
      });
      assert.equal(await frame.$eval('#shouted', (e) => e.textContent), 'HELLO, ADA!');
    });
    await page.screenshot({ path: join(out, `app-browser-${label}.png`), fullPage: true });
    await page.close();
  }

  // The Python client reads toolwire's example app.
  await checks.check("the PyPI mcp client reads the example app's tools and interface", async () => {
    const child = spawn(python, [here('python/mcp_client_apps.py'), example], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c) => (text += String(c)));
    child.stderr.on('data', (c) => (text += String(c)));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    for (const line of text.trim().split('\n')) console.log(`          ${line}`);
    assert.equal(code, 0, text);
    assert.equal((text.match(/^ {2}ok {4}/gm) ?? []).length, 4, text);
  });
} catch (e) {
  await checks.check('set-up', () => {
    throw e;
  });
} finally {
  await browser.close();
  for (const child of children) child.kill();
  rmSync(dir, { recursive: true, force: true });
  checks.finish();
}
