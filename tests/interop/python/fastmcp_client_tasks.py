"""The fastmcp 4 client with fastmcp-tasks (PyPI, pinned in
requirements-tasks.txt) against `toolwire serve`'s demo tool `report`, a
task-optional tool, through the Tasks extension (io.modelcontextprotocol/tasks).

    python fastmcp_client_tasks.py stdio BIN   (fastmcp starts `BIN serve`)
    python fastmcp_client_tasks.py http URL    (a running `toolwire serve --http`)

fastmcp's client drives tasks only once `fastmcp_tasks` is imported (it
registers the client half of the extension on every `Client`); before that
a `Client` does not declare the extension, and toolwire must answer at once.

Over HTTP, fastmcp-tasks 4.1.4 sends tasks/get, tasks/update and
tasks/cancel without the `Mcp-Name` header the extension requires
(tasks.md, "Streamable HTTP: Routing Headers": the client MUST set it to
params.taskId): its request models in fastmcp_tasks/client_models.py
(GetTaskRequest, UpdateTaskRequest, CancelTaskRequest) declare no
`name_param`, which is what makes the SDK's ClientSession.send_request
add the header. toolwire rejects such a request with -32020; one check
asserts exactly that, and the rest of the HTTP checks run with a request
hook (MirrorTaskId) that adds the header the client left out.

Prints one line per check ("  ok    ..." or "  FAIL  ..."), then
"fastmcp_client_tasks: N checks"; exits 1 if any check failed.
"""

import asyncio
import json
import sys
import traceback
from datetime import datetime

import httpx2
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp.shared.exceptions import MCPError

FAILED = 0
CHECKS = 0
PREFIX = "fastmcp client"
# How long any one check may take.
CHECK_S = 30


async def check(name, fn):
    global CHECKS, FAILED
    CHECKS += 1
    try:
        await asyncio.wait_for(fn(), CHECK_S)
        print(f"  ok    {PREFIX}: {name}", flush=True)
    except BaseException as e:  # noqa: BLE001 - every failure is reported the same way
        if isinstance(e, KeyboardInterrupt):
            raise
        FAILED += 1
        print(f"  FAIL  {PREFIX}: {name}", flush=True)
        for line in traceback.format_exc().splitlines()[-15:]:
            print(f"          {line}", flush=True)


class MirrorTaskId(httpx2.Auth):
    """Adds `Mcp-Name: <taskId>` to a tasks/get, tasks/update or tasks/cancel
    POST that lacks it (fastmcp-tasks 4.1.4 leaves it out); counts how often
    it had to."""

    requires_request_body = True

    def __init__(self):
        self.added = 0

    def auth_flow(self, request):
        if request.method == "POST" and "mcp-name" not in request.headers:
            try:
                body = json.loads(request.content)
            except ValueError:
                body = None
            if isinstance(body, dict) and str(body.get("method", "")).startswith("tasks/"):
                task_id = (body.get("params") or {}).get("taskId")
                if isinstance(task_id, str) and task_id.isascii() and task_id.isprintable():
                    request.headers["Mcp-Name"] = task_id
                    self.added += 1
        yield request


def transport_for(kind, where, auth=None):
    if kind == "stdio":
        return StdioTransport(command=where, args=["serve"], env={"TOOLWIRE_LOG": "warn"})
    return StreamableHttpTransport(where, auth=auth)


def text_of(result):
    assert len(result.content) == 1 and result.content[0].type == "text", result
    return result.content[0].text


class Elicitations:
    """An elicitation handler that answers with `answer` and records what it
    was asked."""

    def __init__(self):
        self.asked = []
        self.answer = {"publish": True}

    async def __call__(self, message, response_type, params, context):
        self.asked.append((message, params.requested_schema))
        return self.answer


async def main(kind, where):
    global PREFIX
    PREFIX = f"fastmcp client, {kind}"

    # Before fastmcp_tasks is imported: no extension declared.
    async def plain():
        async with Client(transport_for(kind, where)) as client:
            result = await client.call_tool("report", {"pages": 1})
            assert text_of(result) == "report of 1 pages written", result

    await check("without fastmcp_tasks imported the client declares no tasks, and report answers at once", plain)

    import fastmcp_tasks
    from fastmcp.exceptions import ToolError
    from fastmcp_tasks import ToolTask, call_tool_task

    mirror = None
    if kind == "http":

        async def no_mcp_name():
            # The header fastmcp-tasks leaves out: toolwire must refuse the poll.
            async with Client(transport_for(kind, where)) as client:
                task = await call_tool_task(client, "report", {"pages": 1})
                try:
                    await task.status()
                except MCPError as e:
                    assert e.error.code == -32020, e.error
                    assert "Mcp-Name" in e.error.message, e.error
                else:
                    raise AssertionError("tasks/get without Mcp-Name was accepted")

        await check(
            "known gap: fastmcp-tasks 4.1.4 sends tasks/get without Mcp-Name over HTTP, which toolwire refuses (-32020)",
            no_mcp_name,
        )
        mirror = MirrorTaskId()
        PREFIX = f"fastmcp client, {kind} (Mcp-Name added for it)"

    asks = Elicitations()
    async with Client(transport_for(kind, where, mirror), elicitation_handler=asks) as client:
        state = {}

        async def created():
            task = await call_tool_task(client, "report", {"pages": 3})
            assert isinstance(task, ToolTask), task
            c = task.create_result
            assert c.result_type == "task", c
            assert c.task_id, c
            assert c.status == "working", c
            assert c.poll_interval_ms is not None and c.poll_interval_ms > 0, c
            datetime.fromisoformat(c.created_at.replace("Z", "+00:00"))
            state["task"] = task

        await check("call_tool_task: report runs as a task (resultType task, a taskId, working)", created)

        async def polled():
            task = state["task"]
            now = await task.status()
            assert now.result_type == "complete", now
            assert now.task_id == task.task_id and now.status == "working", now
            final = await task.wait(timeout=20)
            assert final.status == "completed", final
            assert final.result["content"][0]["text"] == "report of 3 pages written, as a task", final.result
            result = await task.result()
            assert text_of(result) == "report of 3 pages written, as a task", result

        await check("tasks/get: working, then completed with the result inlined", polled)

        async def transparent():
            result = await client.call_tool("report", {"pages": 2})
            assert text_of(result) == "report of 2 pages written, as a task", result

        await check("call_tool: the client follows the task itself to the result", transparent)

        async def elicited():
            asks.asked.clear()
            asks.answer = {"publish": True}
            task = await call_tool_task(client, "report", {"pages": 1, "publish": True})
            waiting = await task.wait(state="input_required", timeout=20)
            [(key, request)] = waiting.input_requests.items()
            assert request["method"] == "elicitation/create", request
            assert request["params"]["message"] == "Publish the 1-page report?", request
            result = await task.result()
            assert text_of(result) == "report of 1 pages written and published, as a task", result
            assert len(asks.asked) == 1, asks.asked
            message, schema = asks.asked[0]
            assert message == "Publish the 1-page report?", message
            assert "publish" in schema["properties"], schema

        await check("publish: input_required, answered through the elicitation handler (tasks/update)", elicited)

        async def declined():
            asks.asked.clear()
            asks.answer = {"publish": False}
            result = await client.call_tool("report", {"pages": 1, "publish": True})
            assert text_of(result) == "report of 1 pages written, as a task", result
            assert len(asks.asked) == 1, asks.asked

        await check("publish answered no through call_tool: written, not published", declined)

        async def cancelled():
            task = await call_tool_task(client, "report", {"pages": 100})
            assert (await task.status()).status == "working"
            await task.cancel()
            final = await task.wait(timeout=10)
            assert final.status == "cancelled", final
            try:
                await task.result()
            except ToolError as e:
                assert "cancelled" in str(e), e
            else:
                raise AssertionError("the result of a cancelled task was not an error")

        await check("tasks/cancel of report pages=100: cancelled", cancelled)

        async def another_connection():
            task = await call_tool_task(client, "report", {"pages": 1})
            async with Client(transport_for(kind, where, mirror)) as other:
                again = ToolTask(other, "report", task.create_result)
                result = await again.result()
                assert text_of(result) == "report of 1 pages written, as a task", result

        if kind == "http":
            await check("a second connection follows the task by its id", another_connection)

        async def unknown():
            from fastmcp_tasks.client_models import ClientCreateTaskResult

            fake = ClientCreateTaskResult.model_validate(
                {
                    "resultType": "task",
                    "taskId": "no-such-task",
                    "status": "working",
                    "createdAt": "2026-07-28T00:00:00Z",
                    "lastUpdatedAt": "2026-07-28T00:00:00Z",
                    "ttlMs": None,
                }
            )
            try:
                await ToolTask(client, "report", fake).status()
            except MCPError as e:
                assert e.error.code == -32602, e.error
            else:
                raise AssertionError("tasks/get of an unknown task succeeded")

        await check("tasks/get of an unknown taskId: -32602", unknown)

    if mirror is not None:

        async def mirrored():
            assert mirror.added > 0, "the hook never had to add Mcp-Name"

        await check("(the hook did add Mcp-Name: fastmcp-tasks still leaves it out)", mirrored)
    del fastmcp_tasks


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("stdio", "http"):
        sys.exit("usage: fastmcp_client_tasks.py stdio BIN | http URL")
    if sys.argv[1] == "http" and not sys.argv[2].startswith("http://127.0.0.1:"):
        sys.exit(f"refusing to contact {sys.argv[2]}: only http://127.0.0.1 is tested")
    asyncio.run(main(sys.argv[1], sys.argv[2]))
    # The last line: how many checks ran (fastmcp-tasks.mjs compares it with
    # the check lines it read).
    print(f"fastmcp_client_tasks: {CHECKS} checks", flush=True)
    sys.exit(1 if FAILED else 0)
