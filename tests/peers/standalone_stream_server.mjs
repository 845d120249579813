// A legacy-era (2025-11-25) Streamable HTTP server on the TypeScript SDK that asks its form on
// the session's standalone stream (the client's GET), as the conformance suite's elicitation
// fixtures do: `server.request` without a related request, on a transport without an event
// store, so a question sent while no GET stream is open is dropped. The GET is held back until
// a tools/call arrives or HOLD_MS pass, which makes "the first call reached the server before
// the standalone stream was open" happen every time instead of under load only.
//
// Usage: node standalone_stream_server.mjs <port>
// Tool `ask`: asks for a form with one field (`name`, default "Ada") and returns the answer as
// text (`accept {"name":"Ada"}`).

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const HOLD_MS = 1000;
const port = Number(process.argv[2]);

const sessions = new Map();
let releaseGet;
const getReleased = new Promise((resolve) => {
  releaseGet = resolve;
});
let holdTimer;

function newServer() {
  const server = new Server({ name: 'rho-test-standalone-stream', version: '1.0.0' }, {
    capabilities: { tools: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'ask', description: 'Asks one form question', inputSchema: { type: 'object', properties: {} } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async () => {
    // No related request: the question goes to the standalone stream, or nowhere.
    const answer = server.request({
      method: 'elicitation/create',
      params: {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string', default: 'Ada' } } },
      },
    }, ElicitResultSchema);
    releaseGet();
    const result = await answer;
    return { content: [{ type: 'text', text: `${result.action} ${JSON.stringify(result.content ?? {})}` }] };
  });
  return server;
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

http.createServer(async (req, res) => {
  try {
    const id = req.headers['mcp-session-id'];
    if (req.method === 'POST') {
      const message = await body(req);
      if (!id && message?.method === 'initialize') {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        await newServer().connect(transport);
        await transport.handleRequest(req, res, message);
        // The GET held back from here on (HOLD_MS at most).
        holdTimer ??= setTimeout(releaseGet, HOLD_MS);
        return;
      }
      const transport = sessions.get(id);
      if (!transport) {
        res.writeHead(400).end('unknown session');
        return;
      }
      await transport.handleRequest(req, res, message);
      return;
    }
    const transport = sessions.get(id);
    if (!transport) {
      res.writeHead(400).end('unknown session');
      return;
    }
    if (req.method === 'GET') await getReleased;
    await transport.handleRequest(req, res);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
}).listen(port, '127.0.0.1');
