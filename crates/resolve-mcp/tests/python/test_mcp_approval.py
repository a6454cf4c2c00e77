#!/usr/bin/env python3
"""`resolve mcp --approve ask|review`, result details and resource subscriptions, driven by
the official MCP Python SDK (PyPI `mcp`).

Usage: test_mcp_approval.py PATH_TO_RESOLVE_BINARY

Each check starts the real binary (`resolve mcp --root DIR [--approve MODE]`) in a fresh
temporary workspace and runs twice: over the `initialize` handshake (`legacy`, protocol
2025-11-25, where the server asks with `elicitation/create`) and with the SDK's default
negotiation (`auto`, 2026-07-28, where the question comes back as an input-required result
with a `requestState` the SDK retries with). Checks that only make sense on one version say so.
Prints one line per check, then `N passed, N failed`; exits 1 when any check failed.

Run by crates/resolve-cli/tests/mcp.rs.
"""

from __future__ import annotations

import asyncio
import warnings

import mcp_harness as harness
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_harness import TIMEOUT, Workspace, call, expect, expect_eq, text

EDIT = {"path": "a.txt", "old_text": "two", "new_text": "2"}
SHIP_IT = {"action": "apply", "reason": "Ship it."}


class Person:
    """An elicitation callback that answers with the next of `answers` and keeps what it was
    asked."""

    def __init__(self, *answers: types.ElicitResult | types.ErrorData) -> None:
        self.answers = list(answers)
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, _context, params: types.ElicitRequestParams):
        self.asked.append(params)
        return self.answers.pop(0)


def accept(content: dict) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def connect(
    workspace: Workspace, mode: str, approve: str, person=None, message_handler=None, extra_args=()
) -> Client:
    return harness.connect(
        workspace,
        mode,
        "--approve",
        approve,
        *extra_args,
        elicitation_callback=person,
        message_handler=message_handler,
    )


def expect_untouched_and_pending(workspace: Workspace, pending_id: str, what: str) -> None:
    expect_eq(workspace.read_file("a.txt"), "one\ntwo\n", f"{what}: nothing written")
    expect_eq(workspace.pending_ids(), [pending_id], f"{what}: the preview stays pending")


def details(result: types.CallToolResult) -> dict:
    """The facts a result carries for programs, under `_meta` (no `structuredContent`: hosts
    would show the model that JSON instead of the text)."""
    expect(result.structured_content is None, f"no structuredContent: {result.structured_content!r}")
    return result.meta["resolve/details"]


async def stage_edit(client: Client) -> str:
    staged = await call(client, "edit", EDIT)
    expect(not staged.is_error, text(staged))
    return details(staged)["pendingId"]


async def apply_ship_it(client: Client):
    """The model's apply of the head preview ("Ship it."); its result, which is no error."""
    result = await call(client, "resolve", SHIP_IT)
    expect(not result.is_error, text(result))
    return result


# --- checks -------------------------------------------------------------------------------


async def check_ask_applies_when_the_person_accepts_apply_and_records_both_reasons(mode: str) -> None:
    person = Person(accept({"decision": "apply", "reason": "Looks right."}))
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask", person) as client:
            pending_id = await stage_edit(client)
            result = await apply_ship_it(client)
            expect(
                text(result).startswith("A person approved this apply. Their reason: Looks right.\nApplied edit to a.txt."),
                text(result),
            )
            expect_eq(workspace.read_file("a.txt"), "one\n2\n", "applied")
            expect_eq(len(person.asked), 1, "asked once")
            asked = person.asked[0]
            expect_eq(asked.mode, "form", "form mode")
            for part in ["Edit: a.txt", pending_id, "staged by mcp:", "a.txt  +1 -1", "The model's reason: Ship it."]:
                expect(part in asked.message, f"the question names {part!r}: {asked.message!r}")
            schema = asked.requested_schema
            expect_eq(schema["properties"]["decision"]["enum"], ["apply", "discard"], "decision choices")
            expect("reason" in schema["properties"], f"the form asks for a reason: {schema}")
            content = details(result)
            expect_eq(
                (content["outcome"], content["decidedBy"], content["reason"], content["modelReason"], content["appliedFiles"]),
                ("applied", "person", "Looks right.", "Ship it.", ["a.txt"]),
                "details",
            )
            entry = workspace.history()[0]
            expect_eq(
                (entry["decidedBy"], entry["reason"], entry["modelReason"]),
                ("person", "Looks right.", "Ship it."),
                "history",
            )
            expect(entry["resolvedBy"].startswith("mcp:"), entry["resolvedBy"])
            log = workspace.cli("log").stdout
            expect("decided: person)  — Looks right. (model: Ship it.)" in log, log)


async def check_ask_discards_with_the_persons_reason(mode: str) -> None:
    person = Person(accept({"decision": "discard", "reason": "Wrong file."}))
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask", person) as client:
            pending_id = await stage_edit(client)
            result = await apply_ship_it(client)
            expect_eq(
                text(result),
                "Not applied: a person discarded Edit: a.txt instead. Their reason: Wrong file.",
                "result text",
            )
            expect_eq(workspace.read_file("a.txt"), "one\ntwo\n", "nothing written")
            expect_eq(workspace.pending_ids(), [], "discarded")
            content = details(result)
            expect_eq(
                (content["outcome"], content["pendingId"], content["decidedBy"], content["reason"]),
                ("discarded", pending_id, "person", "Wrong file."),
                "details",
            )
            entry = workspace.history()[0]
            expect_eq((entry["state"], entry["decidedBy"], entry["reason"]), ("discarded", "person", "Wrong file."), "history")


async def check_ask_writes_nothing_on_any_answer_but_accept_apply(mode: str) -> None:
    answers = [
        ("declined", types.ElicitResult(action="decline")),
        ("cancelled", types.ElicitResult(action="cancel")),
        ("unknown decision", accept({"decision": "yes"})),
        ("no decision", accept({"reason": "Sure."})),
        ("empty form", accept({})),
    ]
    person = Person(*(answer for _, answer in answers))
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask", person) as client:
            pending_id = await stage_edit(client)
            for what, _ in answers:
                result = await call(client, "resolve", SHIP_IT)
                expect(not result.is_error, f"{what}: {text(result)}")
                expect(text(result).startswith("Not applied: "), f"{what}: {text(result)}")
                expect("the preview stays pending" in text(result), f"{what}: {text(result)}")
                expect_eq(details(result)["outcome"], "declined", f"{what}: outcome")
                expect_eq(details(result)["decidedBy"], None, f"{what}: nobody decided")
                expect_untouched_and_pending(workspace, pending_id, what)
            expect_eq(len(person.asked), len(answers), "asked every time")
            expect_eq(workspace.history(), [], "nothing in the history")


async def check_ask_writes_nothing_when_the_client_fails_to_answer(mode: str) -> None:
    person = Person(types.ErrorData(code=-32603, message="the form could not be shown"))
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask", person) as client:
            pending_id = await stage_edit(client)
            try:
                result = await call(client, "resolve", SHIP_IT)
            except MCPError:
                # 2026-07-28: the SDK stops its retry loop at the callback's error.
                expect_eq(mode, "auto", "only the input-required driver raises")
            else:
                expect(not result.is_error and text(result).startswith("Not applied: "), text(result))
            expect_untouched_and_pending(workspace, pending_id, "client error")


async def check_ask_fails_closed_when_the_client_cannot_elicit(mode: str) -> None:
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask") as client:
            pending_id = await stage_edit(client)
            result = await apply_ship_it(client)
            expect(
                f"A person must approve it with `resolve review` or `resolve apply` in a terminal at {workspace.root}."
                in text(result),
                text(result),
            )
            expect("cannot show them the question" in text(result), text(result))
            expect_eq(details(result)["outcome"], "awaiting_person", "outcome")
            expect_untouched_and_pending(workspace, pending_id, "fail closed")
            # The model's own discard needs no approval.
            discarded = await call(client, "resolve", {"action": "discard", "reason": "Never mind."})
            expect_eq(details(discarded)["outcome"], "discarded", text(discarded))
            expect_eq(details(discarded)["decidedBy"], "model", "the model decided its discard")
            nothing = await call(client, "resolve", {"action": "discard", "reason": "Again."})
            expect_eq(details(nothing)["outcome"], "nothing_pending", text(nothing))


async def check_review_never_applies_on_the_models_word(mode: str) -> None:
    person = Person(accept({"decision": "apply"}))
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "review", person) as client:
            pending_id = await stage_edit(client)
            result = await apply_ship_it(client)
            expect("in this session a person reviews every apply" in text(result), text(result))
            expect_eq(details(result)["outcome"], "awaiting_person", "outcome")
            expect_eq(person.asked, [], "review mode asks nobody through the client")
            expect_untouched_and_pending(workspace, pending_id, "review")
            applied = workspace.cli("apply", "--reason", "Reviewed in a terminal.")
            expect_eq(applied.returncode, 0, applied.stderr)
            entry = workspace.history()[0]
            expect_eq((entry["resolvedBy"], entry["decidedBy"]), ("cli", "person"), "a person at the CLI")


async def check_request_state_is_bound_single_use_and_unforgeable(mode: str) -> None:
    """2026-07-28 only: drive the input-required rounds by hand with hostile retries."""
    if mode != "auto":
        return
    args = SHIP_IT
    apply_answer = {"approval": {"action": "accept", "content": {"decision": "apply"}}}
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask", Person()) as client:
            session = client.session
            pending_id = await stage_edit(client)

            async def ask() -> types.InputRequiredResult:
                first = await session.call_tool("resolve", args, allow_input_required=True)
                expect(isinstance(first, types.InputRequiredResult), repr(first))
                expect(first.request_state, "a requestState")
                expect_eq(list(first.input_requests), ["approval"], "one question")
                return first

            async def retry(state: str | None, responses: dict | None):
                return await session.call_tool(
                    "resolve", args, input_responses=responses, request_state=state, allow_input_required=True
                )

            # Forged: the state altered by one character.
            state = (await ask()).request_state
            forged = state[:-1] + ("A" if state[-1] != "A" else "B")
            refused = await retry(forged, apply_answer)
            expect(refused.is_error and "not issued by this server" in text(refused), text(refused))
            expect_untouched_and_pending(workspace, pending_id, "forged state")
            # Replayed: declined once, then the same state with an accept.
            state = (await ask()).request_state
            declined = await retry(state, {"approval": {"action": "decline"}})
            expect_eq(details(declined)["outcome"], "declined", text(declined))
            replayed = await retry(state, apply_answer)
            expect(replayed.is_error and "already answered" in text(replayed), text(replayed))
            expect_untouched_and_pending(workspace, pending_id, "replayed state")
            # An answer missing from the retry decides nothing, and uses the state up.
            state = (await ask()).request_state
            missing = await retry(state, None)
            expect_eq(details(missing)["outcome"], "declined", text(missing))
            expect_untouched_and_pending(workspace, pending_id, "no answer")
            # Bound to the call: a retry with other arguments (here `extra.only`) is refused.
            state = (await ask()).request_state
            altered = await session.call_tool(
                "resolve",
                {**args, "extra": {"only": ["a.txt"]}},
                input_responses=apply_answer,
                request_state=state,
                allow_input_required=True,
            )
            expect(altered.is_error and "the preview or the call changed" in text(altered), text(altered))
            expect_untouched_and_pending(workspace, pending_id, "altered call")
            # Bound to the preview: once another preview is the head, the state is refused.
            state = (await ask()).request_state
            restaged = await call(client, "write", {"path": "b.txt", "content": "b\n"})
            other = await retry(state, apply_answer)
            expect(other.is_error and "the preview or the call changed" in text(other), text(other))
            expect_eq(workspace.read_file("a.txt"), "one\ntwo\n", "nothing written for a rebound state")
            expect(not (workspace.root / "b.txt").exists(), "the new head was not applied either")
            expect_eq(
                sorted(workspace.pending_ids()),
                sorted([pending_id, details(restaged)["pendingId"]]),
                "both pending",
            )
            # No state at all is a fresh question, never an apply.
            fresh = await retry(None, apply_answer)
            expect(isinstance(fresh, types.InputRequiredResult), repr(fresh))
            expect(not (workspace.root / "b.txt").exists(), "answers without a state apply nothing")


async def check_producer_results_link_the_pending_resource_and_carry_details(mode: str) -> None:
    with Workspace({"a.txt": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"}) as workspace:
        async with connect(workspace, mode, "auto") as client:
            staged = await call(client, "edit", {"path": "a.txt", "old_text": "two", "new_text": "2"})
            links = [block for block in staged.content if block.type == "resource_link"]
            pending_id = details(staged)["pendingId"]
            expect_eq([str(link.uri) for link in links], [f"resolve://pending/{pending_id}"], "resource_link")
            expect_eq(
                details(staged)["files"],
                [{"path": "a.txt", "added": 1, "removed": 1, "hunks": ["a.txt#1"]}],
                "files",
            )
            read = (await client.read_resource(str(links[0].uri))).contents[0]
            expect("-two\n+2" in read.text, read.text)
            applied = await call(client, "resolve", {"action": "apply", "reason": "Yes."})
            expect_eq(
                (details(applied)["outcome"], details(applied)["decidedBy"]),
                ("applied", "model"),
                "auto applies on the model's word",
            )
            entry = workspace.history()[0]
            expect_eq(entry["decidedBy"], "model", "history")


async def check_a_subscribed_preview_notifies_when_it_goes_stale_and_when_it_is_resolved(mode: str) -> None:
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            await updated.put(str(message.params.uri))

    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "auto", message_handler=on_message) as client:
            pending_id = await stage_edit(client)
            uri = f"resolve://pending/{pending_id}"
            if mode == "legacy":
                with warnings.catch_warnings():
                    # resources/subscribe is the 2025-11-25 way, which this check tests.
                    warnings.simplefilter("ignore")
                    await client.subscribe_resource(uri)
                workspace.write_file("a.txt", "one\ntwo\nedited by hand\n")
                expect_eq(await asyncio.wait_for(updated.get(), TIMEOUT), uri, "stale")
                applied = workspace.cli("discard", "--reason", "Stale now.")
                expect_eq(applied.returncode, 0, applied.stderr)
                expect_eq(await asyncio.wait_for(updated.get(), TIMEOUT), uri, "discarded")
            else:
                async with client.listen(resource_subscriptions=[uri]) as subscription:
                    expect_eq(subscription.honored.resource_subscriptions, [uri], "honored")
                    workspace.write_file("a.txt", "one\ntwo\nedited by hand\n")
                    event = await asyncio.wait_for(subscription.__anext__(), TIMEOUT)
                    expect_eq(event, ResourceUpdated(uri=uri), "stale")
                    discarded = await call(client, "resolve", {"action": "discard", "reason": "Stale now."})
                    expect(not discarded.is_error, text(discarded))
                    event = await asyncio.wait_for(subscription.__anext__(), TIMEOUT)
                    expect_eq(event, ResourceUpdated(uri=uri), "discarded")


class AbsentPerson:
    """An elicitation callback that never answers in time."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, _context, params: types.ElicitRequestParams):
        self.asked += 1
        await asyncio.sleep(3 * TIMEOUT)
        return accept({"decision": "apply"})


async def check_ask_past_its_timeout_leaves_the_preview_pending_and_says_so(mode: str) -> None:
    """Issue #31 §2: `--approve-timeout`. 2025-11-25: the form is never answered; 2026-07-28:
    the answer comes back after the state expired."""
    person = AbsentPerson()
    args = SHIP_IT
    with Workspace({"a.txt": "one\ntwo\n"}) as workspace:
        async with connect(workspace, mode, "ask", person, extra_args=("--approve-timeout", "1s")) as client:
            pending_id = await stage_edit(client)
            if mode == "auto":
                session = client.session
                first = await session.call_tool("resolve", args, allow_input_required=True)
                expect(isinstance(first, types.InputRequiredResult), repr(first))
                await asyncio.sleep(1.5)
                result = await session.call_tool(
                    "resolve",
                    args,
                    input_responses={"approval": {"action": "accept", "content": {"decision": "apply"}}},
                    request_state=first.request_state,
                    allow_input_required=True,
                )
            else:
                result = await call(client, "resolve", args)
                expect_eq(person.asked, 1, "the person was asked")
            expect(not result.is_error, text(result))
            expect(text(result).startswith("Not applied: no decision came in time"), text(result))
            expect("1s" in text(result), text(result))
            expect_eq(details(result)["outcome"], "awaiting_person", text(result))
            expect_untouched_and_pending(workspace, pending_id, "no decision in time")


CHECKS = [
    check_ask_applies_when_the_person_accepts_apply_and_records_both_reasons,
    check_ask_discards_with_the_persons_reason,
    check_ask_writes_nothing_on_any_answer_but_accept_apply,
    check_ask_writes_nothing_when_the_client_fails_to_answer,
    check_ask_fails_closed_when_the_client_cannot_elicit,
    check_review_never_applies_on_the_models_word,
    check_request_state_is_bound_single_use_and_unforgeable,
    check_producer_results_link_the_pending_resource_and_carry_details,
    check_a_subscribed_preview_notifies_when_it_goes_stale_and_when_it_is_resolved,
    check_ask_past_its_timeout_leaves_the_preview_pending_and_says_so,
]


if __name__ == "__main__":
    harness.run(CHECKS, __doc__)
