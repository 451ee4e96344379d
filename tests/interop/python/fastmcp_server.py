"""A legacy MCP server on fastmcp 2 (PyPI, pinned by scripts/interop):
the peer toolwire's client must fall back to `initialize` for. Tools (text,
structured, progress, a real `elicitation/create`), a resource and a prompt.

    python fastmcp_server.py stdio
    python fastmcp_server.py http PORT      (listens on 127.0.0.1 only)
"""

import asyncio
import sys
from dataclasses import dataclass

from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp-legacy-interop", instructions="A fastmcp 2 server.")


@mcp.tool
def echo(text: str) -> str:
    """Echoes text."""
    return text


@mcp.tool
def add(a: float, b: float) -> dict:
    """Adds two numbers."""
    return {"sum": a + b}


@mcp.tool
async def countdown(steps: int, ctx: Context) -> str:
    """Counts down, reporting progress."""
    for step in range(1, steps + 1):
        await asyncio.sleep(0.01)
        await ctx.report_progress(step, steps)
    return f"done after {steps} steps"


@dataclass
class Confirmation:
    confirm: bool


@mcp.tool
async def confirm(action: str, ctx: Context) -> str:
    """Asks the user to confirm, through elicitation/create."""
    answer = await ctx.elicit(f"Confirm {action}?", response_type=Confirmation)
    if answer.action == "accept" and answer.data.confirm:
        return f"confirmed: {action}"
    raise ValueError(f"not confirmed: {action}")


@mcp.resource("demo://readme")
def readme() -> str:
    """A fixed text."""
    return "Read me."


@mcp.prompt
def greet(name: str) -> str:
    """Greets someone."""
    return f"Please greet {name}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"] and len(sys.argv) == 3:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    elif sys.argv[1:] == ["stdio"]:
        mcp.run(transport="stdio", show_banner=False)
    else:
        sys.exit("usage: fastmcp_server.py stdio | http PORT")
