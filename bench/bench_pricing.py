"""Pricing a 1,000-message history: a model genai-prices prices beside one only metis's
local table has (issue 26).

Two rows, each gpt-4o (genai-prices, at each reply's date) against
openrouter:deepseek/deepseek-v3 (the local table, the offline default for models
genai-prices lacks):

- importing a recorded 1,000-message OpenRouter request (its assistant turns carry no
  usage, so none of them is priced);
- pricing 1,000 replies that do carry usage, one reply an hour (42 days, so 42 price
  resolutions: a price is resolved once per model and day and reused).

`python -m bench pricing` runs these rows alone.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ._common import T0, Row, per_call

MESSAGES = 1000
GENAI_MODEL = ("openai/gpt-4o", "openrouter:openai/gpt-4o")
LOCAL_MODEL = ("deepseek/deepseek-v3", "openrouter:deepseek/deepseek-v3")
IMPORT_TARGET = "<= 1.50 (no turn without usage is priced: the source does not matter)"
PRICE_MAX_S = 0.25
PRICE_TARGET = f"<= {PRICE_MAX_S} s ({PRICE_MAX_S * 1000:.0f} us a reply; the issue measured 600)"


def _request(model: str) -> dict[str, Any]:
    """A recorded OpenRouter request of MESSAGES messages (user and assistant turns)."""
    messages: list[dict[str, Any]] = []
    for i in range(MESSAGES):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"turn {i}: " + "words " * 20})
    return {"model": model, "messages": messages}


def _import(model: str) -> Any:
    from metis import adapters
    from metis.ids import ToolIdMap, new_session_id

    adapter = adapters.get("openrouter")
    body = _request(model)

    def run() -> object:
        session_id = new_session_id()
        return adapter.from_wire_request(dict(body), session_id=session_id, tool_ids=ToolIdMap(session_id))

    return run


def _price(pricing_key: str) -> Any:
    from metis.pricing import make_usage
    from metis.usage import TokenCounts

    replies = [
        (TokenCounts(1200 + i, 150 + i % 50, 1024 if i % 3 else 0), T0 + timedelta(hours=i))
        for i in range(MESSAGES)
    ]

    def run() -> object:
        return [make_usage(c, pricing_key=pricing_key, latency_ms=0, at=at) for c, at in replies]

    return run


def _check(model: tuple[str, str]) -> str:
    from metis.pricing import make_usage
    from metis.usage import TokenCounts

    return make_usage(TokenCounts(1, 1), pricing_key=model[1], latency_ms=0, at=T0).pricing_version


def _us(seconds: float) -> str:
    return f"{seconds / MESSAGES * 1e6:.1f}"


def run() -> list[Row]:
    sources = f"{_check(GENAI_MODEL)} vs {_check(LOCAL_MODEL)}"
    imports = per_call({"genai": _import(GENAI_MODEL[0]), "local": _import(LOCAL_MODEL[0])}, repeat=5)
    priced = per_call({"genai": _price(GENAI_MODEL[1]), "local": _price(LOCAL_MODEL[1])}, repeat=5)
    rows = []
    for name, times, target, ok in (
        (
            f"import a {MESSAGES}-message OpenRouter request: gpt-4o",
            imports,
            IMPORT_TARGET,
            imports["genai"] <= 1.5 * imports["local"],
        ),
        (
            f"price {MESSAGES} replies with usage (one an hour): gpt-4o",
            priced,
            PRICE_TARGET,
            priced["genai"] <= PRICE_MAX_S,
        ),
    ):
        rows.append(
            Row(
                "pricing",
                name,
                times["genai"],
                "s",
                floor=times["local"],
                floor_name="deepseek-v3, local table",
                target=target,
                ok=ok,
                detail=f"{_us(times['genai'])} vs {_us(times['local'])} us/message; {sources}",
            )
        )
    return rows


if __name__ == "__main__":
    for row in run():
        print(f"{row.name}: {row.value:.4f} s vs {row.floor:.4f} s ({row.floor_name}); {row.detail}")
