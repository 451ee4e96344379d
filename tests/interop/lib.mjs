// Shared helpers of the interop scenarios: checks that print one line each,
// bounded waits, a wire log of a TypeScript SDK transport, and the TS SDK
// (v1, legacy era) clients over stdio and Streamable HTTP.
//
// Output protocol (read by scripts/interop): every check prints exactly one
// line starting with "  ok    " or "  FAIL  "; a failure's details follow on
// lines indented by ten spaces. A scenario exits non-zero if any check
// failed.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The revision the stateless (modern) requests speak. */
export const MODERN = '2026-07-28';
/** The revision TypeScript SDK 1.32.2 asks for in `initialize`. */
export const SDK_LATEST = '2025-11-25';
/** How long any single wait may take, unless a check says otherwise. */
export const WAIT_MS = 10_000;

/** Rejects with a clear message if `promise` has not settled after `ms`. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `predicate` every 10 ms until it holds, at most `ms`. */
export async function until(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** A list of named checks, each run once, each printing one line. */
export class Checks {
  /** `ms`: how long a check may take unless it says otherwise. */
  constructor(prefix, ms = 2 * WAIT_MS) {
    this.prefix = prefix;
    this.ms = ms;
    this.passed = 0;
    this.failed = 0;
  }

  /** Runs `fn` (at most `ms`) and prints `ok` or `FAIL` with the reason. */
  async check(name, fn, ms = this.ms) {
    const label = `${this.prefix} ${name}`;
    try {
      await withTimeout(Promise.resolve().then(fn), ms, name);
      this.passed++;
      console.log(`  ok    ${label}`);
    } catch (e) {
      this.failed++;
      console.log(`  FAIL  ${label}`);
      const why = e instanceof Error ? (e.stack ?? e.message) : String(e);
      for (const line of why.split('\n').slice(0, 40)) console.log(`          ${line}`);
    }
  }

  /** Exits 0 if every check passed, else 1. */
  finish() {
    process.exitCode = this.failed === 0 ? 0 : 1;
  }
}

/**
 * Records every JSON-RPC message a TS SDK transport receives and sends, as
 * it travels (after the transport's own parsing, before the SDK's schemas).
 * Install before `client.connect`. With `askFor`, the `initialize` request
 * asks for that revision instead of the SDK's latest, as an older SDK would.
 */
export class Wire {
  constructor(transport, { askFor } = {}) {
    this.received = [];
    this.sent = [];
    const received = this.received;
    let handler;
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      get: () =>
        handler &&
        ((message, extra) => {
          received.push(structuredClone(message));
          handler(message, extra);
        }),
      set: (h) => {
        handler = h;
      },
    });
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      // An older client: the SDK always asks for its latest revision.
      if (askFor && message.method === 'initialize') {
        message = { ...message, params: { ...message.params, protocolVersion: askFor } };
      }
      this.sent.push(structuredClone(message));
      return send(message, options);
    };
  }

  /** The last request the client sent with `method` (and tool `name`). */
  lastSent(method, name) {
    for (let i = this.sent.length - 1; i >= 0; i--) {
      const m = this.sent[i];
      if (m.method === method && m.id !== undefined && (name === undefined || m.params?.name === name)) {
        return m;
      }
    }
    throw new Error(`the client sent no ${method}${name ? ` for ${name}` : ''}`);
  }

  /** The server's response (as received) to the client request `id`. */
  responseTo(id) {
    const r = this.received.find((m) => m.id === id && ('result' in m || 'error' in m));
    if (!r) throw new Error(`no response to request ${id} on the wire`);
    return r;
  }

  /** The raw result of the last `method` (tool `name`) call. */
  lastResult(method, name) {
    const r = this.responseTo(this.lastSent(method, name).id);
    if (!('result' in r)) throw new Error(`${method} got an error: ${JSON.stringify(r.error)}`);
    return r.result;
  }

  /** Notifications received with `method`. */
  notifications(method) {
    return this.received.filter((m) => m.method === method && m.id === undefined);
  }

  /** Server-to-client requests received with `method`. */
  requests(method) {
    return this.received.filter((m) => m.method === method && m.id !== undefined);
  }
}

/** A TS SDK client with the given capabilities, not yet connected. */
export function newClient(name, capabilities = {}) {
  return new Client({ name, version: '1.32.2-interop' }, { capabilities });
}

/** A stdio transport that runs `toolwire serve`, with stderr kept aside. */
export function stdioTransport(bin) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['serve'],
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', TOOLWIRE_LOG: 'warn' },
  });
  const stderr = [];
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  transport.serverStderr = stderr;
  return transport;
}

/** A Streamable HTTP transport to `url` (the SDK reconnects at most once). */
export function httpTransport(url) {
  return new StreamableHTTPClientTransport(new URL(url), {
    reconnectionOptions: {
      initialReconnectionDelay: 100,
      maxReconnectionDelay: 500,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 1,
    },
  });
}

/** Connects `client` over `transport`, bounded. */
export async function connect(client, transport) {
  await withTimeout(client.connect(transport, { timeout: WAIT_MS }), WAIT_MS + 1000, 'initialize');
}

/** Closes `client`, bounded; never throws. */
export async function closeQuietly(client) {
  try {
    await withTimeout(client.close(), 5000, 'close');
  } catch {
    // The process is about to end; the transport's child is killed anyway.
  }
}

/** Only loopback URLs are ever contacted. */
export function loopbackUrl(raw) {
  const url = new URL(raw);
  if (url.protocol !== 'http:' || url.hostname !== '127.0.0.1') {
    throw new Error(`refusing to contact ${raw}: the interop tests only talk to http://127.0.0.1`);
  }
  return url.href;
}

/** The text of a result's only content block. */
export function onlyText(result) {
  if (!Array.isArray(result?.content) || result.content.length !== 1 || result.content[0].type !== 'text') {
    throw new Error(`expected one text block, got ${JSON.stringify(result)}`);
  }
  return result.content[0].text;
}
