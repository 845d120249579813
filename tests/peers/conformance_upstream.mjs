// A stdio MCP server on the TypeScript SDK that holds what the official conformance suite's
// server scenarios read by URI, for `rho mcp serve` to pass through
// (tests/e2e/mcp_serve_conformance.rs): the text resource `test://static-text`, the PNG
// resource `test://static-binary`, the resource template `test://template/{id}/data`, a
// prompt with an argument, one tool, and the tools and prompts of the suite's reference server
// the scenarios call by name (`test_simple_text`, ..., `test_prompt_with_image`), which
// `rho mcp serve --upstream-names` serves under those names.
//
// Usage: node conformance_upstream.mjs
// Tool `grow`: adds the prompt `grown` and the resource `test://grown` (the SDK then sends
// `notifications/prompts/list_changed` and `notifications/resources/list_changed`).
// Resources can be subscribed to (`resources/subscribe`); tool `touch` sends
// `notifications/resources/updated` for its `uri` when it is subscribed (and says whether).

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

// A 1x1 red PNG (also the image of `test_prompt_with_image`).
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const server = new McpServer(
  { name: 'rho-test-conformance-upstream', version: '1.0.0' },
  { capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } } },
);

const subscribed = new Set();
server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
  subscribed.add(request.params.uri);
  return {};
});
server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
  subscribed.delete(request.params.uri);
  return {};
});

server.registerTool(
  'touch',
  { description: 'Says a resource changed, if it is subscribed', inputSchema: { uri: z.string() } },
  async ({ uri }) => {
    if (!subscribed.has(uri)) return { content: [{ type: 'text', text: `not subscribed: ${uri}` }] };
    await server.server.sendResourceUpdated({ uri });
    return { content: [{ type: 'text', text: `touched ${uri}` }] };
  },
);

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
  // Its `id` is completed from a short list (`completion/complete` with a resource reference).
  new ResourceTemplate('test://template/{id}/data', {
    list: undefined,
    complete: { id: (value) => ['1', '2', '42', '420'].filter((id) => id.startsWith(value)) },
  }),
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

// A WAV header with no samples.
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=';
const EMBEDDED = {
  type: 'resource',
  resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
};

const fixed = (name, description, result) =>
  server.registerTool(name, { description, inputSchema: {} }, async () => result);

fixed('test_simple_text', 'Returns simple text', {
  content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
});
fixed('test_image_content', 'Returns an image', { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] });
fixed('test_audio_content', 'Returns audio', { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] });
fixed('test_embedded_resource', 'Returns an embedded resource', { content: [EMBEDDED] });
fixed('test_multiple_content_types', 'Returns text, an image and a resource', {
  content: [
    { type: 'text', text: 'Multiple content types test:' },
    { type: 'image', data: PNG, mimeType: 'image/png' },
    EMBEDDED,
  ],
  _meta: { 'example.com/passed-through': true },
});
fixed('test_error_handling', 'Always fails', {
  isError: true,
  content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
});

server.registerTool(
  'test_tool_with_progress',
  { description: 'Reports progress', inputSchema: {} },
  async (_args, extra) => {
    const token = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress, total: 100 },
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { content: [{ type: 'text', text: 'Progress test completed' }] };
  },
);

server.registerTool(
  'test_tool_with_logging',
  { description: 'Logs three messages while it runs', inputSchema: {} },
  async () => {
    for (const [i, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      await server.server.sendLoggingMessage({ level: 'info', data });
    }
    return { content: [{ type: 'text', text: 'Logging test completed' }] };
  },
);

server.registerTool(
  'test_sampling',
  { description: 'Asks the client to sample', inputSchema: { prompt: z.string() } },
  async ({ prompt }) => {
    const answer = await server.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      maxTokens: 100,
    });
    return { content: [{ type: 'text', text: `LLM response: ${answer.content.text}` }] };
  },
);

server.registerTool(
  'test_elicitation',
  { description: 'Asks the user', inputSchema: { message: z.string() } },
  async ({ message }) => {
    const answer = await server.server.elicitInput({
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    });
    return { content: [{ type: 'text', text: `User response: ${JSON.stringify(answer)}` }] };
  },
);

const elicitingTool = (name, description, requestedSchema) =>
  server.registerTool(name, { description, inputSchema: {} }, async () => {
    const answer = await server.server.elicitInput({ message: description, requestedSchema });
    return {
      content: [
        {
          type: 'text',
          text: `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
        },
      ],
    };
  });

elicitingTool('test_elicitation_sep1034_defaults', 'Asks with a default for every primitive type', {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
});

elicitingTool('test_elicitation_sep1330_enums', 'Asks with every kind of enum', {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
});

server.registerPrompt('test_simple_prompt', { description: 'A simple prompt' }, () => ({
  messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
}));

server.registerPrompt(
  'test_prompt_with_arguments',
  {
    description: 'A prompt with two arguments',
    argsSchema: {
      // Completed from a short list (`completion/complete`, passed through by the gateway).
      arg1: completable(z.string(), (value) =>
        ['paris', 'park', 'party', 'test', 'testValue1'].filter((v) => v.startsWith(value)),
      ),
      arg2: z.string(),
    },
  },
  ({ arg1, arg2 }) => ({
    messages: [
      { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
    ],
  }),
);

server.registerPrompt(
  'test_prompt_with_embedded_resource',
  { description: 'A prompt with an embedded resource', argsSchema: { resourceUri: z.string() } },
  ({ resourceUri }) => ({
    messages: [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ],
  }),
);

server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
  messages: [
    { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
    { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
  ],
}));

await server.connect(new StdioServerTransport());
