"""The PyPI mcp 2 client, declaring MCP Apps, against toolwire's example
app server (examples/app_server.rs) over stdio: the extension offered, the
tools' `_meta.ui` and the interface's resource and contents as the ext-apps
specification shows them.

    python mcp_client_apps.py APP_SERVER

Prints one line per check ("  ok    ..." or "  FAIL  ..."); exits 1 if any
check failed.
"""

import sys
import traceback

import anyio
from mcp import Client, StdioServerParameters

FAILED = 0
APP_MIME = "text/html;profile=mcp-app"


async def check(name, fn):
    global FAILED
    try:
        await fn()
        print(f"  ok    mcp client (apps): {name}", flush=True)
    except Exception:  # noqa: BLE001 - every failure is reported the same way
        FAILED += 1
        print(f"  FAIL  mcp client (apps): {name}", flush=True)
        for line in traceback.format_exc().splitlines()[-15:]:
            print(f"          {line}", flush=True)


def dump(model):
    return model.model_dump(by_alias=True, exclude_none=True)


async def main(server):
    params = StdioServerParameters(command=server, args=[])
    async with Client(params) as client:

        async def offered():
            discovered = dump(await client.discover()) if hasattr(client, "discover") else None
            caps = (discovered or {}).get("capabilities") or dump(client.server_capabilities)
            assert "io.modelcontextprotocol/ui" in (caps.get("extensions") or {}), caps

        async def tools():
            listed = {t.name: dump(t) for t in (await client.list_tools()).tools}
            assert listed["chart"]["_meta"]["ui"] == {"resourceUri": "ui://series/chart"}, listed["chart"]
            assert listed["chart"]["_meta"]["ui/resourceUri"] == "ui://series/chart"
            assert listed["stats"]["_meta"]["ui"]["visibility"] == ["app"], listed["stats"]
            assert listed["series"]["_meta"]["ui"]["visibility"] == ["model"], listed["series"]

        async def resource():
            listed = {r.uri: dump(r) for r in (await client.list_resources()).resources}
            chart = listed["ui://series/chart"]
            assert chart["mimeType"] == APP_MIME, chart
            assert chart["_meta"] == {"ui": {"prefersBorder": True}}, chart
            read = await client.read_resource("ui://series/chart")
            contents = dump(read.contents[0])
            assert contents["mimeType"] == APP_MIME, contents
            assert contents["text"].startswith("<!DOCTYPE html>"), contents["text"][:40]
            assert contents["_meta"] == {"ui": {"prefersBorder": True}}, contents

        async def text_for_any_client():
            result = await client.call_tool("chart", {"n": 3})
            assert result.content[0].text == "The squares of 0 to 2: 0, 1, 4", result
            assert result.structured_content == {"points": [0, 1, 4]}, result

        await check("the server offers io.modelcontextprotocol/ui", offered)
        await check("tools carry _meta.ui (and the flat key) with their visibility", tools)
        await check("the interface is listed and read as text/html;profile=mcp-app with _meta.ui", resource)
        await check("a tool with an interface answers text a client without apps can show", text_for_any_client)
    return FAILED


if __name__ == "__main__":
    sys.exit(1 if anyio.run(main, sys.argv[1]) else 0)
