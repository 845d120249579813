"""A small modern-era (2026-07-28) MCP server on the PyPI `mcp` 2.x SDK, for rho's tests.

Usage: python3 modern_server.py stdio
       python3 modern_server.py http <port>
"""

import sys

from mcp.server.mcpserver import Context, MCPServer

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


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
