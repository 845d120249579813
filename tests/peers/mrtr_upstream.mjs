// A stdio MCP server on the TypeScript SDK's 2026-07-28 server package that asks for input the
// 2026-07-28 way (SEP-2322: it answers a call with an InputRequiredResult and reads the
// answers from the retry), with the tools and the prompt of the official conformance suite's
// `input-required-result-*` scenarios that a gateway can pass on
// (tests/e2e/mcp_serve_conformance.rs, behind `rho mcp serve --upstream-names`), and
// `ask_twice` for tests/e2e/mcp_serve.rs.
//
// Usage: node mrtr_upstream.mjs

import {
  McpServer,
  acceptedContent,
  fromJsonSchema,
  inputRequired,
  inputResponse,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';


const text = (value) => ({ content: [{ type: 'text', text: value }] });
const form = (message, properties, required = Object.keys(properties)) =>
  inputRequired.elicit({ message, requestedSchema: { type: 'object', properties, required } });
const responses = (ctx) => ctx.mcpReq.inputResponses;
// The two questions several tools ask.
const askName = () => form('What is your name?', { name: { type: 'string' } });
const askGreeting = () =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
    maxTokens: 50,
  });
const state = (ctx) =>
  typeof ctx.mcpReq.requestState === 'function' ? ctx.mcpReq.requestState() : ctx.mcpReq.requestState;

// `serveStdio` picks the era from the client's opening (`server/discover`: 2026-07-28).
serveStdio(() => {
  const server = new McpServer({ name: 'rho-test-mrtr-upstream', version: '1.0.0' });

  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'Asks for a name, then greets' },
    async (ctx) => {
      const answer = acceptedContent(responses(ctx), 'user_name');
      if (answer?.name === undefined) {
        return inputRequired({ inputRequests: { user_name: askName() } });
      }
      return text(`Hello, ${answer.name}!`);
    },
  );

  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'Asks the model a question' },
    async (ctx) => {
      const answer = inputResponse(responses(ctx), 'capital_question');
      if (answer?.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
              maxTokens: 100,
            }),
          },
        });
      }
      return text(`The model said: ${JSON.stringify(answer.result?.content ?? answer.value?.content ?? null)}`);
    },
  );

  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'Asks for a confirmation and checks its own state' },
    async (ctx) => {
      const answer = acceptedContent(responses(ctx), 'confirm');
      if (answer === undefined || state(ctx) !== 'round-1') {
        return inputRequired({
          inputRequests: { confirm: form('Please confirm', { ok: { type: 'boolean' } }) },
          requestState: 'round-1',
        });
      }
      return text(`state-ok: confirmed ${answer.ok}`);
    },
  );

  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'Asks twice, one question a round' },
    async (ctx) => {
      const step1 = acceptedContent(responses(ctx), 'step1');
      const step2 = acceptedContent(responses(ctx), 'step2');
      const round = String(state(ctx) ?? '');
      if (step2 !== undefined && round.startsWith('round-2:')) {
        return text(`${round.slice('round-2:'.length)} likes ${step2.color}`);
      }
      if (step1 !== undefined) {
        return inputRequired({
          inputRequests: { step2: form('Step 2: What is your favorite color?', { color: { type: 'string' } }) },
          requestState: `round-2:${step1.name}`,
        });
      }
      return inputRequired({
        inputRequests: { step1: form('Step 1: What is your name?', { name: { type: 'string' } }) },
        requestState: 'round-1',
      });
    },
  );

  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'Asks for a confirmation' },
    async (ctx) => {
      const answer = acceptedContent(responses(ctx), 'confirm');
      if (answer === undefined) {
        return inputRequired({
          inputRequests: { confirm: form('Please confirm', { ok: { type: 'boolean' } }) },
          requestState: 'signed-by-the-upstream',
        });
      }
      return text('confirmed');
    },
  );

  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'Asks for a form and for the model' },
    async (ctx) => {
      const named = acceptedContent(responses(ctx), 'user_name');
      const sampled = inputResponse(responses(ctx), 'greeting');
      if (named === undefined && sampled.kind === 'missing') {
        return inputRequired({ inputRequests: { user_name: askName(), greeting: askGreeting() } });
      }
      return text('answered');
    },
  );

  server.registerTool(
    'test_input_required_result_list_roots',
    { description: 'Asks for the client roots' },
    async (ctx) => {
      const roots = inputResponse(responses(ctx), 'client_roots');
      if (roots.kind !== 'roots') {
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      }
      return text(`roots: ${roots.roots.map((r) => r.uri).join(', ')}`);
    },
  );

  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'Asks for a form, the model and the roots in one round' },
    async (ctx) => {
      const named = acceptedContent(responses(ctx), 'user_name');
      const greeting = inputResponse(responses(ctx), 'greeting');
      const roots = inputResponse(responses(ctx), 'client_roots');
      if (named === undefined || greeting.kind !== 'sampling' || roots.kind !== 'roots') {
        return inputRequired({
          inputRequests: { user_name: askName(), greeting: askGreeting(), client_roots: inputRequired.listRoots() },
          requestState: 'all-three',
        });
      }
      return text(`${named.name}, with ${roots.roots.length} roots`);
    },
  );

  server.registerTool(
    'ask_twice',
    { description: 'Asks for a name and a color in one round, then says both' },
    async (ctx) => {
      const name = acceptedContent(responses(ctx), 'name');
      const color = acceptedContent(responses(ctx), 'color');
      if (name === undefined || color === undefined) {
        return inputRequired({
          inputRequests: {
            name: form('Your name?', { name: { type: 'string' } }),
            color: form('Your color?', { color: { type: 'string' } }),
          },
        });
      }
      return text(`${name.name} likes ${color.color}`);
    },
  );
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'Asks for the context, then prompts with it' },
    async (ctx) => {
      const answer = acceptedContent(responses(ctx), 'user_context');
      if (answer?.context === undefined) {
        return inputRequired({
          inputRequests: {
            user_context: form('What context should the prompt use?', { context: { type: 'string' } }),
          },
        });
      }
      return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${answer.context}` } }] };
    },
  );
  // A raw JSON Schema 2020-12 input schema (the conformance suite's json-schema-2020-12),
  // which the gateway must pass on keyword for keyword.
  const schema = 'https://json-schema.org/draft/2020-12/schema';
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: fromJsonSchema({
        $schema: schema,
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      }),
    },
    async () => text('ok'),
  );
  return server;
});
