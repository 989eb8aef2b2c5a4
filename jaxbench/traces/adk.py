"""Google ADK sessions (``google.adk.sessions.Session`` with its ``google.adk.events.Event``s, as
``Session.model_dump_json()`` writes them, snake_case, or by alias, camelCase: both read).

Checked as the models check it: a session has ``id``, ``app_name``, ``user_id`` (strings),
``state`` (an object) and ``events`` (an array); an event has an ``author`` and, where given, a
``timestamp`` in seconds since 1970, ``content`` {``role``, ``parts``}, parts whose
``function_call`` has a ``name`` and object ``args``, and ``usage_metadata`` token counts
(integers >= 0). ADK's documents carry no schema version and its models gain fields between
releases, so fields this module does not read are left alone (not errors); those it reads
must have their published type.

Read from it: per event its time, ``usage_metadata`` (``prompt_token_count``;
``candidates_token_count`` + ``thoughts_token_count`` as output tokens) and, as ADK records no
price, an optional ``custom_metadata.cost_usd``; the ``function_call`` parts and non-thought
text parts of every event not authored by ``"user"``; ``state.jaxbench`` (the portal's
metadata); the model from the events' ``model_version``. Partial (streamed) events are skipped:
their final event repeats them."""

from __future__ import annotations

import re
from typing import Any

from .check import ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING, Checker, Spec, at
from .trajectory import ADK, Document, ToolCall, Turn, check_declared, epoch_timestamp

S, I, N, O, A, B, Z = STRING, INTEGER, NUMBER, OBJECT, ARRAY, BOOLEAN, NULL

SESSION: Spec = {
    "id": ((S,), True),
    "app_name": ((S,), True),
    "user_id": ((S,), True),
    "state": ((O,), False),
    "events": ((A,), True),
    "last_update_time": ((N,), False),
}
EVENT: Spec = {
    "id": ((S,), False),
    "invocation_id": ((S, Z), False),
    "author": ((S,), True),
    "timestamp": ((N,), False),
    "content": ((O, Z), False),
    "usage_metadata": ((O, Z), False),
    "custom_metadata": ((O, Z), False),
    "partial": ((B, Z), False),
    "turn_complete": ((B, Z), False),
    "branch": ((S, Z), False),
    "actions": ((O, Z), False),
    "long_running_tool_ids": ((A, Z), False),
    "model_version": ((S, Z), False),
    "error_code": ((S, Z), False),
    "error_message": ((S, Z), False),
}
CONTENT: Spec = {"role": ((S, Z), False), "parts": ((A, Z), False)}
PART: Spec = {
    "text": ((S, Z), False),
    "thought": ((B, Z), False),
    "function_call": ((O, Z), False),
    "function_response": ((O, Z), False),
}
FUNCTION_CALL: Spec = {"id": ((S, Z), False), "name": ((S,), True), "args": ((O, Z), False)}
FUNCTION_RESPONSE: Spec = {"id": ((S, Z), False), "name": ((S, Z), False), "response": ((O, Z), False)}
USAGE: Spec = {
    "prompt_token_count": ((I, Z), False),
    "candidates_token_count": ((I, Z), False),
    "total_token_count": ((I, Z), False),
    "cached_content_token_count": ((I, Z), False),
    "thoughts_token_count": ((I, Z), False),
    "tool_use_prompt_token_count": ((I, Z), False),
}
COUNTS = {name: 0.0 for name in USAGE}
COST: Spec = {"cost_usd": ((N, Z), False)}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def snake_keys(value: object) -> object:
    """The same object with camelCase keys (ADK's aliases) as snake_case, recursively, except
    inside free-form objects (``state``, ``args``, ``response``, ``custom_metadata``)."""
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = _snake(key) if isinstance(key, str) else key
        if name in out:  # both spellings: snake_case wins
            if key != name:
                continue
        free = name in ("state", "args", "response", "custom_metadata", "actions")
        out[name] = v if free else snake_keys(v)
    return out


def read(obj: dict[str, Any], check: Checker) -> Document:
    """Check an ADK session (already detected as one) and normalize it."""
    session = snake_keys(obj)
    assert isinstance(session, dict)
    check.obj(session, "", SESSION, forbid_extra=False, what="an ADK session")
    state: dict[str, Any] = session["state"] if isinstance(session.get("state"), dict) else {}
    declared = check_declared(state.get("jaxbench"), "state.jaxbench", check)
    events: list[Any] = session["events"] if isinstance(session.get("events"), list) else []
    if not events:
        check.add("events", "the session has no events")
    turns: list[Turn] = []
    models: list[str] = []
    for i, event in enumerate(events):
        if check.full:
            break
        turn = _event(event, i, check, models)
        if turn is not None:
            turns.append(turn)
    app = session["app_name"] if isinstance(session.get("app_name"), str) else "adk-app"
    sid = session["id"] if isinstance(session.get("id"), str) else ""
    return Document(
        format=ADK,
        version="ADK session",
        method=app.strip()[:200] or "adk-app",
        model=models[0] if models else "",
        framework=f"Google ADK, app {app}",
        session_id=sid,
        declared=declared,
        declared_path="state.jaxbench",
        turns=turns,
        totals={},
    )


def _event(event: object, i: int, check: Checker, models: list[str]) -> Turn | None:
    path = at("events", i)
    e = check.obj(event, path, EVENT, forbid_extra=False, what="an event")
    if e is None:
        return None
    when = None
    ts = e.get("timestamp")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        when = epoch_timestamp(ts, f"{path}.timestamp", check)
    turn = Turn(path=path, ref=f"event {str(e.get('id') or i)[:60]}", at=when)
    if isinstance(e.get("model_version"), str):
        models.append(e["model_version"])
    author = e.get("author")
    content = e.get("content")
    c = (
        check.obj(content, f"{path}.content", CONTENT, forbid_extra=False, what="content")
        if isinstance(content, dict)
        else None
    )
    from_agent = isinstance(author, str) and author != "user" and (c or {}).get("role") != "user"
    parts = (c or {}).get("parts")
    for j, part in enumerate(parts if isinstance(parts, list) else []):
        ppath = at(f"{path}.content.parts", j)
        p = check.obj(part, ppath, PART, forbid_extra=False, what="a part")
        if p is None:
            continue
        call = p.get("function_call")
        if isinstance(call, dict):
            fc = check.obj(call, f"{ppath}.function_call", FUNCTION_CALL, forbid_extra=False, what="a function call")
            if fc is not None and isinstance(fc.get("name"), str) and from_agent:
                args: dict[str, Any] = fc["args"] if isinstance(fc.get("args"), dict) else {}
                turn.tool_calls.append(ToolCall(f"{ppath}.function_call", fc.get("id"), fc["name"], args))
        response = p.get("function_response")
        if isinstance(response, dict):
            check.obj(
                response,
                f"{ppath}.function_response",
                FUNCTION_RESPONSE,
                forbid_extra=False,
                what="a function response",
            )
        if from_agent and isinstance(p.get("text"), str) and not p.get("thought"):
            turn.agent_texts.append((f"{ppath}.text", p["text"]))
    usage = e.get("usage_metadata")
    if isinstance(usage, dict):
        u_before = len(check.errors)
        check.obj(usage, f"{path}.usage_metadata", USAGE, forbid_extra=False, what="usage_metadata", minimums=COUNTS)
        if len(check.errors) == u_before:
            prompt = usage.get("prompt_token_count")
            out = [usage.get(k) for k in ("candidates_token_count", "thoughts_token_count")]
            turn.tokens_in = None if prompt is None else int(prompt)
            turn.tokens_out = None if all(v is None for v in out) else int(sum(v or 0 for v in out))
    custom = e.get("custom_metadata")
    if isinstance(custom, dict) and "cost_usd" in custom:
        c_before = len(check.errors)
        check.obj(
            custom,
            f"{path}.custom_metadata",
            COST,
            forbid_extra=False,
            what="custom_metadata",
            minimums={"cost_usd": 0.0},
        )
        if len(check.errors) == c_before and custom.get("cost_usd") is not None:
            turn.cost_usd = float(custom["cost_usd"])
    if e.get("partial"):  # a streamed chunk: its final event repeats it
        return None
    return turn
