// Drives `rho rpc` through the TypeScript client that @open-rpc/generator generates from
// schemas/rho-rpc.openrpc.json (tests/e2e/openrpc_client.rs generates it, compiles it with this
// file and runs it). Every method of the document is called through the generated client's own
// method for it (its argument order, its params validation, its param structure), against
// the scripted model and server the test sets up; the run fails if a method of the document
// was not called. `rpc.discover` goes through the client's JSON-RPC client, since it is not
// one of the document's methods.
//
// usage: node driver.js <document.json> <report.json> <rho> <rho args...>
import { readFileSync, writeFileSync } from "node:fs";
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Client, RequestManager } from "@open-rpc/client-js";
import RhoClient from "./index.js";
import { StdioTransport } from "./stdio_transport.js";

const [documentPath, reportPath, rho, ...rhoArgs] = process.argv.slice(2);
if (documentPath === undefined || reportPath === undefined || rho === undefined) {
  throw new Error("usage: node driver.js <document.json> <report.json> <rho> <rho args...>");
}

// The generated constructor only builds its own transports (creating one opens nothing); the
// JSON-RPC client it made is replaced by one on rho's stdio.
const client = new RhoClient({ transport: { type: "http", host: "127.0.0.1", port: 9 } });
const transport = new StdioTransport(rho, rhoArgs);
client.rpc = new Client(new RequestManager([transport]));
// No per-request timeout: client-js keeps a request's timer after its answer, which would hold
// node open that long; the test bounds the whole run instead.

interface Note {
  method: string;
  params?: Record<string, unknown>;
}
const notes: Note[] = [];
const taken = new Set<number>();
let wakers: Array<() => void> = [];
client.onNotification((note: Note) => {
  notes.push(note);
  const woken = wakers;
  wakers = [];
  woken.forEach((wake) => wake());
});

/** The first notification `method` received since `from` (a length of `notes`) and not taken
 * yet, waiting for it. */
async function take(method: string, from: number): Promise<Note> {
  for (;;) {
    const index = notes.findIndex((n, i) => i >= from && n.method === method && !taken.has(i));
    if (index >= 0) {
      taken.add(index);
      return notes[index];
    }
    await new Promise<void>((wake) => wakers.push(wake));
  }
}

const called = new Set<string>();
/** Records that `method` was called through the generated client and returns its result. */
async function record<T>(method: string, result: Promise<T>): Promise<T> {
  console.error(`waiting for ${method}`); // where a run that hangs stopped
  called.add(method);
  return await result;
}

// ---- discovery: the document rho serves is the file the client was generated from
const onDisk = JSON.parse(readFileSync(documentPath, "utf8"));
const discovered = await client.rpc.request({ method: "rpc.discover", params: [] });
deepStrictEqual(discovered, onDisk);
deepStrictEqual(discovered, RhoClient.openrpcDocument);

// ---- state, models, providers, tools
const state = await record("getState", client.getState());
strictEqual(state.model, "fake-model-1");
strictEqual(state.permissionMode, "ask-destructive");
const models = await record("listModels", client.listModels());
ok(models.models.some((m) => m.id === "fake-model-2"), JSON.stringify(models));
const model = await record("setModel", client.setModel("fake-model-2"));
strictEqual(model.model, "fake-model-2");
const providers = await record("listProviders", client.listProviders());
ok(providers.providers.some((p) => p.active && p.reachable), JSON.stringify(providers));
const tools = await record("listTools", client.listTools());
ok(tools.tools.some((t) => t.name === "run_command"), JSON.stringify(tools));

// ---- a turn
const hello = await record("prompt", client.prompt("say hello"));
deepStrictEqual(hello, { reply: "hello", finishReason: "stop" });

// ---- a turn whose MCP tool call needs approval and puts a form to the user
let from = notes.length;
const asking = client.prompt("ask me");
const approval = await take("approval/request", from);
const asked = tools.tools.find((t) => t.name === approval.params?.tool);
strictEqual(asked?.server, "everything", JSON.stringify(approval));
deepStrictEqual(await record("approvalResponse", client.approvalResponse(true)), {});
const question = await take("question/request", from);
strictEqual(question.params?.kind, "elicitation");
const answered = client.questionResponse(Number(question.params?.questionId), "accept", {
  name: "Ada",
  check: "yes",
});
deepStrictEqual(await record("questionResponse", answered), {});
deepStrictEqual(await asking, { reply: "thanks, Ada", finishReason: "stop" });

// ---- abort while a command waits for approval
from = notes.length;
const stopped = client.prompt("clean up");
strictEqual((await take("approval/request", from)).params?.tool, "run_command");
deepStrictEqual(await record("abort", client.abort()), {});
strictEqual(((await stopped) as { finishReason: string }).finishReason, "aborted");

// ---- server prompts, argument suggestions, resources attached to a prompt
const prompts = await record("listPrompts", client.listPrompts());
const command = "/mcp:everything:completable-prompt";
ok(prompts.some((p) => p.command === command), JSON.stringify(prompts));
const department = await record("complete", client.complete(command, "department", "E"));
deepStrictEqual(department, { values: ["Engineering"] });
const lead = await client.complete(command, "name", "", { department: "Engineering" });
deepStrictEqual(lead, { values: ["Alice", "Bob", "Charlie"] });
const resources = await record("listResources", client.listResources());
ok(resources.some((r) => r.server === "everything"), JSON.stringify(resources));
const attached = await client.prompt("summarize", [
  { server: "everything", uri: "demo://resource/dynamic/text/1" },
]);
deepStrictEqual(attached, { reply: "read it", finishReason: "stop" });

// ---- steering while idle (joins the next prompt), compaction, the conversation
deepStrictEqual(await client.prompt("keep it short", undefined, true), {});
const compacted = await record("compact", client.compact());
strictEqual(compacted.summary, "[Summary of the earlier conversation]\nwe talked");
const messages = await record("getMessages", client.getMessages());
strictEqual(messages.messages.length, 1);
strictEqual(messages.messages[0].content, compacted.summary);
const stats = await record("getSessionStats", client.getSessionStats());
ok(stats.sessionId, JSON.stringify(stats));

// ---- extensions and health
const extensions = await record("listExtensions", client.listExtensions());
ok(
  extensions.servers.some((s) => s.id === "everything" && (s.status === "started" || s.status === "used")),
  JSON.stringify(extensions.servers),
);
const doctor = await record("doctor", client.doctor());
ok(doctor.checks.length > 0, JSON.stringify(doctor));
const reloaded = await record("reloadExtensions", client.reloadExtensions());
ok(reloaded.servers.some((s) => s.id === "everything"), JSON.stringify(reloaded.servers));

// ---- sessions: a fresh one, then the first one resumed, then cleared
const sessions = await record("listSessions", client.listSessions());
const first = sessions.sessions.find((s) => s.id === stats.sessionId);
ok(first, JSON.stringify(sessions));
const fresh = await record("newSession", client.newSession());
ok(fresh.sessionId !== stats.sessionId, JSON.stringify(fresh));
const resumed = await record("resumeSession", client.resumeSession(first.path));
strictEqual(resumed.sessionId, stats.sessionId);
deepStrictEqual(await record("clear", client.clear()), {});

// ---- every method of the document was called through its generated method
const methods = RhoClient.openrpcDocument.methods.map((m) => (m as { name: string }).name);
const missed = methods.filter((name) => !called.has(name));
if (missed.length > 0) {
  throw new Error(`not called through the generated client: ${missed.join(", ")}`);
}

transport.close();
const code = await transport.exited;
writeFileSync(
  reportPath,
  JSON.stringify({ called: [...called], exit: code, transcript: transport.transcript }),
);
strictEqual(code, 0);
