"""`asp_diagnostics` through the official Python MCP SDK client (`mcp` 2.x), on a real workspace.

Run by tests/e2e/opcore.rs with the venv's Python: starts `asp-bridge mcp --repo R --config C` (the
embedded host and the providers C enrolls), calls `asp_diagnostics` once with no arguments, checks it
is an advisory answer, and prints its structuredContent as one JSON document on stdout. Any failed
check raises (non-zero exit, traceback on stderr).
"""

import argparse
import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


async def main(args):
    env = {k: v for k, v in os.environ.items() if k != "ASP_BRIDGE_HOST_COMMAND"}
    params = StdioServerParameters(
        command=args.bridge,
        args=["mcp", "--repo", args.repo, "--config", args.config],
        cwd=args.repo,
        env=env,
    )
    async with Client(params, mode="legacy") as client:
        # The SDK validates structuredContent against the tool's outputSchema.
        result = await client.call_tool("asp_diagnostics", {})
        assert not result.is_error, result
        body = result.structured_content
        assert body is not None, "no structuredContent"
        assert body["authoritative"] is False, body
    json.dump(body, sys.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--config", required=True)
    asyncio.run(main(parser.parse_args()))
