"""An agent tool loop with a mid-session swap, offline on recorded replies.

The loop sends, runs every tool the model asks for, answers with the results and sends
again until the model stops asking. Then the session moves from Anthropic to OpenAI
mid-conversation: the same canonical history and tool ids, sent in OpenAI's shape.

Run it from anywhere: `python examples/agent_tool_loop.py`. With API keys in the
environment, `metis.Client()` instead of the recorded transport talks to the providers.
"""

from __future__ import annotations

from pathlib import Path

import metis
from metis.client import ReplayTransport

HERE = Path(__file__).resolve().parent
FILES = {"README.md": "# metis\nCanonical LLM conversations.", "LICENSE": "Apache License 2.0"}

read_file = metis.ToolDefinition(
    name="read_file",
    description="Read a file from the workspace",
    side_effects="read",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def run_tools(session: metis.Session, reply: metis.Message) -> bool:
    """Answer every tool call of `reply`; False when it made none (the turn is over)."""
    calls = [block for block in reply.content if block.type == "tool_use"]
    for call in calls:
        text = FILES.get(call.input["path"])
        session.add_tool_result(call.id, text or "no such file", is_error=text is None)
    return bool(calls)


def main() -> None:
    recorded = ReplayTransport.from_file(HERE / "recorded" / "tool_loop.json")
    keys = {"anthropic": "recorded", "openai": "recorded"}
    with metis.Client(metis.Store.open(":memory:"), transport=recorded.transport(), api_keys=keys) as client:
        session = client.session("sonnet", tools=[read_file])
        reply = session.send("Summarize README.md (use the read_file tool).")
        while run_tools(session, reply):
            reply = session.send(stream=True)  # continue after the tool results
        print(f"[{reply.metadata.model}]", reply.content[0].text)

        session.swap("gpt-4o")  # CapabilityError, before any request, if gpt-4o could not carry it
        reply = session.send("And what does the LICENSE say?")
        usage = reply.metadata.usage
        print(
            f"[{reply.metadata.model}]",
            reply.content[0].text,
            f"(${usage.cost_usd}, {usage.pricing_version})",
        )


if __name__ == "__main__":
    main()
