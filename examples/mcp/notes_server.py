"""A notes server for `resolve agent`: adding a note is staged, and lands only when `resolve`
applies it. It implements the `resolve/pendingAction` convention (see docs/custom-tools.md).

Configure it in `<root>/.resolve/config.toml`:

    [mcp_servers.notes]
    command = "python3"
    args = ["examples/mcp/notes_server.py"]
    env = { NOTES_FILE = "notes.log" }

Needs the `mcp` SDK from PyPI (`pip install mcp`).
"""

import os
from typing import Any

try:
    from mcp.server.mcpserver import MCPServer  # mcp >= 2
except ImportError:  # mcp 1.x calls it FastMCP
    from mcp.server.fastmcp import FastMCP as MCPServer

from mcp.types import CallToolResult, TextContent

NOTES_FILE = os.environ.get("NOTES_FILE", "notes.log")

server = MCPServer("notes")


def read_notes() -> list[str]:
    try:
        with open(NOTES_FILE, encoding="utf-8") as file:
            return file.read().splitlines()
    except FileNotFoundError:
        return []


@server.tool()
def add_note(text: str) -> CallToolResult:
    """Add a note. The note is staged as a preview; it is written when `resolve` applies it."""
    # 1. Compute a preview; change nothing yet.
    preview = f"Would add note {len(read_notes()) + 1}: {text}"
    # 2. Ask resolve to stage a pending action: what to call to apply it (and, optionally,
    #    to reject it). resolve adds `reason` (and `extra`, when given) to these arguments.
    return CallToolResult(
        content=[TextContent(type="text", text=preview)],
        _meta={
            "resolve/pendingAction": {
                "label": f"Note: {text[:40]}",
                "apply": {"tool": "write_note", "arguments": {"text": text}},
            }
        },
    )


# `resolve/hidden`: called only through `resolve`, never offered to the model.
@server.tool(meta={"resolve/hidden": True})
def write_note(text: str, reason: str, extra: dict[str, Any] | None = None) -> CallToolResult:
    """Write a staged note (called by `resolve` on apply)."""
    with open(NOTES_FILE, "a", encoding="utf-8") as file:
        file.write(text + "\n")
    count = len(read_notes())
    return CallToolResult(
        content=[TextContent(type="text", text=f"Added note {count}: {text}")],
        structuredContent={"count": count, "reason": reason},
    )


@server.tool()
def list_notes() -> str:
    """List the notes written so far."""
    notes = read_notes()
    return "\n".join(f"{i}. {note}" for i, note in enumerate(notes, 1)) or "No notes yet."


if __name__ == "__main__":
    server.run()
