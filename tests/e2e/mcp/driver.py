"""What the Python MCP SDK drivers here (agent.py, diagnostics.py) share: their command line and
the `asp-bridge mcp` server they start.

Each driver is run as a script; Python finds this module beside it.
"""

import argparse
import os

from mcp import StdioServerParameters


def arguments():
    """A command line with the bridge's executable (--bridge) and the workspace (--repo)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--repo", required=True)
    return parser


def server(args, *options):
    """`asp-bridge mcp --repo R` with `options`, in R, with no host command from the environment."""
    env = {k: v for k, v in os.environ.items() if k != "ASP_BRIDGE_HOST_COMMAND"}
    return StdioServerParameters(
        command=args.bridge,
        args=["mcp", "--repo", args.repo, *options],
        cwd=args.repo,
        env=env,
    )
