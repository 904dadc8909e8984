#!/usr/bin/env python3
"""A minimal ASP host in Python for the round-trip benchmark: newline-delimited JSON-RPC on stdio,
answering `host/status` with the specification's example status and `shutdown` with null; anything
else gets a method-not-found error. Usage: ndjson_host.py STATUS_RESPONSE_JSON."""

import json
import sys


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        status = json.load(f)["result"]
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        if method == "host/status":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": status}
        elif method == "shutdown":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": None}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": -32601, "message": f"no method {method}"}}
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
