"""An MCP server over stdio that misbehaves on purpose, for wright's tests: it answers
the handshake and lists its tools, then `garbage` answers lines that are not the
protocol, `die` exits, and `hang` never answers."""

import json
import sys
import time

TOOLS = [
    {"name": name, "description": text, "inputSchema": {"type": "object", "properties": {}}}
    for name, text in [
        ("garbage", "Answers garbage."),
        ("die", "Exits."),
        ("hang", "Never answers."),
    ]
]


def send(message):
    print(json.dumps(message), flush=True)


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "misbehaving", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "garbage":
            print("this is not JSON {", flush=True)
            send({"jsonrpc": "2.0", "id": ident, "result": {"content": "not a list"}})
            continue
        if name == "die":
            print("crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        time.sleep(3600)
        continue
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no such method"}})
        continue
    send({"jsonrpc": "2.0", "id": ident, "result": result})
