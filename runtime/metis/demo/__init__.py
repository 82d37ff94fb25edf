"""The main job, offline: one session across two providers, with a swap and a refused swap.

`run_demo` drives the real client (adapters, httpx, streaming assembly, the SQLite
store) against recorded provider exchanges shipped beside this file as JSON, served by
an `httpx.MockTransport`; no key and no network. The script: Claude Sonnet calls a tool
and answers after its result (streamed), looks at an image, then `/model openai:gpt-5` moves
the session to OpenAI, which calls a tool and answers (streamed) with every tool id
mapped to OpenAI's, and a swap to a text-only model is refused because of the image.
Each recording states what the request must contain (e.g. the provider's own tool id),
so the demo fails loudly if the client sends the wrong thing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from metis_schema.v3 import Message, SideEffects, TextBlock, ToolDefinition, ToolUseBlock

from ..client import CheckpointPolicy, Client, ReplayTransport, Session
from ..errors import CapabilityError, ClientError
from ..protocols import SessionStore

DATA = Path(__file__).resolve().parent
PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
READ_FILE = ToolDefinition(
    name="read_file",
    description="Read a UTF-8 text file from the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    side_effects=SideEffects.read,
)
FILES = {
    "README.md": "# metis\n\nOne canonical, hashable format for LLM conversations, translated to and from "
    "Anthropic, OpenAI, Gemini, Ollama and OpenRouter, stored in SQLite.",
    "LICENSE": "Apache License, Version 2.0, January 2004 ...",
}
SWAP_MODEL = "openai:gpt-5"
REFUSED_MODEL = "ollama:llama-3.3-70b"


@dataclass
class DemoResult:
    """What the demo did: the session, the models it moved between, the refusal it met."""

    session_id: str
    swapped_to: str
    refused_model: str
    refusal: str
    active_model: str
    requests: int
    transcript: list[str] = field(default_factory=list)


def recorded_exchanges() -> ReplayTransport:
    """The shipped recordings, in order (`NN-*.json` beside this module)."""
    files = sorted(DATA.glob("[0-9][0-9]-*.json"))
    if not files:
        raise ClientError(f"no demo recordings in {DATA}", hint="reinstall metis (package data demo/*.json)")
    return ReplayTransport.from_data(
        [json.loads(p.read_text(encoding="utf-8")) for p in files], source=str(DATA)
    )


def _describe(message: Message, session: Session) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            provider = message.metadata.provider or ""
            wire_id = session.tool_ids.provider_id(block.id, provider)
            parts.append(f"→ {block.name}({json.dumps(block.input)}) [{block.id} ↔ {provider} {wire_id}]")
    usage = message.metadata.usage
    cost = f" · ${usage.cost_usd}" if usage else ""
    return f"[{message.metadata.model}{cost}] " + " ".join(parts)


def _run_tool(session: Session, reply: Message, say: Callable[[str], None]) -> None:
    for block in reply.content:
        if isinstance(block, ToolUseBlock):
            text = FILES.get(str(block.input.get("path")), "no such file")
            session.add_tool_result(block.id, text, is_error=text == "no such file")
            say(f"[tool {block.name}] {text.splitlines()[0]}")


def _tool_turn(session: Session, prompt: str, say: Callable[[str], None]) -> None:
    """`prompt`, the tool call it gets answered, and the streamed reply that follows."""
    say(f"[user] {prompt}")
    reply = session.send(prompt)
    say(_describe(reply, session))
    _run_tool(session, reply, say)
    reply = session.send(stream=True)
    say(_describe(reply, session) + " (streamed)")


def run_demo(
    store: SessionStore, *, workspace: Path | None = None, say: Callable[[str], None] = print
) -> DemoResult:
    """Build the demo session in `store` (see module docstring) and return what happened."""
    replay = recorded_exchanges()
    lines: list[str] = []

    def note(text: str) -> None:
        lines.append(text)
        say(text)

    checkpoints = CheckpointPolicy(events=2, seconds=0.25)
    keys: dict[str, str | None] = {"anthropic": "demo-key", "openai": "demo-key"}
    with Client(
        store, transport=replay.transport(), api_keys=keys, max_retries=0, checkpoints=checkpoints
    ) as client:
        prompt = "Summarize README.md (use the read_file tool)."
        session = client.session(
            "sonnet", workspace=workspace, tools=[READ_FILE], title=prompt, source="demo"
        )
        note(f"session {session.id} on {session.active_model}")

        _tool_turn(session, prompt, note)

        image = {"type": "image", "source": {"kind": "base64", "data": PIXEL_PNG}, "media_type": "image/png"}
        note("[user] <image/png> What does this diagram show?")
        reply = session.send([image, {"type": "text", "text": "What does this diagram show?"}])
        note(_describe(reply, session))

        swapped = session.swap(SWAP_MODEL)
        note(f"/model {SWAP_MODEL} → swapped to {swapped}")
        prompt = "And what does the LICENSE say?"
        _tool_turn(session, prompt, note)

        try:
            session.swap(REFUSED_MODEL)
        except CapabilityError as exc:
            refusal = exc.message
        else:
            raise ClientError(f"the swap to {REFUSED_MODEL} should have been refused")
        note(f"/model {REFUSED_MODEL} → refused: {refusal}")
        note(f"active model unchanged: {session.active_model}")
    if replay.remaining:
        raise ClientError(f"{replay.remaining} recorded exchange(s) were not used")
    return DemoResult(
        session_id=session.id,
        swapped_to=swapped,
        refused_model=REFUSED_MODEL,
        refusal=refusal,
        active_model=session.active_model,
        requests=len(replay.requests),
        transcript=lines,
    )


__all__ = ["DATA", "READ_FILE", "REFUSED_MODEL", "SWAP_MODEL", "DemoResult", "recorded_exchanges", "run_demo"]
