"""Drives an installed asp-bridge as an agent would, with the official Python MCP SDK (`mcp` 2.x).

    python installed.py --repo DIR [--cwd DIR] -- COMMAND [ARGS...]

starts COMMAND ARGS (for example `uvx --from WHEEL asp-bridge mcp --repo DIR`) as an MCP server on
stdio, in `--cwd` (default: the repository; `npx` needs the project it was installed in), lists its
tools, calls `asp_status` and prints one JSON report on stdout. Any failed check
raises (non-zero exit, traceback on stderr). Run by packaging/tests/install.sh.
"""

import argparse
import asyncio
import json

from mcp import Client, StdioServerParameters


async def main(args):
    server = StdioServerParameters(
        command=args.command[0], args=args.command[1:], cwd=args.cwd or args.repo
    )
    async with Client(server, mode="legacy") as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        assert "asp_status" in tools and "asp_diagnostics" in tools, tools
        status = await client.call_tool("asp_status", {})
        assert not status.is_error, status
        body = status.structured_content
        assert body["authoritative"] is False, body
        print(json.dumps({"tools": tools, "status": "answered", "receiptId": bool(body["receiptId"])}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--cwd")
    parser.add_argument("command", nargs="+")
    asyncio.run(main(parser.parse_args()))
