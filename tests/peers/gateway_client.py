"""An MCP client on the Python `mcp` SDK 2.x for the tests of `rho mcp serve`.

    python3 gateway_client.py [--mode auto|legacy] [--call NAME JSON]... -- COMMAND ARGS...
    python3 gateway_client.py [--mode auto|legacy] [--call NAME JSON]... --url URL

Starts COMMAND as a stdio MCP server (with this process's environment and working directory),
or speaks Streamable HTTP to URL,
connects in `--mode` (`auto`: the 2026-07-28 `server/discover`, falling back to `initialize`;
`legacy`: `initialize`), lists the tools, makes each call in order (with a progress token),
and prints one JSON document: the protocol version, the tools (name, title, annotations,
input schema) and each call's result (isError, the text blocks, structuredContent and the
progress notifications received), or the JSON-RPC error it got instead (code, message); with
`--relist`, the tool names listed again after the calls (`toolsAfter`); with `--prompt NAME
JSON` or `--read URI`, the prompt names and resource URIs listed (`prompts`, `resources`) and
each prompt's messages (`prompted`), each read's text contents (`reads`) and whole bodies
(`bodies`: uri, mimeType, text, blob), or the error, and the resource templates (`templates`);
`listChanged` counts the `notifications/tools/list_changed` received (`--wait-list-changed N`
waits up to N seconds after the calls for the first) and `notifications` names every
`*/list_changed` received (with `--wait-for METHOD`, repeatable, the wait is for each
METHOD). With `--listen` (2026-07-28 only) the changes come from a `subscriptions/listen` stream
opened before the calls, for all three lists, and count the same way. `--subscribe URI`
(repeatable) subscribes to a resource before the calls (`resources/subscribe`, or on the
`--listen` stream); `updated` lists the URIs of `notifications/resources/updated` received, and
`--wait-for notifications/resources/updated` waits for one. `--complete-template URI ARGUMENT
VALUE` asks for completions of a resource template's argument (`completed`: the values, or the
error). With `--answer-forms JSON` the client
declares elicitation and accepts every form with that content; with `--answer-sampling TEXT` it
declares sampling and answers with that text; `forms` and `samplings` record what it was asked.
"""

import argparse
import asyncio
import contextlib
import json
import os
import sys

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument("--url")
    parser.add_argument("--relist", action="store_true")
    parser.add_argument("--wait-list-changed", type=float, default=0, metavar="SECONDS")
    parser.add_argument("--wait-for", action="append", default=[], metavar="METHOD")
    parser.add_argument("--answer-forms", metavar="JSON")
    parser.add_argument("--answer-sampling", metavar="TEXT")
    parser.add_argument("--prompt", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    parser.add_argument("--read", action="append", default=[], metavar="URI")
    parser.add_argument("--listen", action="store_true")
    parser.add_argument("--subscribe", action="append", default=[], metavar="URI")
    parser.add_argument("--complete-template", nargs=3, action="append", default=[], metavar=("URI", "ARGUMENT", "VALUE"))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    server = args.url or StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=os.getcwd()
    )
    report = {"calls": [], "listChanged": 0, "notifications": []}
    list_changed = asyncio.Event()
    notified = asyncio.Event()

    report["updated"] = []

    def changed(method, uri=None):
        if method == "notifications/tools/list_changed":
            report["listChanged"] += 1
            list_changed.set()
        if method == "notifications/resources/updated":
            report["updated"].append(uri)
        if isinstance(method, str) and (method.endswith("/list_changed") or method.endswith("/updated")):
            report["notifications"].append(method)
            notified.set()

    async def on_message(message):
        method = getattr(message, "method", None)
        params = getattr(message, "params", None)
        # With --listen the stream's events count (the SDK hands them to this handler too).
        if args.listen and method == "notifications/resources/updated":
            return
        changed(method, str(getattr(params, "uri", "")) or None)

    report["forms"] = []
    report["samplings"] = []
    callbacks = {}
    if args.answer_forms is not None:

        async def on_form(context, params):
            report["forms"].append({"message": params.message, "schema": params.requested_schema})
            return types.ElicitResult(action="accept", content=json.loads(args.answer_forms))

        callbacks["elicitation_callback"] = on_form
    if args.answer_sampling is not None:

        async def on_sampling(context, params):
            report["samplings"].append([m.content.text for m in params.messages])
            return types.CreateMessageResult(
                role="assistant",
                content=types.TextContent(type="text", text=args.answer_sampling),
                model="client-model",
                stop_reason="endTurn",
            )

        callbacks["sampling_callback"] = on_sampling
    async with Client(
        server,
        mode=args.mode,
        read_timeout_seconds=30,
        message_handler=on_message,
        **callbacks,
    ) as client, contextlib.AsyncExitStack() as stack:
        report["protocolVersion"] = client.protocol_version
        if args.listen:
            subscription = await stack.enter_async_context(
                client.listen(
                    tools_list_changed=True,
                    prompts_list_changed=True,
                    resources_list_changed=True,
                    resource_subscriptions=args.subscribe,
                )
            )
            honored = subscription.honored
            report["honored"] = honored.model_dump(by_alias=True, exclude_none=True) if hasattr(honored, "model_dump") else vars(honored)
            methods = {
                "ToolsListChanged": "notifications/tools/list_changed",
                "PromptsListChanged": "notifications/prompts/list_changed",
                "ResourcesListChanged": "notifications/resources/list_changed",
            }

            async def events():
                async for event in subscription:
                    if type(event).__name__ == "ResourceUpdated":
                        changed("notifications/resources/updated", event.uri)
                    else:
                        changed(methods.get(type(event).__name__))

            listening = asyncio.create_task(events())
            stack.callback(listening.cancel)
        else:
            for uri in args.subscribe:
                await client.subscribe_resource(uri)
        listed = await client.list_tools()
        report["tools"] = [
            {
                "name": tool.name,
                "title": tool.title,
                "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True)
                if tool.annotations
                else None,
                "inputSchema": tool.input_schema,
            }
            for tool in listed.tools
        ]
        for name, arguments in args.call:
            progress = []

            async def on_progress(value, total, message, progress=progress):
                progress.append({"progress": value, "total": total, "message": message})

            try:
                result = await client.call_tool(
                    name, json.loads(arguments), progress_callback=on_progress
                )
            except MCPError as error:
                report["calls"].append({"name": name, "error": {"code": error.code, "message": error.message}})
                continue
            report["calls"].append(
                {
                    "name": name,
                    "isError": bool(result.is_error),
                    "text": [block.text for block in result.content if block.type == "text"],
                    "structuredContent": result.structured_content,
                    "progress": progress,
                }
            )
        if args.wait_list_changed and args.wait_for:

            async def all_arrived():
                while not all(m in report["notifications"] for m in args.wait_for):
                    notified.clear()
                    await notified.wait()

            try:
                await asyncio.wait_for(all_arrived(), args.wait_list_changed)
            except asyncio.TimeoutError:
                pass
        elif args.wait_list_changed:
            try:
                await asyncio.wait_for(list_changed.wait(), args.wait_list_changed)
            except asyncio.TimeoutError:
                pass
        if args.prompt or args.read:
            report["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
            report["resources"] = [r.uri for r in (await client.list_resources()).resources]
            report["prompted"] = []
            for name, arguments in args.prompt:
                try:
                    got = await client.get_prompt(name, json.loads(arguments))
                    report["prompted"].append(
                        [{"role": m.role, "text": m.content.text} for m in got.messages]
                    )
                except MCPError as error:
                    report["prompted"].append({"error": {"code": error.code, "message": error.message}})
            report["reads"] = []
            report["bodies"] = []
            report["templates"] = [
                t.uri_template for t in (await client.list_resource_templates()).resource_templates
            ]
            for uri in args.read:
                try:
                    got = await client.read_resource(uri)
                    report["reads"].append([getattr(c, "text", None) for c in got.contents])
                    report["bodies"].append(
                        [
                            {
                                "uri": str(c.uri),
                                "mimeType": c.mime_type,
                                "text": getattr(c, "text", None),
                                "blob": getattr(c, "blob", None),
                            }
                            for c in got.contents
                        ]
                    )
                except MCPError as error:
                    report["reads"].append({"error": {"code": error.code, "message": error.message}})
                    report["bodies"].append({"error": {"code": error.code, "message": error.message}})
        if args.complete_template:
            report["completed"] = []
            for uri, argument, value in args.complete_template:
                try:
                    got = await client.complete(
                        types.ResourceTemplateReference(type="ref/resource", uri=uri),
                        {"name": argument, "value": value},
                    )
                    report["completed"].append(got.completion.values)
                except MCPError as error:
                    report["completed"].append({"error": {"code": error.code, "message": error.message}})
        if args.relist:
            relisted = await client.list_tools(cache_mode="bypass")
            report["toolsAfter"] = [tool.name for tool in relisted.tools]
    json.dump(report, sys.stdout, indent=1, default=str)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
