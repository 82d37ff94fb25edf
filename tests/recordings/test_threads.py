"""`Threads`: which stored session an imported exchange belongs to, keyed without going over
a growing session again (each import appends one exchange to it)."""

from __future__ import annotations

import pytest
from metis import fingerprint
from metis.fingerprint import prefix_keys
from metis.recordings.threads import Threads

from tests.support.messages import build_message

SID = "sess_threads"


def _conversation(turns: int, topic: str = "question") -> list:
    out = []
    for i in range(turns):
        out.append(build_message("user", [{"type": "text", "text": f"{topic} {i}"}], session_id=SID))
        out.append(build_message("assistant", [{"type": "text", "text": f"answer {i}"}], session_id=SID))
    return out


def test_a_growing_session_is_keyed_from_its_new_messages_only(monkeypatch: pytest.MonkeyPatch) -> None:
    messages = _conversation(4)
    calls = 0
    real = fingerprint._fingerprint

    def counted(message, ordinals):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return real(message, ordinals)

    threads = Threads()
    monkeypatch.setattr(fingerprint, "_fingerprint", counted)
    for end in (2, 4, 6, 8):  # the import appends one exchange at a time
        threads.add(SID, messages[:end])
    assert calls == 8  # each message once (re-keying the whole session each time: 2+4+6+8 = 20)
    monkeypatch.undo()
    keys = prefix_keys(messages)
    assert threads.place(messages).kind == "duplicate"
    assert threads.place([*messages, *_conversation(1)]).kind == "append"
    assert keys[-1] in threads._tips  # the whole conversation's tip, as keyed from scratch


def test_a_session_recorded_anew_is_keyed_anew() -> None:
    first, other = _conversation(2), _conversation(2, "another question")
    threads = Threads()
    threads.add(SID, first)
    threads.add(SID, other)  # not a continuation of what was recorded: keyed from scratch
    assert threads.place(other).kind == "duplicate"
    assert prefix_keys(other)[-1] in threads._tips and prefix_keys(first)[-1] not in threads._tips
