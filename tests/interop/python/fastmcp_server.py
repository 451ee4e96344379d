"""A legacy MCP server on fastmcp 2 (PyPI, pinned by scripts/interop):
the peer toolwire's client must fall back to `initialize` for. Tools (text,
structured, progress, a real `elicitation/create`), a resource and a prompt.
Half a second after a session is initialised, the server adds a tool named
`late` and tells that session `notifications/tools/list_changed`, so that a
listening client sees the list change (fastmcp itself announces a change
only inside a request, to that request's session).

    python fastmcp_server.py stdio
    python fastmcp_server.py http PORT      (listens on 127.0.0.1 only; with
                                            PORT 0 the OS picks the port, which
                                            uvicorn names on stderr)
"""

import asyncio
import sys
from dataclasses import dataclass

import mcp.types as mt
from fastmcp import Context, FastMCP
from fastmcp.tools import Tool

mcp = FastMCP("fastmcp-legacy-interop", instructions="A fastmcp 2 server.")

# How long after `notifications/initialized` the `late` tool appears.
LATE_S = 0.5


def late() -> str:
    """Added after the session started."""
    return "late"


def add_late_after_initialized():
    """Wraps the low-level server's message handler: once a session is
    initialised, add `late` LATE_S later and tell that session. The addition
    runs on its own, so that a session that ends sooner is not held up."""
    low = mcp._mcp_server
    handle = low._handle_message
    pending = set()

    async def announce(session):
        mcp.add_tool(Tool.from_function(late, name="late"))
        try:
            await asyncio.wait_for(session.send_tool_list_changed(), 1)
        except Exception:  # noqa: BLE001 - the session may be gone by now
            pass

    def start(session):
        task = asyncio.ensure_future(announce(session))
        pending.add(task)
        task.add_done_callback(pending.discard)

    async def handle_message(message, session, *args, **kwargs):
        await handle(message, session, *args, **kwargs)
        if isinstance(message, mt.ClientNotification) and isinstance(message.root, mt.InitializedNotification):
            asyncio.get_running_loop().call_later(LATE_S, start, session)

    low._handle_message = handle_message


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
    add_late_after_initialized()
    if sys.argv[1:2] == ["http"] and len(sys.argv) == 3:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    elif sys.argv[1:] == ["stdio"]:
        mcp.run(transport="stdio", show_banner=False)
    else:
        sys.exit("usage: fastmcp_server.py stdio | http PORT")
