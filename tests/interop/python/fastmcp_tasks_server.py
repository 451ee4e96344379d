"""A task-serving MCP server on fastmcp 4 with fastmcp-tasks (PyPI, pinned
by scripts/interop in requirements-tasks.txt): the peer the `toolwire`
command drives through the Tasks extension (io.modelcontextprotocol/tasks).
Tasks live in docket's in-process `memory://` backend, so no Redis is
needed; its worker runs in this process.

Tools:
  crunch    (task optional) counts `steps` steps of STEP_S each, reporting
            progress with a message ("step K of N", the task's
            statusMessage), and returns "crunched N steps"
  approve   (task optional) asks the client to approve `item` (an in-task
            form elicitation, key `approve`) and returns "approved: ITEM" or
            an error result "not approved: ITEM"
  batch     (task required) returns "batch of N done": a client that does
            not declare the extension gets -32021
  echo      (no tasks) echoes `text`
  routing   (no tasks) over HTTP, the Mcp-Method and Mcp-Name headers of
            every tasks/* request so far, as a JSON list of [method, name]
            pairs (recorded by an ASGI middleware), to check what the client
            sends

    python fastmcp_tasks_server.py stdio
    python fastmcp_tasks_server.py http PORT   (listens on 127.0.0.1 only; with
                                               PORT 0 the OS picks the port, which
                                               uvicorn names on stderr)
"""

import asyncio
import json
import sys
from datetime import timedelta

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

# How long one step of `crunch` takes.
STEP_S = 0.1
# The pollIntervalMs the tasks advertise (fastmcp's default is 5 s).
POLL = timedelta(milliseconds=100)

mcp = FastMCP("fastmcp-tasks-interop", instructions="A fastmcp 4 server with fastmcp-tasks.")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def crunch(steps: int, ctx: Context) -> str:
    """Counts `steps` steps, reporting progress, as a task when the client supports them."""
    for step in range(1, steps + 1):
        await asyncio.sleep(STEP_S)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"crunched {steps} steps"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def approve(item: str, ctx: Context) -> str:
    """Asks the client to approve `item` (in-task input, key `approve`)."""
    answer = (ctx.input_responses or {}).get("approve")
    if answer is None:
        form = ElicitRequestFormParams(
            message=f"Approve {item}?",
            requested_schema={
                "type": "object",
                "properties": {"approve": {"type": "boolean"}},
                "required": ["approve"],
            },
        )
        return InputRequiredResult(input_requests={"approve": ElicitRequest(params=form)})
    if isinstance(answer, ElicitResult) and answer.action == "accept" and (answer.content or {}).get("approve") is True:
        return f"approved: {item}"
    raise ToolError(f"not approved: {item}")


@mcp.tool(task=TaskConfig(mode="required", poll_interval=POLL))
async def batch(size: int) -> str:
    """Runs only as a task."""
    await asyncio.sleep(STEP_S)
    return f"batch of {size} done"


@mcp.tool
def echo(text: str) -> str:
    """Echoes text (never a task)."""
    return text


# The routing headers of the tasks/* requests received over HTTP.
SEEN = []


class RecordRouting:
    """ASGI middleware: records the Mcp-Method and Mcp-Name headers (None
    when absent) of every request whose Mcp-Method starts with tasks/."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            method = headers.get("mcp-method")
            if method is not None and method.startswith("tasks/"):
                SEEN.append([method, headers.get("mcp-name")])
        await self.app(scope, receive, send)


@mcp.tool
def routing() -> str:
    """The [Mcp-Method, Mcp-Name] pairs of the tasks/* requests so far (HTTP)."""
    return json.dumps(SEEN)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"] and len(sys.argv) == 3:
        from starlette.middleware import Middleware

        mcp.run(
            transport="http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            show_banner=False,
            middleware=[Middleware(RecordRouting)],
        )
    elif sys.argv[1:] == ["stdio"]:
        mcp.run(transport="stdio", show_banner=False)
    else:
        sys.exit("usage: fastmcp_tasks_server.py stdio | http PORT")
