"""A modern (2026-07-28) MCP server on the Python SDK mcp 2.x (PyPI,
pinned by scripts/interop): toolwire's client in mode auto must stay modern
with it.

    python mcp_modern_server.py stdio
    python mcp_modern_server.py http PORT      (listens on 127.0.0.1 only)
"""

import sys

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("python-modern-interop", instructions="A Python SDK 2 server.")


@mcp.tool()
def echo(text: str) -> str:
    """Echoes text."""
    return text


@mcp.tool()
def add(a: float, b: float) -> dict:
    """Adds two numbers."""
    return {"sum": a + b}


@mcp.resource("demo://readme")
def readme() -> str:
    """A fixed text."""
    return "Read me."


@mcp.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Please greet {name}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"] and len(sys.argv) == 3:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:] == ["stdio"]:
        mcp.run("stdio")
    else:
        sys.exit("usage: mcp_modern_server.py stdio | http PORT")
