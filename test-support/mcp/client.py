"""End-to-end check of `asp-bridge mcp` with the official Python MCP SDK (`mcp` 2.x).

Run by tests/e2e/mcp.rs (the path comes from test_support::mcp) with the venv's Python: spawns the
real binary against the fake host in one protocol mode ("legacy" = the 2025-11-25 initialize
handshake, "2026-07-28" = the stateless revision), checks the tools, every call, progress, a host
crash and its recovery, and a refused path, and prints one JSON report on stdout. Any failed check
raises (non-zero exit, traceback on stderr).
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters

TOOLS = ["asp_authority_status", "asp_capabilities", "asp_diagnostics", "asp_inspect", "asp_status"]
ARGUMENTS = {"asp_inspect": {"request": {"kind": "fixture/graph"}}}


def params(args, host_command):
    return StdioServerParameters(
        command=args.bridge,
        args=["mcp", "--repo", args.repo, "--host-command", host_command, "--restart-delay-ms", "0"],
        cwd=args.repo,
    )


def check_advisory(name, result):
    assert not result.is_error, f"{name}: {result}"
    body = result.structured_content
    assert body is not None, f"{name}: no structuredContent"
    assert body["authoritative"] is False, name
    assert "satisfies no gate" in body["notice"], name
    assert body["receiptId"], name
    return body


async def main(args):
    report = {"mode": args.mode}
    async with Client(params(args, args.host_command), mode=args.mode) as client:
        listed = await client.list_tools()
        report["tools"] = [tool.name for tool in listed.tools]
        report["readOnly"] = all(
            tool.annotations.read_only_hint is True
            and tool.annotations.destructive_hint is False
            and tool.annotations.idempotent_hint is True
            and tool.annotations.open_world_hint is False
            and tool.output_schema is not None
            for tool in listed.tools
        )
        report["called"] = []
        for name in TOOLS:
            # The SDK validates structuredContent against each tool's outputSchema.
            result = await client.call_tool(name, ARGUMENTS.get(name, {}))
            check_advisory(name, result)
            report["called"].append(name)

        progress = []

        async def on_progress(value, total, message):
            progress.append({"progress": value, "total": total, "message": message})

        result = await client.call_tool("asp_diagnostics", {}, progress_callback=on_progress)
        body = check_advisory("asp_diagnostics", result)
        assert body["callSite"] == "interactive", body
        assert body["changedFiles"] == 1, body
        values = [p["progress"] for p in progress]
        assert values == sorted(values) and len(set(values)) == len(values), progress
        report["progress"] = progress

        refused = await client.call_tool("asp_diagnostics", {"paths": ["../outside"]})
        assert refused.is_error, refused
        assert "refused" in refused.structured_content["cause"], refused.structured_content
        report["traversal"] = refused.structured_content["failClass"]

    async with Client(params(args, args.crash_host_command), mode=args.mode) as client:
        crashed = await client.call_tool("asp_status", {})
        assert crashed.is_error, crashed
        report["crash"] = [crashed.structured_content["failClass"]]
        again = await client.call_tool("asp_status", {})
        check_advisory("asp_status", again)
        report["crash"].append("recovered")

    json.dump(report, sys.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--mode", required=True, choices=["legacy", "auto", "2026-07-28"])
    parser.add_argument("--host-command", required=True)
    parser.add_argument("--crash-host-command", required=True)
    asyncio.run(main(parser.parse_args()))
