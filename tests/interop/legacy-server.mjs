// A legacy MCP server on the TypeScript SDK v1 (@modelcontextprotocol/sdk
// 1.32.2, protocol 2025-11-25): the peer toolwire's client must fall back
// to `initialize` for. Tools (text, structured, progress, a real
// `elicitation/create` (and one that withdraws it after a timeout), a real
// `sampling/createMessage` and `roots/list`, one that defines another tool so the list changes),
// a resource, a resource template with completions and a prompt. In a
// session that can carry the server's own notifications (stdio, stateful
// HTTP, HTTP+SSE) the server also adds a tool named `late` a second after
// the session starts, so that a listening client sees the list change.
//
//   node legacy-server.mjs stdio
//   node legacy-server.mjs http stateful|stateless|sse   (prints its URL on stderr)
//
// `sse` is the 2024-11-05 HTTP+SSE transport (SSEServerTransport): GET /sse
// opens the stream, POST /messages?sessionId=… carries the client's
// messages, and any other request gets 404, as an Express app gives.
// HTTP listens on 127.0.0.1 only, on a port the OS picks.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long after a session starts the `late` tool appears. */
const LATE_MS = 1000;

/** One server instance (an McpServer serves one transport); `late` adds
 * the `late` tool a while after the session starts. */
function build(late = false) {
  const server = new McpServer(
    { name: 'ts-legacy-interop', version: '1.32.2' },
    { capabilities: { logging: {} }, instructions: 'A TypeScript SDK v1 server.' },
  );
  if (late) {
    server.server.oninitialized = () => {
      const timer = setTimeout(() => {
        server.registerTool('late', { description: 'Added after the session started.' }, async () => ({
          content: [{ type: 'text', text: 'late' }],
        }));
      }, LATE_MS);
      timer.unref();
    };
  }
  server.registerTool(
    'echo',
    { description: 'Echoes text.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  server.registerTool(
    'countdown',
    { description: 'Counts down, reporting progress.', inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await sleep(10);
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
    },
  );
  server.registerTool(
    'confirm',
    { description: 'Asks the user to confirm.', inputSchema: { action: z.string() } },
    async ({ action }) => {
      const answer = await server.server.elicitInput({
        message: `Confirm ${action}?`,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', description: 'Go ahead?' } },
          required: ['confirm'],
        },
      });
      if (answer.action === 'accept' && answer.content?.confirm === true) {
        return { content: [{ type: 'text', text: `confirmed: ${action}` }] };
      }
      return { content: [{ type: 'text', text: `not confirmed: ${action}` }], isError: true };
    },
  );
  server.registerTool(
    'hurried_confirm',
    {
      description: 'Asks the user to confirm, but waits only MS milliseconds (then withdraws the question).',
      inputSchema: { action: z.string(), ms: z.number().int() },
    },
    async ({ action, ms }) => {
      try {
        // On timeout the SDK sends notifications/cancelled for the request.
        await server.server.elicitInput(
          { message: `Confirm ${action} quickly?`, requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } } },
          { timeout: ms },
        );
        return { content: [{ type: 'text', text: `answered in time: ${action}` }] };
      } catch (e) {
        return { content: [{ type: 'text', text: `withdrawn: ${action}` }] };
      }
    },
  );
  server.registerTool(
    'sample',
    { description: "Asks the client's model (sampling/createMessage).", inputSchema: { prompt: z.string() } },
    async ({ prompt }) => {
      const r = await server.server.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 50,
      });
      return { content: [{ type: 'text', text: `model said: ${r.content.text}` }] };
    },
  );
  server.registerTool(
    'roots',
    { description: "Lists the client's roots (roots/list)." },
    async () => {
      const r = await server.server.listRoots();
      return { content: [{ type: 'text', text: `roots: ${r.roots.map((x) => x.uri).join(',')}` }] };
    },
  );
  server.registerTool(
    'define',
    { description: 'Defines a tool named NAME (the tool list changes).', inputSchema: { name: z.string() } },
    async ({ name }) => {
      server.registerTool(name, { description: 'Defined at run time.' }, async () => ({
        content: [{ type: 'text', text: name }],
      }));
      return { content: [{ type: 'text', text: `defined ${name}` }] };
    },
  );
  server.registerResource(
    'readme',
    'demo://readme',
    { description: 'A fixed text.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Read me.' }] }),
  );
  server.registerResource(
    'greeting',
    new ResourceTemplate('demo://greeting/{name}', {
      list: undefined,
      complete: { name: (value) => ['alice', 'albert', 'bob'].filter((n) => n.startsWith(value)) },
    }),
    { description: 'A greeting for NAME.', mimeType: 'text/plain' },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, text: `Hello, ${name}!` }] }),
  );
  server.registerPrompt(
    'greet',
    {
      description: 'Greets someone.',
      argsSchema: { name: completable(z.string(), (value) => ['alice', 'albert', 'bob'].filter((n) => n.startsWith(value))) },
    },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name}.` } }] }),
  );
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

async function serveHttp(stateful) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      if (!req.url?.startsWith('/mcp')) {
        res.writeHead(404).end();
        return;
      }
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      if (!stateful) {
        // Stateless: a fresh server and transport for every request.
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const server = build();
        res.on('close', () => {
          transport.close();
          server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!transport && req.method === 'POST' && body?.method === 'initialize') {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await build(true).connect(transport);
      }
      if (!transport) {
        if (typeof sid === 'string') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        // No session and not an initialize: what the SDK's own examples answer.
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null }));
        return;
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address();
  console.error(`legacy-server: serving MCP at http://127.0.0.1:${port}/mcp`);
  const stop = () => http.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** The 2024-11-05 HTTP+SSE transport. */
async function serveSse() {
  const transports = new Map();
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        res.on('close', () => transports.delete(transport.sessionId));
        await build(true).connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('Unknown session');
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end(`<pre>Cannot ${req.method} ${url.pathname}</pre>`);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address();
  console.error(`legacy-server: serving MCP at http://127.0.0.1:${port}/sse`);
  const stop = () => {
    http.closeAllConnections();
    http.close(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const [mode, flavour] = process.argv.slice(2);
if (mode === 'stdio') {
  await build(true).connect(new StdioServerTransport());
} else if (mode === 'http' && (flavour === 'stateful' || flavour === 'stateless')) {
  await serveHttp(flavour === 'stateful');
} else if (mode === 'http' && flavour === 'sse') {
  await serveSse();
} else {
  console.error('usage: legacy-server.mjs stdio | http stateful|stateless|sse');
  process.exit(2);
}
