// A stdio MCP server on the TypeScript SDK that holds what the official conformance suite's
// server scenarios read by URI, for `rho mcp serve` to pass through
// (tests/e2e/mcp_serve_conformance.rs): the text resource `test://static-text`, the PNG
// resource `test://static-binary`, the resource template `test://template/{id}/data`, a
// prompt with an argument, and one tool.
//
// Usage: node conformance_upstream.mjs
// Tool `grow`: adds the prompt `grown` and the resource `test://grown` (the SDK then sends
// `notifications/prompts/list_changed` and `notifications/resources/list_changed`).

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

// A 1x1 red PNG.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const server = new McpServer({ name: 'rho-test-conformance-upstream', version: '1.0.0' });

server.registerResource(
  'static-text',
  'test://static-text',
  { title: 'Static text', description: 'A text resource', mimeType: 'text/plain' },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }),
);

server.registerResource(
  'static-binary',
  'test://static-binary',
  { title: 'Static binary', description: 'A PNG resource', mimeType: 'image/png' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }] }),
);

server.registerResource(
  'template',
  new ResourceTemplate('test://template/{id}/data', { list: undefined }),
  { title: 'Data by id', description: 'A resource template', mimeType: 'application/json' },
  async (uri, { id }) => ({
    contents: [
      {
        uri: uri.href,
        mimeType: 'application/json',
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      },
    ],
  }),
);

server.registerPrompt(
  'with_arguments',
  { description: 'A prompt with an argument', argsSchema: { arg1: z.string() } },
  ({ arg1 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with ${arg1}` } }] }),
);

server.registerTool(
  'grow',
  { description: 'Adds a prompt and a resource', inputSchema: {} },
  async () => {
    server.registerPrompt('grown', { description: 'Added by grow' }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'grown' } }],
    }));
    server.registerResource('grown', 'test://grown', { mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'grown' }],
    }));
    return { content: [{ type: 'text', text: 'grew' }] };
  },
);

await server.connect(new StdioServerTransport());
