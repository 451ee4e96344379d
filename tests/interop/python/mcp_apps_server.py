"""An MCP Apps server on the Python SDK mcp 2.x (PyPI; its `mcp.server.apps`
extension), over stdio: `greet` renders with the interface
`ui://py/greeter.html`, whose button calls `shout`, a tool only the
interface may call. For tests/interop/apps-python.mjs: `toolwire app`
against it, straight and behind `toolwire gateway`.

    python mcp_apps_server.py
"""

from mcp.server.apps import Apps, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Greeter</title></head>
<body>
<h3 id="greeting">waiting…</h3>
<button id="shout">Shout</button>
<div id="shouted"></div>
<script>
let nextId = 1;
const pending = new Map();
let name = '';
function request(method, params) {
  const id = nextId++;
  parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
addEventListener('message', (event) => {
  const msg = event.data;
  if (!msg || msg.jsonrpc !== '2.0') return;
  if (msg.id !== undefined && pending.has(msg.id)) {
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) p.reject(new Error(msg.error.message)); else p.resolve(msg.result);
  } else if (msg.method === 'ui/notifications/tool-input') {
    name = msg.params.arguments.name;
  } else if (msg.method === 'ui/notifications/tool-result') {
    document.getElementById('greeting').textContent = msg.params.content[0].text;
  }
});
document.getElementById('shout').addEventListener('click', async () => {
  const r = await request('tools/call', { name: 'shout', arguments: { name } });
  document.getElementById('shouted').textContent = r.content[0].text;
});
(async () => {
  await request('ui/initialize', {
    appInfo: { name: 'py-greeter', version: '1.0.0' },
    appCapabilities: {},
    protocolVersion: '2026-01-26',
  });
  parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} }, '*');
})();
</script>
</body></html>
"""

apps = Apps()


@apps.tool(resource_uri="ui://py/greeter.html", description="Greets someone, with an interface")
def greet(name: str, ctx: Context) -> str:
    # One tool, two answers: the same text either way here, but a host
    # that renders apps is told so.
    suffix = " (rendered)" if client_supports_apps(ctx) else ""
    return f"Hello, {name}!{suffix}"


@apps.tool(resource_uri="ui://py/greeter.html", visibility=["app"], description="Shouts a name")
def shout(name: str) -> str:
    return f"HELLO, {name.upper()}!"


apps.add_html_resource("ui://py/greeter.html", PAGE, name="greeter", prefers_border=True)

mcp = MCPServer("python-apps-interop", extensions=[apps])

if __name__ == "__main__":
    mcp.run("stdio")
