"""A modern (2026-07-28) MCP server on the Python SDK mcp 2.x (PyPI,
pinned by scripts/interop): toolwire's client in mode auto must stay modern
with it. Tools (text, structured, progress, a confirmation through a
multi-round-trip input_required result, one that defines another tool and
announces the list change on the subscription bus), a resource and a
prompt. With `--late` (over stdio, where no second client can call
`define` while one listens), the server adds a tool named `late` shortly
after each `subscriptions/listen` opens, and announces that change.

    python mcp_modern_server.py stdio [--late]
    python mcp_modern_server.py http PORT      (listens on 127.0.0.1 only; with
                                               PORT 0 the OS picks the port, which
                                               uvicorn names on stderr)
"""

import asyncio
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ToolsListChanged
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
)
from pydantic import BaseModel

# How long after a subscription opens the `late` tool appears (--late).
LATE_S = 0.2


class LateBus(InMemorySubscriptionBus):
    """A bus that, when `late` is set, adds the `late` tool a little after
    each new subscriber joins, and publishes the change."""

    late = False

    def subscribe(self, listener):
        unsubscribe = super().subscribe(listener)
        if self.late:
            asyncio.get_running_loop().call_later(LATE_S, lambda: asyncio.ensure_future(add_late()))
        return unsubscribe


async def add_late():
    def late() -> str:
        return "late"

    mcp.add_tool(late, name="late", description="Added after the subscription opened.")
    await bus.publish(ToolsListChanged())


bus = LateBus()
mcp = MCPServer("python-modern-interop", instructions="A Python SDK 2 server.", subscriptions=bus)


@mcp.tool()
def echo(text: str) -> str:
    """Echoes text."""
    return text


class Sum(BaseModel):
    sum: float


@mcp.tool()
def add(a: float, b: float) -> Sum:
    """Adds two numbers."""
    return Sum(sum=a + b)


@mcp.tool()
async def countdown(steps: int, ctx: Context) -> str:
    """Counts down, reporting progress."""
    for step in range(1, steps + 1):
        await asyncio.sleep(0.01)
        await ctx.report_progress(step, steps)
    return f"done after {steps} steps"


@mcp.tool()
async def confirm(action: str, ctx: Context) -> CallToolResult | InputRequiredResult:
    """Asks the user to confirm, through an input_required round."""
    answer = (ctx.input_responses or {}).get("confirm")
    if answer is None:
        form = ElicitRequestFormParams(
            message=f"Confirm {action}?",
            requested_schema={
                "type": "object",
                "properties": {"confirm": {"type": "boolean"}},
                "required": ["confirm"],
            },
        )
        return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=form)})
    if isinstance(answer, ElicitResult) and answer.action == "accept" and (answer.content or {}).get("confirm") is True:
        return CallToolResult(content=[TextContent(type="text", text=f"confirmed: {action}")])
    return CallToolResult(content=[TextContent(type="text", text=f"not confirmed: {action}")], is_error=True)


@mcp.tool()
async def define(name: str) -> str:
    """Defines a tool named NAME (the tool list changes)."""

    def defined() -> str:
        return name

    mcp.add_tool(defined, name=name, description="Defined at run time.")
    await bus.publish(ToolsListChanged())
    return f"defined {name}"


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
    elif sys.argv[1:2] == ["stdio"] and sys.argv[2:] in ([], ["--late"]):
        bus.late = sys.argv[2:] == ["--late"]
        mcp.run("stdio")
    else:
        sys.exit("usage: mcp_modern_server.py stdio [--late] | http PORT")
