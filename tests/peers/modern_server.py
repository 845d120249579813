"""A small modern-era (2026-07-28) MCP server on the PyPI `mcp` 2.x SDK, for rho's tests.

Usage: python3 modern_server.py stdio
       python3 modern_server.py http <port>
"""

import sys
from typing import Annotated

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("rho-test-modern", instructions="Test server for rho: tools add, shout and weather.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(title="Shout")
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@server.tool()
def weather(city: str) -> dict:
    """Structured weather for a city."""
    return {"city": city, "temperature": 21.5}


@server.tool()
async def chatter(ctx: Context) -> str:
    """Send one log message (delivered only when the request asks for a log level)."""
    await ctx.info("modern log line")
    return "done"


class Profile(BaseModel):
    name: str
    age: int
    subscribe: bool = False


def ask_profile() -> Elicit[Profile]:
    return Elicit("Tell rho's tests about yourself", Profile)


@server.tool()
def profile(answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)]) -> str:
    """Ask the user for a profile (a form) and echo what came back, with its JSON types."""
    if isinstance(answer, AcceptedElicitation):
        data = answer.data
        return f"accepted name={data.name!r} age={data.age!r} subscribe={data.subscribe!r}"
    return f"not accepted: {answer.action}"


def ask_model(topic: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Write about {topic}"))
    return Sample([message], max_tokens=64, system_prompt="Be brief.")


@server.tool()
def summarize(topic: str, reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model for a completion (sampling) and echo it."""
    text = reply.content.text if isinstance(reply.content, TextContent) else "?"
    return f"model={reply.model} text={text}"


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """List the client's roots."""
    return "\n".join(f"{root.uri} {root.name}" for root in listed.roots) or "no roots"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Please greet {name} warmly."


@server.resource("memo://modern/note", mime_type="text/plain")
def note() -> str:
    """A short note."""
    return "a note from the modern server"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
