"""What the Python SDK checks of `resolve mcp` share: a temporary workspace, the connection to
the binary, the result accessors and assertions, and the runner that runs every check on both
protocol versions.

Imported by test_mcp_client.py and test_mcp_approval.py (this directory is on `sys.path` when
Python runs a script from it).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client, StdioServerParameters

TIMEOUT = 20

# The `resolve` binary under test, from the command line (see `run`).
RESOLVE_BIN = ""


class Workspace:
    """A temporary workspace root with files in it; closed when its `with` block ends."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="resolve-mcp-")
        self.root = Path(self._dir.name)
        for path, content in (files or {}).items():
            self.write_file(path, content)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def write_file(self, path: str, content: str) -> None:
        """Write `content` to `path`, creating its directories."""
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)

    def read_file(self, path: str) -> str:
        return (self.root / path).read_text()

    def exists(self, path: str) -> bool:
        return (self.root / path).exists()

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run `resolve --root ROOT ARGS...` as a person in a terminal would."""
        return subprocess.run(
            [RESOLVE_BIN, "--root", str(self.root), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

    def pending_ids(self) -> list[str]:
        listed = self.cli("--json", "pending")
        return [entry["id"] for entry in json.loads(listed.stdout)["pending"]]

    def history(self) -> list[dict]:
        return json.loads(self.cli("--json", "log").stdout)["history"]

    def close(self) -> None:
        self._dir.cleanup()


def connect(workspace: Workspace, mode: str, *args: str, **client_options) -> Client:
    """A client of `resolve mcp --root ROOT ARGS...` negotiating as `mode` ("legacy" or "auto")."""
    params = StdioServerParameters(command=RESOLVE_BIN, args=["mcp", "--root", str(workspace.root), *args])
    return Client(params, mode=mode, read_timeout_seconds=TIMEOUT, **client_options)


def text(result) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


async def call(client: Client, name: str, arguments: dict):
    return await asyncio.wait_for(client.call_tool(name, arguments), TIMEOUT)


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def expect_eq(actual, expected, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}:\n  expected {expected!r}\n  actual   {actual!r}")


async def _run_all(checks: list[Callable[[str], Awaitable[None]]]) -> int:
    passed = failed = 0
    for mode in ("legacy", "auto"):
        for check in checks:
            name = f"{check.__name__} [{mode}]"
            try:
                await asyncio.wait_for(check(mode), 4 * TIMEOUT)
            except Exception:  # noqa: BLE001 - report every failure and go on
                failed += 1
                print(f"FAIL {name}", flush=True)
                traceback.print_exc(file=sys.stdout)
            else:
                passed += 1
                print(f"ok   {name}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def run(checks: list[Callable[[str], Awaitable[None]]], usage: str) -> None:
    """Run every check on both protocol versions against the binary named on the command line,
    printing one line per check, then `N passed, N failed`; exit 1 when any failed (2, with
    `usage`, without exactly one argument)."""
    global RESOLVE_BIN
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    RESOLVE_BIN = sys.argv[1]
    sys.exit(asyncio.run(_run_all(checks)))
