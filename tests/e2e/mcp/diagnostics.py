"""`asp_diagnostics` through the official Python MCP SDK client (`mcp` 2.x), on a real workspace.

Run by tests/e2e/opcore.rs with the venv's Python: starts `asp-bridge mcp --repo R --config C` (the
embedded host and the providers C enrolls), calls `asp_diagnostics` once with no arguments, checks it
is an advisory answer, and prints its structuredContent as one JSON document on stdout. Any failed
check raises (non-zero exit, traceback on stderr).
"""

import asyncio
import json
import sys

import driver
from mcp import Client


async def main(args):
    params = driver.server(args, "--config", args.config)
    async with Client(params, mode="legacy") as client:
        # The SDK validates structuredContent against the tool's outputSchema.
        result = await client.call_tool("asp_diagnostics", {})
        assert not result.is_error, result
        body = result.structured_content
        assert body is not None, "no structuredContent"
        assert body["authoritative"] is False, body
    json.dump(body, sys.stdout)


if __name__ == "__main__":
    parser = driver.arguments()
    parser.add_argument("--config", required=True)
    asyncio.run(main(parser.parse_args()))
