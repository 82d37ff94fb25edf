"""Recorded traffic: import an OpenAI request and its reply, store them, re-send them as Anthropic.

A recorded exchange (`recorded/openai_exchange.json`: the request body and the response
body) becomes canonical messages — tool ids mapped to canonical `tu_` ids, the reply
priced locally — then the same history is rendered as an Anthropic request body, with
the tool call and its result carried over under Anthropic's id rules.
Run: `python examples/import_and_convert.py`. The CLI does the same with
`metis import --from openai FILE` and `metis convert --from openai --to anthropic FILE`.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import metis
from metis.assembly import RequestContext

HERE = Path(__file__).resolve().parent


def main() -> None:
    recorded = json.loads((HERE / "recorded" / "openai_exchange.json").read_text(encoding="utf-8"))
    session_id = metis.new_session_id()
    tool_ids = metis.ToolIdMap(session_id)
    openai = metis.adapters.get("openai")
    request = openai.from_wire_request(recorded["request"], session_id=session_id, tool_ids=tool_ids)
    context = RequestContext(session_id=session_id, model=request.options.model, tool_ids=tool_ids)
    reply = openai.from_wire_response(recorded["response"], context)
    history = [*request.messages, reply]

    with metis.Store.open(":memory:") as store:
        store.create_session(".", active_model=request.options.model, session_id=session_id)
        store.append_many(history, tool_ids=tool_ids)
        for message in store.load_session(session_id):
            print(f"{message.role.value:9} {[block.type for block in message.content]}")
    print("reply cost:", reply.metadata.usage.cost_usd, reply.metadata.usage.pricing_version)

    options = dataclasses.replace(request.options, model="anthropic:claude-sonnet-4-6", tool_ids=tool_ids)
    body = metis.adapters.get("anthropic").to_wire(history, request.tools, options)
    print(json.dumps(body["messages"][1]["content"][0]))  # the tool call, under the id Anthropic is sent


if __name__ == "__main__":
    main()
