#!/usr/bin/env python3
"""End-to-end checks of `resolve mcp`, driven by the official MCP Python SDK (PyPI `mcp`).

Usage: test_mcp_client.py PATH_TO_RESOLVE_BINARY

Each check starts the real binary as a stdio server (`resolve mcp --root DIR`) in a fresh
temporary workspace. Every check runs twice: once over the `initialize` handshake
(`mode="legacy"`, protocol 2025-11-25, what most MCP hosts speak) and once with the SDK's
default negotiation (`mode="auto"`, which settles on 2026-07-28). Prints one line per check,
then `N passed, N failed`; exits 1 when any check failed.

Run by crates/resolve-cli/tests/suite/mcp.rs (`cargo test -p resolve-cli --test all suite::mcp::`).
"""

from __future__ import annotations

import asyncio

import mcp_harness as harness
from mcp.client.subscriptions import ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp_harness import TIMEOUT, Workspace, call, connect, expect, expect_eq, text

REMINDER = (
    "<system-reminder>\n"
    "This is a preview. Call the `resolve` tool to apply or discard these changes.\n"
    "</system-reminder>"
)
BANNER = (
    "Staged as a preview — files are NOT modified yet. "
    'Call `resolve` with action "apply" to apply it or "discard" to drop it.'
)
NOTHING_TO_APPLY = "No pending action to resolve. Nothing to apply or discard."
NOTHING_TO_DISCARD = "Nothing to discard; no pending action remains."
APP_URI = "ui://resolve/review"

# The literal input schemas (the published contract of each tool).
EXPECTED_SCHEMAS = {
    "ast_edit": {
        "type": "object",
        "properties": {
            "ops": {
                "type": "array",
                "minItems": 1,
                "description": "rewrite operations",
                "items": {
                    "type": "object",
                    "properties": {
                        "pat": {"type": "string", "description": "ast-grep pattern"},
                        "out": {"type": "string", "description": "replacement"},
                    },
                    "required": ["pat", "out"],
                    "additionalProperties": False,
                },
            },
            "paths": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string"},
                "description": "files, directories or globs",
            },
            "lang": {"type": "string", "description": "language name; default: from file extensions"},
        },
        "required": ["ops", "paths"],
        "additionalProperties": False,
    },
    "edit": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    },
    "write": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    "apply_patch": {
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "the whole patch, from `*** Begin Patch` to `*** End Patch`",
            }
        },
        "required": ["input"],
        "additionalProperties": False,
    },
    "read": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "ls": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "additionalProperties": False,
    },
    "grep": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
        "required": ["pattern"],
        "additionalProperties": False,
    },
    "resolve": {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["apply", "discard"],
                "description": "apply makes the pending change land; discard drops it",
            },
            "reason": {"type": "string", "description": "one short sentence explaining why"},
            "extra": {"type": "object", "description": "free-form metadata"},
        },
        "required": ["action", "reason"],
        "additionalProperties": False,
    },
}


def details(result) -> dict:
    return (result.meta or {}).get("resolve/details", {})


def reminds(result) -> bool:
    return text(result).endswith(REMINDER)


# --- checks -------------------------------------------------------------------------------


async def check_tools_are_listed_with_literal_schemas_and_annotations(mode: str) -> None:
    with Workspace() as workspace:
        async with connect(workspace, mode) as client:
            expect_eq(
                client.protocol_version,
                "2025-11-25" if mode == "legacy" else "2026-07-28",
                "negotiated protocol version",
            )
            tools = (await client.list_tools()).tools
            expect_eq([tool.name for tool in tools], list(EXPECTED_SCHEMAS), "tool names")
            for tool in tools:
                expect_eq(tool.input_schema, EXPECTED_SCHEMAS[tool.name], f"{tool.name} inputSchema")
                expect(tool.output_schema is None, f"{tool.name}: no tool declares an outputSchema")
                expect(bool(tool.description), f"{tool.name} has no description")
                hints = tool.annotations
                if tool.name in ("read", "ls", "grep"):
                    expect_eq(hints.read_only_hint, True, f"{tool.name} readOnlyHint")
                elif tool.name == "resolve":
                    expect_eq(hints.destructive_hint, True, "resolve destructiveHint")
                    expect_eq(hints.read_only_hint, False, "resolve readOnlyHint")
                else:
                    expect_eq(hints.read_only_hint, True, f"{tool.name} readOnlyHint (it only stages)")
            resolve = next(tool for tool in tools if tool.name == "resolve")
            expect(resolve.description.startswith("Finish a pending action"), resolve.description)


async def check_every_result_reminds_while_pending_then_apply_lands(mode: str) -> None:
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode) as client:
            staged = await call(client, "edit", {"path": "a.txt", "old_text": "two", "new_text": "2"})
            expect(not staged.is_error, text(staged))
            expect(text(staged).startswith(BANNER + "\n"), "preview starts with the banner")
            expect("-two\n+2" in text(staged), text(staged))
            expect(reminds(staged), "the preview ends with the reminder")
            expect_eq(details(staged).get("pendingId"), "pending-action:edit:1", "pendingId")
            expect_eq(workspace.read_file("a.txt"), "one\ntwo\n", "file untouched by the preview")

            read = await call(client, "read", {"path": "a.txt"})
            expect_eq(text(read), f"     1\tone\n     2\ttwo\n\n{REMINDER}", "read while pending")
            for name, arguments in [("ls", {}), ("grep", {"pattern": "one"})]:
                result = await call(client, name, arguments)
                expect(not result.is_error and reminds(result), f"{name}: {text(result)!r}")
            failed = await call(client, "read", {"path": "missing.txt"})
            expect(failed.is_error and reminds(failed), f"an error result reminds too: {text(failed)!r}")

            applied = await call(client, "resolve", {"action": "apply", "reason": "Numbers read better."})
            expect(not applied.is_error, text(applied))
            expect_eq(text(applied), "Applied edit to a.txt.", "apply result")
            expect_eq(details(applied).get("reason"), "Numbers read better.", "details.reason")
            expect_eq(workspace.read_file("a.txt"), "one\n2\n", "file after apply")

            read = await call(client, "read", {"path": "a.txt"})
            expect(not reminds(read), f"no reminder once nothing is pending: {text(read)!r}")


async def check_discard_drops_the_preview(mode: str) -> None:
    with Workspace() as workspace:
        async with connect(workspace, mode) as client:
            staged = await call(client, "write", {"path": "new.txt", "content": "hi\n"})
            expect(reminds(staged), text(staged))
            discarded = await call(client, "resolve", {"action": "discard", "reason": "Not needed."})
            expect(not discarded.is_error, text(discarded))
            expect_eq(text(discarded), "Discarded: Write: new.txt. Reason: Not needed.", "discard text")
            expect(not workspace.exists("new.txt"), "discard wrote nothing")
            again = await call(client, "resolve", {"action": "discard", "reason": "Again."})
            expect_eq((again.is_error, text(again)), (False, NOTHING_TO_DISCARD), "discard with nothing pending")


async def check_stale_preview_is_an_error_result(mode: str) -> None:
    with Workspace({"a.txt": "old\n"}) as workspace:
        async with connect(workspace, mode) as client:
            await call(client, "edit", {"path": "a.txt", "old_text": "old", "new_text": "new"})
            workspace.write_file("a.txt", "old\nedited by hand\n")
            stale = await call(client, "resolve", {"action": "apply", "reason": "Ship it."})
            expect(stale.is_error, "stale apply is isError")
            expect(text(stale).startswith("Preview is stale: `a.txt` changed"), text(stale))
            expect(reminds(stale), "the stale preview stays pending")
            expect_eq(workspace.read_file("a.txt"), "old\nedited by hand\n", "nothing written")
            discarded = await call(client, "resolve", {"action": "discard", "reason": "Stale."})
            expect(not discarded.is_error and not reminds(discarded), text(discarded))


async def check_stacked_previews_resolve_head_first(mode: str) -> None:
    with Workspace({"a.txt": "a\n"}) as workspace:
        async with connect(workspace, mode) as client:
            await call(client, "edit", {"path": "a.txt", "old_text": "a", "new_text": "A"})
            await call(client, "write", {"path": "b.txt", "content": "b\n"})
            first = await call(client, "resolve", {"action": "apply", "reason": "Newest first."})
            expect_eq(text(first), f"Wrote b.txt.\n\n{REMINDER}", "head (the write) first, edit still pending")
            expect_eq(workspace.read_file("a.txt"), "a\n", "edit not applied yet")
            second = await call(client, "resolve", {"action": "apply", "reason": "Then the edit."})
            expect_eq(text(second), "Applied edit to a.txt.", "then the edit")
            expect_eq((workspace.read_file("a.txt"), workspace.read_file("b.txt")), ("A\n", "b\n"), "files")


async def check_two_connections_cannot_resolve_each_others_previews(mode: str) -> None:
    with Workspace({"a.txt": "a\n"}) as workspace:
        async with connect(workspace, mode) as first, connect(workspace, mode) as second:
            staged = await call(first, "edit", {"path": "a.txt", "old_text": "a", "new_text": "A"})
            expect(reminds(staged), text(staged))
            read = await call(second, "read", {"path": "a.txt"})
            expect(not reminds(read), "the other connection has nothing pending")
            refused = await call(second, "resolve", {"action": "apply", "reason": "Not mine."})
            expect_eq((refused.is_error, text(refused)), (True, NOTHING_TO_APPLY), "other connection's apply")
            nothing = await call(second, "resolve", {"action": "discard", "reason": "Not mine."})
            expect_eq((nothing.is_error, text(nothing)), (False, NOTHING_TO_DISCARD), "other connection's discard")
            expect_eq(workspace.read_file("a.txt"), "a\n", "untouched")
            applied = await call(first, "resolve", {"action": "apply", "reason": "Mine."})
            expect_eq(text(applied), "Applied edit to a.txt.", "own apply")


async def check_preview_applied_from_the_cli_is_gone_from_the_connection(mode: str) -> None:
    with Workspace({"a.txt": "a\n"}) as workspace:
        async with connect(workspace, mode) as client:
            staged = await call(client, "edit", {"path": "a.txt", "old_text": "a", "new_text": "A"})
            pending_id = details(staged)["pendingId"]
            listed = workspace.cli("pending", "--json")
            expect(pending_id in listed.stdout and "mcp:" in listed.stdout, listed.stdout)
            cli = workspace.cli("apply", "--reason", "Reviewed in a terminal.")
            expect_eq(cli.returncode, 0, f"resolve apply exit code (stderr: {cli.stderr})")
            expect("Applied edit to a.txt." in cli.stdout, cli.stdout)
            expect_eq(workspace.read_file("a.txt"), "A\n", "applied by the CLI")

            read = await call(client, "read", {"path": "a.txt"})
            expect(not reminds(read), f"nothing pending after the CLI applied it: {text(read)!r}")
            again = await call(client, "resolve", {"action": "apply", "reason": "Again?"})
            expect_eq((again.is_error, text(again)), (True, NOTHING_TO_APPLY), "connection apply afterwards")


async def check_resources_list_and_read_previews_and_history(mode: str) -> None:
    with Workspace({"a.txt": "a\n"}) as workspace:
        async with connect(workspace, mode) as client:
            listed = (await client.list_resources()).resources
            expect_eq([str(resource.uri) for resource in listed], [APP_URI], "only the review app at first")
            expect_eq(listed[0].mime_type, "text/html;profile=mcp-app", "the app's MIME type")
            app = (await client.read_resource(APP_URI)).contents[0]
            expect(app.mime_type == "text/html;profile=mcp-app" and app.text.startswith("<!doctype html>"), app.mime_type)
            staged = await call(client, "edit", {"path": "a.txt", "old_text": "a", "new_text": "A"})
            pending_id = details(staged)["pendingId"]
            pending_uri = f"resolve://pending/{pending_id}"
            resources = (await client.list_resources()).resources
            expect_eq([str(resource.uri) for resource in resources], [pending_uri, APP_URI], "pending resource")
            expect_eq(resources[0].title, "Edit: a.txt", "resource title")
            preview = (await client.read_resource(pending_uri)).contents[0]
            expect(preview.text.startswith(f"{pending_id} — pending (mcp:"), preview.text)
            expect(BANNER in preview.text and "-a\n+A" in preview.text, preview.text)

            await call(client, "resolve", {"action": "apply", "reason": "Capital."})
            history_uri = f"resolve://history/{pending_id}"
            resources = (await client.list_resources()).resources
            expect_eq([str(resource.uri) for resource in resources], [history_uri, APP_URI], "history resource")
            history = (await client.read_resource(history_uri)).contents[0]
            expect(history.text.startswith(f"{pending_id}  applied  Edit: a.txt  — Capital.\n\n"), history.text)
            try:
                await client.read_resource("resolve://pending/pending-action:edit:99")
            except MCPError as error:
                expect("neither pending nor in the history" in str(error), str(error))
            else:
                raise AssertionError("reading an unknown resource should fail")


async def check_list_changed_is_notified(mode: str) -> None:
    with Workspace({"a.txt": "a\n"}) as workspace:
        if mode == "legacy":
            changed = asyncio.Event()

            async def on_message(message) -> None:
                if getattr(message, "method", None) == "notifications/resources/list_changed":
                    changed.set()

            async with connect(workspace, mode, message_handler=on_message) as client:
                for name, arguments in [
                    ("edit", {"path": "a.txt", "old_text": "a", "new_text": "A"}),
                    ("resolve", {"action": "apply", "reason": "Yes."}),
                    ("write", {"path": "b.txt", "content": "b\n"}),
                    ("resolve", {"action": "discard", "reason": "No."}),
                ]:
                    changed.clear()
                    await call(client, name, arguments)
                    await asyncio.wait_for(changed.wait(), TIMEOUT)
        else:
            async with connect(workspace, mode) as client:
                async with client.listen(resources_list_changed=True) as subscription:
                    expect_eq(subscription.honored.resources_list_changed, True, "honored filter")
                    for name, arguments in [
                        ("edit", {"path": "a.txt", "old_text": "a", "new_text": "A"}),
                        ("resolve", {"action": "apply", "reason": "Yes."}),
                    ]:
                        await call(client, name, arguments)
                        event = await asyncio.wait_for(subscription.__anext__(), TIMEOUT)
                        expect(isinstance(event, ResourcesListChanged), repr(event))


async def check_malformed_arguments_are_error_results_and_the_server_keeps_serving(mode: str) -> None:
    with Workspace({"a.txt": "a\n"}) as workspace:
        async with connect(workspace, mode) as client:
            await call(client, "edit", {"path": "a.txt", "old_text": "a", "new_text": "A"})
            for arguments, expected in [
                (
                    {"action": "ship", "reason": "x"},
                    'Invalid arguments for `resolve`: `action` must be "apply" or "discard" (was "ship")',
                ),
                ({"action": "apply"}, "Invalid arguments for `resolve`: `reason` is required"),
                (
                    {"action": "apply", "reason": "x", "force": True},
                    "Invalid arguments for `resolve`: `force` is not a known field (allowed: action, reason, extra)",
                ),
            ]:
                result = await call(client, "resolve", arguments)
                expect(result.is_error, f"{arguments} is isError")
                expect(text(result).startswith(expected), text(result))
                expect(reminds(result), "the preview is still pending")
            for name, arguments, expected in [
                ("nope", {}, "Unknown tool `nope`."),
                ("edit", {"old_text": "a", "new_text": "b"}, "Invalid arguments for `edit`: `path` is required"),
                ("read", {"path": "../outside.txt"}, "`../outside.txt` is outside the workspace root"),
                ("grep", {"pattern": "("}, "Invalid regular expression `(`"),
            ]:
                result = await call(client, name, arguments)
                expect(result.is_error, f"{name} {arguments} is isError")
                expect(text(result).startswith(expected), text(result))
            expect_eq(workspace.read_file("a.txt"), "a\n", "nothing applied by a malformed call")
            tools = await client.list_tools()
            expect_eq(len(tools.tools), len(EXPECTED_SCHEMAS), "still serving")
            applied = await call(client, "resolve", {"action": "apply", "reason": "Properly now."})
            expect_eq(text(applied), "Applied edit to a.txt.", "apply after the errors")


def numbered(count: int, marked: tuple[int, ...] = ()) -> str:
    return "".join(f"{n}!\n" if n in marked else f"{n}\n" for n in range(1, count + 1))


async def check_a_persons_decision_in_another_process_is_told_once_to_the_staging_connection(
    mode: str,
) -> None:
    with Workspace({"a.txt": numbered(20), "b.txt": "b\n"}) as workspace:
        async with connect(workspace, mode) as first, connect(workspace, mode) as second:
            staged = await call(first, "write", {"path": "a.txt", "content": numbered(20, (2, 19))})
            pending_id = details(staged)["pendingId"]
            shown = workspace.cli("show", pending_id)
            expect("@@ -16,5 +16,5 @@ a.txt#2" in shown.stdout, shown.stdout)
            # A person, in a terminal: everything but the second hunk.
            cli = workspace.cli("apply", "--reason", "Only line 2.", "--except", "a.txt#2")
            expect_eq(cli.returncode, 0, f"resolve apply exit code (stderr: {cli.stderr})")
            expect("Applied 1 of 2 hunks in a.txt; dropped a.txt#2." in cli.stdout, cli.stdout)
            expect_eq(workspace.read_file("a.txt"), numbered(20, (2,)), "the first hunk landed")

            other = await call(second, "read", {"path": "b.txt"})
            expect("A reviewer" not in text(other), f"another connection is not told: {text(other)!r}")
            told = await call(first, "read", {"path": "b.txt"})
            note = (
                "<system-reminder>\n"
                f"A reviewer resolved {pending_id} (Write: a.txt): applied a.txt#1; rejected a.txt#2 (no reason given).\n"
                'Reason: "Only line 2."\n'
                "</system-reminder>"
            )
            again = await call(first, "read", {"path": "b.txt"})
            expect("A reviewer" not in text(again), f"told once: {text(again)!r}")
            expect_eq(text(told), text(again) + "\n\n" + note, "the next result carries the note")

            # An amendment, then a discard, by the person; told together at the next result.
            staged = await call(first, "edit", {"path": "b.txt", "old_text": "b", "new_text": "B"})
            pending_id = details(staged)["pendingId"]
            workspace.write_file("reviewer.txt", "bee\n")
            amended = workspace.cli("amend", "--from", str(workspace.root / "reviewer.txt"))
            expect_eq(amended.returncode, 0, f"resolve amend exit code (stderr: {amended.stderr})")
            discarded = workspace.cli("discard", "--reason", "Not yet.")
            expect_eq(discarded.returncode, 0, f"resolve discard (stderr: {discarded.stderr})")
            told = text(await call(first, "ls", {}))
            expect(f"A reviewer discarded {pending_id} (Edit: b.txt); nothing was written." in told, told)
            expect("-B\n+bee\n" in told, f"the amendment's diff: {told!r}")
            expect('Reason: "Not yet."' in told, told)
            expect("A reviewer" not in text(await call(first, "ls", {})), "told once")
            expect("A reviewer" not in text(await call(second, "ls", {})), "never to the other")


async def check_the_model_applies_hunks_with_extra_only(mode: str) -> None:
    with Workspace({"a.txt": numbered(20)}) as workspace:
        async with connect(workspace, mode) as client:
            await call(client, "write", {"path": "a.txt", "content": numbered(20, (2, 19))})
            applied = await call(
                client, "resolve", {"action": "apply", "reason": "Line 19 only.", "extra": {"only": ["a.txt#2"]}}
            )
            expect_eq(applied.is_error, False, text(applied))
            expect("Applied 1 of 2 hunks in a.txt; dropped a.txt#1." in text(applied), text(applied))
            expect("A reviewer" not in text(applied), "the model is not told about its own decision")
            expect_eq(workspace.read_file("a.txt"), numbered(20, (19,)), "hunk 2 landed")


CHECKS = [
    check_tools_are_listed_with_literal_schemas_and_annotations,
    check_every_result_reminds_while_pending_then_apply_lands,
    check_discard_drops_the_preview,
    check_stale_preview_is_an_error_result,
    check_stacked_previews_resolve_head_first,
    check_two_connections_cannot_resolve_each_others_previews,
    check_preview_applied_from_the_cli_is_gone_from_the_connection,
    check_resources_list_and_read_previews_and_history,
    check_list_changed_is_notified,
    check_malformed_arguments_are_error_results_and_the_server_keeps_serving,
    check_a_persons_decision_in_another_process_is_told_once_to_the_staging_connection,
    check_the_model_applies_hunks_with_extra_only,
]


if __name__ == "__main__":
    harness.run(CHECKS, __doc__)
