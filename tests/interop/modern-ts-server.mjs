// A modern MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server
// 2.4.0, protocol 2026-07-28): toolwire's client in mode auto must stay
// modern with it. Tools (text, structured, progress, a confirmation through
// multi-round-trip input_required, one that defines another tool so the
// list changes), a resource, a resource template with completions and a
// prompt, over stdio and over HTTP. Over stdio, where no second client can
// call `define` while one listens, the server adds a tool named `late`
// shortly after each `subscriptions/listen` arrives, so that the listening
// client sees the list change.
//
//   node modern-ts-server.mjs stdio
//   node modern-ts-server.mjs http      (prints its URL on stderr)
//
// HTTP listens on 127.0.0.1 only, on a port the OS picks.

import { createServer } from 'node:http';
import {
  McpServer,
  ResourceTemplate,
  acceptedContent,
  completable,
  createMcpHandler,
  inputRequired,
  inputResponse,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const names = (value) => ['alice', 'albert', 'bob'].filter((n) => n.startsWith(value));

/** Tools defined at run time (HTTP builds a server per request). */
const defined = [];
/** Tells the open subscriptions that the tool list changed. */
let toolsChanged = () => {};
/** The server instance built last (over stdio, the connection's). */
let latest;
/** How long after a `subscriptions/listen` the `late` tool appears (stdio). */
const LATE_MS = 100;

function build() {
  const server = new McpServer(
    { name: 'ts-modern-interop', version: '2.4.0' },
    { instructions: 'A TypeScript SDK v2 server.' },
  );
  server.registerTool(
    'echo',
    { description: 'Echoes text.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  server.registerTool(
    'countdown',
    { description: 'Counts down, reporting progress.', inputSchema: z.object({ steps: z.number().int() }) },
    async ({ steps }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await sleep(10);
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
    },
  );
  const confirmation = z.object({ confirm: z.boolean() });
  server.registerTool(
    'confirm',
    { description: 'Asks the user to confirm.', inputSchema: z.object({ action: z.string() }) },
    async ({ action }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      if (answer.kind === 'missing') {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({ message: `Confirm ${action}?`, requestedSchema: confirmation }),
          },
        });
      }
      if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation)?.confirm === true) {
        return { content: [{ type: 'text', text: `confirmed: ${action}` }] };
      }
      return { content: [{ type: 'text', text: `not confirmed: ${action}` }], isError: true };
    },
  );
  server.registerTool(
    'define',
    { description: 'Defines a tool named NAME (the tool list changes).', inputSchema: z.object({ name: z.string() }) },
    async ({ name }) => {
      defined.push(name);
      toolsChanged();
      return { content: [{ type: 'text', text: `defined ${name}` }] };
    },
  );
  for (const name of defined) {
    server.registerTool(name, { description: 'Defined at run time.' }, async () => ({
      content: [{ type: 'text', text: name }],
    }));
  }
  server.registerResource(
    'readme',
    'demo://readme',
    { description: 'A fixed text.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Read me.' }] }),
  );
  server.registerResource(
    'greeting',
    new ResourceTemplate('demo://greeting/{name}', { list: undefined, complete: { name: names } }),
    { description: 'A greeting for NAME.', mimeType: 'text/plain' },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, text: `Hello, ${name}!` }] }),
  );
  server.registerPrompt(
    'greet',
    { description: 'Greets someone.', argsSchema: z.object({ name: completable(z.string(), names) }) },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}.` } }] }),
  );
  latest = server;
  return server;
}

/**
 * Serves stdio; a moment after each `subscriptions/listen` arrives, the
 * connection's server registers `late`, which announces the list change
 * on the open subscriptions.
 */
function serveStdioWithLate() {
  const transport = new StdioServerTransport();
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () =>
      handler &&
      ((message, extra) => {
        handler(message, extra);
        if (message.method === 'subscriptions/listen') {
          setTimeout(() => {
            latest?.registerTool('late', { description: 'Added after the subscription opened.' }, async () => ({
              content: [{ type: 'text', text: 'late' }],
            }));
          }, LATE_MS);
        }
      }),
    set: (h) => {
      handler = h;
    },
  });
  serveStdio(() => build(), { transport });
}

/** Serves the web-standard handler on node:http. */
async function serveHttp() {
  const handler = createMcpHandler(() => build());
  toolsChanged = () => handler.notify.toolsChanged();
  const http = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string') headers.set(k, v);
        else if (Array.isArray(v)) for (const one of v) headers.append(k, one);
      }
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      res.on('close', () => reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(e));
    }
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address();
  console.error(`modern-ts-server: serving MCP at http://127.0.0.1:${port}/mcp`);
  const stop = () => http.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const [mode] = process.argv.slice(2);
if (mode === 'stdio') {
  serveStdioWithLate();
} else if (mode === 'http') {
  await serveHttp();
} else {
  console.error('usage: modern-ts-server.mjs stdio | http');
  process.exit(2);
}
