"""Harbor's Agent Trajectory Interchange Format (ATIF v1.0 to v1.7), checked as its reference
models check it (harbor ``models/trajectories``, RFC 0001): required fields, JSON types,
unknown fields are errors, ``step_id`` 1, 2, ... in order, agent-only fields on agent steps
only, an observation's ``source_call_id`` names a tool call of its own step.

Read from it: per step its ``timestamp``, its ``metrics`` (``prompt_tokens`` -- cached ones
included, as ATIF counts them --, ``completion_tokens``, ``cost_usd``), its tool calls and,
for agent steps, its message; of the whole: ``agent`` (name, version, model), ``session_id``,
``final_metrics`` (kept as reported) and ``extra.jaxbench`` (the portal's metadata)."""

from __future__ import annotations

from typing import Any

from .check import ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING, Checker, Spec, at
from .trajectory import ATIF, Document, ToolCall, Turn, check_declared, parse_timestamp

VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(8))  # ATIF-v1.0 .. ATIF-v1.7

S, I, N, O, A, B, Z = STRING, INTEGER, NUMBER, OBJECT, ARRAY, BOOLEAN, NULL

ROOT: Spec = {
    "schema_version": ((S,), True),
    "session_id": ((S, Z), False),  # required before v1.7, checked below
    "trajectory_id": ((S, Z), False),
    "agent": ((O,), True),
    "steps": ((A,), True),
    "notes": ((S, Z), False),
    "final_metrics": ((O, Z), False),
    "continued_trajectory_ref": ((S, Z), False),
    "extra": ((O, Z), False),
    "subagent_trajectories": ((A, Z), False),
}
AGENT: Spec = {
    "name": ((S,), True),
    "version": ((S,), True),
    "model_name": ((S, Z), False),
    "tool_definitions": ((A, Z), False),
    "extra": ((O, Z), False),
}
STEP: Spec = {
    "step_id": ((I,), True),
    "timestamp": ((S, Z), False),
    "source": ((S,), True),
    "model_name": ((S, Z), False),
    "reasoning_effort": ((S, N, Z), False),
    "message": ((S, A), True),
    "reasoning_content": ((S, Z), False),
    "tool_calls": ((A, Z), False),
    "observation": ((O, Z), False),
    "metrics": ((O, Z), False),
    "is_copied_context": ((B, Z), False),
    "llm_call_count": ((I, Z), False),
    "extra": ((O, Z), False),
}
AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
SOURCES = ("system", "user", "agent")
TOOL_CALL: Spec = {"tool_call_id": ((S,), True), "function_name": ((S,), True), "arguments": ((O,), True)}
OBSERVATION: Spec = {"results": ((A,), True)}
RESULT: Spec = {
    "source_call_id": ((S, Z), False),
    "content": ((S, A, Z), False),
    "subagent_trajectory_ref": ((A, Z), False),
}
METRICS: Spec = {
    "prompt_tokens": ((I, Z), False),
    "completion_tokens": ((I, Z), False),
    "cached_tokens": ((I, Z), False),
    "cost_usd": ((N, Z), False),
    "prompt_token_ids": ((A, Z), False),
    "completion_token_ids": ((A, Z), False),
    "logprobs": ((A, Z), False),
    "extra": ((O, Z), False),
}
FINAL_METRICS: Spec = {
    "total_prompt_tokens": ((I, Z), False),
    "total_completion_tokens": ((I, Z), False),
    "total_cached_tokens": ((I, Z), False),
    "total_cost_usd": ((N, Z), False),
    "total_steps": ((I, Z), False),
    "extra": ((O, Z), False),
}
CONTENT_PART: Spec = {"type": ((S,), True), "text": ((S, Z), False), "source": ((O, Z), False)}
NON_NEGATIVE: dict[str, float] = {
    "prompt_tokens": 0,
    "completion_tokens": 0,
    "cached_tokens": 0,
    "cost_usd": 0,
    "total_prompt_tokens": 0,
    "total_completion_tokens": 0,
    "total_cached_tokens": 0,
    "total_cost_usd": 0,
    "total_steps": 0,
    "step_id": 1,
    "llm_call_count": 0,
}


def _content_parts(value: object, path: str, check: Checker) -> str:
    """A message or result: a string, or (v1.6) an array of text/image parts; returns the text."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    texts = []
    for j, part in enumerate(value):
        p = check.obj(part, at(path, j), CONTENT_PART, forbid_extra=True, what="a content part")
        if p is None:
            continue
        if p.get("type") not in ("text", "image"):
            check.add(f"{at(path, j)}.type", f"must be 'text' or 'image', not {str(p.get('type'))[:40]!r}")
        elif p["type"] == "text" and not isinstance(p.get("text"), str):
            check.add(f"{at(path, j)}.text", "a text part needs its text")
        elif p["type"] == "text":
            texts.append(p["text"])
    return "\n".join(texts)


def read(obj: dict[str, Any], check: Checker) -> Document:
    """Check an ATIF document (already detected as one) and normalize it."""
    check.obj(obj, "", ROOT, forbid_extra=True, what="an ATIF trajectory")
    version = obj.get("schema_version")
    if isinstance(version, str) and version not in VERSIONS:
        check.add(
            "schema_version",
            f"unsupported ATIF version {version[:40]!r}; this portal reads {VERSIONS[0]} to {VERSIONS[-1]}",
        )
    if version in VERSIONS[:7] and not isinstance(obj.get("session_id"), str):
        check.add("session_id", f"missing (required in {version}; optional from ATIF-v1.7)")
    agent = check.obj(obj.get("agent"), "agent", AGENT, forbid_extra=True, what="the agent") if "agent" in obj else None
    extra: dict[str, Any] = obj["extra"] if isinstance(obj.get("extra"), dict) else {}
    declared = check_declared(extra.get("jaxbench"), "extra.jaxbench", check)
    final = obj.get("final_metrics")
    if isinstance(final, dict):
        check.obj(final, "final_metrics", FINAL_METRICS, forbid_extra=True, what="final_metrics", minimums=NON_NEGATIVE)
    turns: list[Turn] = []
    models: list[str] = []
    steps = obj.get("steps")
    if isinstance(steps, list) and not steps:
        check.add("steps", "must hold at least one step")
    for i, step in enumerate(steps if isinstance(steps, list) else []):
        if check.full:
            break
        turn = _step(step, i, check, models)
        if turn is not None:
            turns.append(turn)
    agent = agent or {}
    name: str = agent["name"] if isinstance(agent.get("name"), str) else "agent"
    agent_version: str = agent["version"] if isinstance(agent.get("version"), str) else ""
    model: str = agent["model_name"] if isinstance(agent.get("model_name"), str) else ""
    return Document(
        format=ATIF,
        version=version if isinstance(version, str) else "ATIF",
        method=name.strip()[:200] or "agent",
        model=model or (models[0] if models else ""),
        framework=f"{name} {agent_version}".strip() + f" ({version})",
        session_id=str(obj.get("session_id") or obj.get("trajectory_id") or ""),
        declared=declared,
        declared_path="extra.jaxbench",
        turns=turns,
        totals={k: v for k, v in (final or {}).items() if k != "extra" and isinstance(v, (int, float))},
    )


def _step(step: object, i: int, check: Checker, models: list[str]) -> Turn | None:
    path = at("steps", i)
    s = check.obj(step, path, STEP, forbid_extra=True, what="a step", minimums=NON_NEGATIVE)
    if s is None:
        return None
    if isinstance(s.get("step_id"), int) and not isinstance(s["step_id"], bool) and s["step_id"] != i + 1:
        check.add(f"{path}.step_id", f"expected {i + 1} (step_ids run 1, 2, ... in order), got {s['step_id']}")
    source = s.get("source")
    if isinstance(source, str) and source not in SOURCES:
        check.add(f"{path}.source", f"must be one of 'system', 'user', 'agent', not {source[:40]!r}")
    if source != "agent":
        for f in AGENT_ONLY:
            if s.get(f) is not None:
                check.add(f"{path}.{f}", f"only an agent step has {f} (this step's source is {str(source)[:20]!r})")
    if s.get("llm_call_count") == 0 and source == "agent":
        for f in ("metrics", "reasoning_content"):
            if s.get(f) is not None:
                check.add(f"{path}.{f}", "must be absent when llm_call_count is 0 (a step without an LLM call)")
    when = parse_timestamp(s["timestamp"], f"{path}.timestamp", check) if isinstance(s.get("timestamp"), str) else None
    if isinstance(s.get("model_name"), str):
        models.append(s["model_name"])
    text = _content_parts(s.get("message"), f"{path}.message", check)
    turn = Turn(path=path, ref=f"step {s.get('step_id', i + 1)}", at=when)
    if source == "agent" and text:
        turn.agent_texts.append((f"{path}.message", text))
    call_ids: set[str] = set()
    calls = s.get("tool_calls")
    for j, call in enumerate(calls if isinstance(calls, list) else []):
        cpath = at(f"{path}.tool_calls", j)
        c = check.obj(call, cpath, TOOL_CALL, forbid_extra=True, what="a tool call")
        if c is None or not all(
            isinstance(c.get(k), t) for k, t in (("tool_call_id", str), ("function_name", str), ("arguments", dict))
        ):
            continue
        if c["tool_call_id"] in call_ids:
            check.add(f"{cpath}.tool_call_id", f"duplicate tool_call_id {c['tool_call_id'][:60]!r} in this step")
        call_ids.add(c["tool_call_id"])
        turn.tool_calls.append(ToolCall(cpath, c["tool_call_id"], c["function_name"], c["arguments"]))
    obs = s.get("observation")
    if isinstance(obs, dict):
        o = check.obj(obs, f"{path}.observation", OBSERVATION, forbid_extra=True, what="an observation")
        results = o.get("results") if o else None
        for j, result in enumerate(results if isinstance(results, list) else []):
            rpath = at(f"{path}.observation.results", j)
            r = check.obj(result, rpath, RESULT, forbid_extra=True, what="an observation result")
            if r is None:
                continue
            _content_parts(r.get("content"), f"{rpath}.content", check)
            ref = r.get("source_call_id")
            if isinstance(ref, str) and ref not in call_ids:
                check.add(f"{rpath}.source_call_id", f"{ref[:60]!r} is not a tool_call_id of this step's tool_calls")
    metrics = s.get("metrics")
    if isinstance(metrics, dict):
        before = len(check.errors)
        check.obj(metrics, f"{path}.metrics", METRICS, forbid_extra=True, what="metrics", minimums=NON_NEGATIVE)
        if len(check.errors) == before:
            turn.tokens_in = metrics.get("prompt_tokens")
            turn.tokens_out = metrics.get("completion_tokens")
            turn.cost_usd = metrics.get("cost_usd")
            if isinstance(turn.tokens_in, float):
                turn.tokens_in = int(turn.tokens_in)
            if isinstance(turn.tokens_out, float):
                turn.tokens_out = int(turn.tokens_out)
    return turn
