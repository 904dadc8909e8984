"""A new user's agent through the official Python MCP SDK client (`mcp` 2.x): a script of calls.

Run by tests/e2e/mcp.rs with the venv's Python: starts `asp-bridge mcp --repo R` (the embedded host
unless --host-command names one), lists the tools, makes each call of --calls (a JSON list of
{"tool", "arguments"}) in turn and lists the tools again after each, counting the
`notifications/tools/list_changed` it gets. Prints one JSON report on stdout: the tools listed
first, then per call isError, structuredContent, the text block and the tools listed after it, and
how many list_changed notifications arrived. The SDK validates structuredContent against each
tool's outputSchema. Any failed check raises (non-zero exit, traceback on stderr).
"""

import asyncio
import json
import sys

import driver
from mcp import Client
from mcp_types import ToolListChangedNotification


async def main(args):
    options = ["--restart-delay-ms", "0"]
    if args.host_command:
        options += ["--host-command", args.host_command]
    params = driver.server(args, *options)
    changed = []

    async def on_message(message):
        if isinstance(message, ToolListChangedNotification):
            changed.append(message.method)
        await asyncio.sleep(0)

    report = {"results": []}
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        listed = await client.list_tools(cache_mode="refresh")
        report["tools"] = [tool.name for tool in listed.tools]
        for call in json.loads(args.calls):
            result = await client.call_tool(call["tool"], call.get("arguments", {}))
            texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
            after = await client.list_tools(cache_mode="refresh")
            report["results"].append(
                {
                    "isError": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": "\n".join(texts),
                    "toolsAfter": [tool.name for tool in after.tools],
                }
            )
    report["listChanged"] = len(changed)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    parser = driver.arguments()
    parser.add_argument("--calls", required=True)
    parser.add_argument("--host-command")
    asyncio.run(main(parser.parse_args()))
