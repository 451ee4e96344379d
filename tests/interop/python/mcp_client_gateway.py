"""The PyPI mcp 2 client (2026-07-28, mode auto) against `toolwire gateway`
over Streamable HTTP: the merged tool list, a structured result, and
confirm_action (a multi round-trip request) accepted and declined.

    python mcp_client_gateway.py URL

Prints one line per check ("  ok    ..." or "  FAIL  ..."); exits 1 if any
check failed.
"""

import sys
import traceback

import anyio
import mcp_types as types
from mcp import Client

FAILED = 0


async def check(name, fn):
    global FAILED
    try:
        await fn()
        print(f"  ok    mcp client: {name}", flush=True)
    except Exception:  # noqa: BLE001 - every failure is reported the same way
        FAILED += 1
        print(f"  FAIL  mcp client: {name}", flush=True)
        for line in traceback.format_exc().splitlines()[-15:]:
            print(f"          {line}", flush=True)


async def main(url):
    answer = {"action": "accept", "content": {"confirm": True}}

    async def elicit(_context, _params):
        return types.ElicitResult(**answer)

    async with Client(url, elicitation_callback=elicit) as client:

        async def tools():
            listed = await client.list_tools()
            names = [t.name for t in listed.tools]
            for expected in ("tw__echo", "py__echo", "ts__echo"):
                assert expected in names, f"{expected} missing from {names}"

        async def structured():
            result = await client.call_tool("tw__add", {"a": 2, "b": 3})
            assert result.structured_content == {"sum": 5.0}, result

        async def confirm():
            answer.update(action="accept", content={"confirm": True})
            yes = await client.call_tool("tw__confirm_action", {"action": "go"})
            assert yes.content[0].text == "confirmed: go", yes
            answer.update(action="decline", content=None)
            no = await client.call_tool("tw__confirm_action", {"action": "go"})
            assert no.is_error and no.content[0].text == "not confirmed: go", no

        await check("the merged tool list", tools)
        await check("a structured result passes through", structured)
        await check("confirm_action (MRTR through the gateway), accepted and declined", confirm)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_client_gateway.py URL")
    anyio.run(main, sys.argv[1])
    sys.exit(1 if FAILED else 0)
