"""Stream framing times (issue 17, item 1), for each framer and through each adapter's
stream decoder: one 2 MiB event delivered in 1 KiB pieces and in one piece, and (framers)
a 2.9 MB body of 150,000 small events in one piece. Gemini streams of 5,000 and 20,000
small text parts (JSON array and SSE, in one piece) show whether the decoder is linear in
the parts (issue 29, item 12: summing the text so far for each part made it quadratic; 4x
the parts took 11-13x the time): linear, the second row is about four times the first.

Both were quadratic in places before the framers kept an unfinished event as pieces and
scanned each piece once. `python -m bench.bench_framing` times this tree;
`--before REV` also times git revision REV (e.g. `fbaa760^`, the last before the fix),
exported to a temporary directory and run in a child process, so the before and after
come from one run on one machine. `python -m bench framing` reports this tree's rows in
the benchmark table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from ._common import Row

ROOT = Path(__file__).resolve().parent.parent
BIG = "x" * (2 * 1024 * 1024)
_PAYLOAD = b'{"a": "' + BIG.encode() + b'"}'
FRAMER_BODIES: dict[str, tuple[str, bytes]] = {
    "sse": ("SSEFramer", b"data: " + _PAYLOAD + b"\n\n"),
    "ndjson": ("NDJSONFramer", _PAYLOAD + b"\n"),
    "json-array": ("JSONArrayFramer", b"[" + _PAYLOAD + b"]"),
}
_SMALL = b"".join(b'data: {"i":%d}\n\n' % i for i in range(150_000))


def _sse(*events: tuple[str | None, dict[str, Any]]) -> bytes:
    return b"".join(
        (f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(data).encode() + b"\n\n"
        for name, data in events
    )


def _chat_chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-5",
        "choices": [choice],
    }


def _gemini_chunks() -> list[dict[str, Any]]:
    def part(text: str) -> dict[str, Any]:
        return {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}

    usage = {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8}
    return [
        {"candidates": [part(BIG)], "modelVersion": "gemini-2.5-flash"},
        {"candidates": [{**part("."), "finishReason": "STOP"}], "usageMetadata": usage},
    ]


def _decoder_bodies() -> dict[str, tuple[str, str, bytes]]:
    """(provider, model, body) per stream shape: one 2 MiB text delta, then the end."""
    start: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    anthropic = _sse(
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": BIG}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    chat = (
        _sse(
            (None, _chat_chunk({"role": "assistant", "content": BIG}, None)),
            (None, _chat_chunk({}, "stop")),
            (None, {**_chat_chunk({}, None), "choices": [], "usage": usage}),
        )
        + b"data: [DONE]\n\n"
    )
    line = {"model": "qwen3:8b", "created_at": "2026-01-01T00:00:00Z", "message": {"role": "assistant"}}
    ollama = (
        json.dumps({**line, "message": {"role": "assistant", "content": BIG}, "done": False})
        + "\n"
        + json.dumps({**line, "done": True, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 5})
        + "\n"
    ).encode()
    gemini = _gemini_chunks()
    return {
        "anthropic": ("anthropic", "anthropic:claude-sonnet-4-6", anthropic),
        "openai (chat)": ("openai", "openai:gpt-5", chat),
        "openrouter": ("openrouter", "openrouter:anthropic/claude-sonnet-4.6", chat),
        "gemini (sse)": ("gemini", "gemini:gemini-2.5-flash", _sse(*((None, c) for c in gemini))),
        "gemini (array)": ("gemini", "gemini:gemini-2.5-flash", json.dumps(gemini).encode()),
        "ollama": ("ollama", "ollama:qwen3-8b", ollama),
    }


GEMINI_PARTS = (5_000, 20_000)


def gemini_parts_body(parts: int, *, sse: bool) -> bytes:
    """A Gemini stream of `parts` chunks of one short text part each, then the finish."""
    usage = {"promptTokenCount": 3, "candidatesTokenCount": parts, "totalTokenCount": parts + 3}
    chunks: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": f"word {i} "}]}, "index": 0}]}
        for i in range(parts)
    ]
    chunks.append(
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "."}]}, "finishReason": "STOP"}],
            "usageMetadata": usage,
        }
    )
    return _sse(*((None, c) for c in chunks)) if sse else json.dumps(chunks).encode()


def _seconds(framer: Any, body: bytes, piece: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(body), piece):
        framer.feed(body[i : i + piece])
    framer.close()
    return time.perf_counter() - started


def measure() -> dict[str, float | None]:
    """Seconds per measurement of the metis on the path (None: that tree has no such
    adapter). Keys: `<framer|adapter>|<1 KiB pieces|one piece|150,000 events>`."""
    from metis import adapters
    from metis.adapters._kit import framing
    from metis.assembly import RequestContext
    from metis.ids import ToolIdMap

    out: dict[str, float | None] = {}
    for name, (cls, body) in FRAMER_BODIES.items():
        kind = getattr(framing, cls)
        out[f"framer {name}|1 KiB pieces"] = _seconds(kind(), body, 1024)
        out[f"framer {name}|one piece"] = _seconds(kind(), body, len(body))
    out["framer sse|150,000 events"] = _seconds(framing.SSEFramer(), _SMALL, len(_SMALL))
    for name, (provider, model, body) in _decoder_bodies().items():
        for label, piece in (("1 KiB pieces", 1024), ("one piece", len(body))):
            try:
                adapter = adapters.get(provider)
            except Exception:  # an older tree without this adapter
                out[f"{name}|{label}"] = None
                continue
            context = RequestContext(session_id="s", model=model, tool_ids=ToolIdMap("s"))
            out[f"{name}|{label}"] = _seconds(adapter.stream_decoder(context), body, piece)
    gemini = adapters.get("gemini")
    for sse in (False, True):
        for parts in GEMINI_PARTS:
            body = gemini_parts_body(parts, sse=sse)
            context = RequestContext(session_id="s", model="gemini:gemini-2.5-flash", tool_ids=ToolIdMap("s"))
            key = f"gemini ({'sse' if sse else 'array'})|{parts:,} parts in one piece"
            out[key] = _seconds(gemini.stream_decoder(context), body, len(body))
    return out


def _before(rev: str) -> dict[str, float | None]:
    """`measure()` of revision `rev`: its runtime exported beside this bench, in a child."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "runtime", "generated"], capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory() as tree:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        path = os.pathsep.join([f"{tree}/runtime", f"{tree}/generated", str(ROOT)])
        done = subprocess.run(
            [sys.executable, "-m", "bench.bench_framing", "--json"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": path},
            cwd=tree,
        )
    result: dict[str, float | None] = json.loads(done.stdout)
    return result


def run() -> list[Row]:
    return [
        Row(
            "framing",
            key.replace("|", ", ")
            if "parts" in key
            else key.replace("|", ", 2 MiB event in ").replace("in 150,000", "150,000"),
            seconds,
            "s",
        )
        for key, seconds in measure().items()
        if seconds is not None
    ]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", metavar="REV", help="also time git revision REV (run in a child)")
    parser.add_argument("--json", action="store_true", help="print this tree's times as JSON")
    args = parser.parse_args(argv)
    now = measure()
    if args.json:
        print(json.dumps(now))
        return
    then = _before(args.before) if args.before else {}
    for key, seconds in now.items():
        what, how = key.split("|")
        event = how if how.startswith("150") or "parts" in how else f"2 MiB event in {how}"
        text = f"{what:17s} {event:29s} {seconds:8.3f} s"
        if args.before:
            was = then.get(key)
            text += f"   before ({args.before}) " + ("     n/a" if was is None else f"{was:8.3f} s")
        print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
