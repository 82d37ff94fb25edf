"""Routing provenance and the capability check that guards a model swap (spec §4.3, §7.2, §8.4).

Two jobs, both about "why is this model answering, and can it?":

- The routing engine decides with a fine-grained chain policy; each assistant message
  persists only a coarse `RoutingMode`. `CHAIN_TO_MODE` is that projection, as one table
  (spec §4.3). `decision_record` builds the compact record *and* emits `route.decided`
  carrying the full chain detail, so nothing the projection drops is lost.
- Before a swap, `check_swap` asks the catalog whether the target model can carry the
  session (spec §7.2 capabilities are the substitutability boundary). A refusal is a
  CapabilityError whose message is what the user sees (spec §8.4), plus a
  `routing_constraint_failure` event; the active model stays as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from metis_schema.v3 import (
    AdapterCapabilities,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Role,
    RoutingDecisionRecord,
    RoutingMode,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)
from pydantic import ValidationError

from .canonical import canonical_json
from .catalog import Catalog, load_catalog
from .errors import CapabilityError, DocumentError, UnknownAdapterError
from .events import EventSink, emit
from .validation import pydantic_problems


class ChainPolicy(StrEnum):
    """The routing engine's chain of policies, in precedence order (routing-engine §4.1)."""

    PER_MESSAGE_OVERRIDE = "per_message_override"
    MANUAL_STICKY = "manual_sticky"
    RULE = "rule"
    PATTERN = "pattern"
    DELEGATE_REQUEST = "delegate_request"
    WORKSPACE_DEFAULT = "workspace_default"
    GLOBAL_DEFAULT = "global_default"


CHAIN_TO_MODE: Mapping[ChainPolicy, RoutingMode] = MappingProxyType(
    {
        ChainPolicy.PER_MESSAGE_OVERRIDE: RoutingMode.override,
        ChainPolicy.MANUAL_STICKY: RoutingMode.manual,
        ChainPolicy.RULE: RoutingMode.rule,
        ChainPolicy.PATTERN: RoutingMode.pattern,
        ChainPolicy.DELEGATE_REQUEST: RoutingMode.delegate,
        ChainPolicy.WORKSPACE_DEFAULT: RoutingMode.default,
        ChainPolicy.GLOBAL_DEFAULT: RoutingMode.default,
    }
)
"""Spec §4.3's projection: both default levels collapse to DEFAULT (the event keeps which)."""


def decision_record(
    policy: ChainPolicy,
    model: str,
    reason: str,
    *,
    rule_name: str | None = None,
    confidence: float | None = None,
    alternatives: Sequence[str] = (),
    catalog: Catalog | None = None,
    events: EventSink | None = None,
) -> RoutingDecisionRecord:
    """The record to store on the assistant message, plus a `route.decided` event.

    `model` may be an alias; the record holds the canonical id (it echoes metadata.model).
    """
    catalog = catalog or load_catalog()
    chosen = catalog.resolve(model).id
    considered = [catalog.resolve(name).id for name in alternatives]
    try:
        record = RoutingDecisionRecord(
            mode=CHAIN_TO_MODE[ChainPolicy(policy)],
            chosen_model=chosen,
            reason=reason,
            rule_name=rule_name,
            confidence=confidence,
            alternatives_considered=considered,
        )
    except ValidationError as exc:
        raise DocumentError("routing decision", pydantic_problems(exc)) from None
    emit(
        events,
        "route.decided",
        policy=ChainPolicy(policy).value,
        mode=record.mode.value,
        chosen_model=chosen,
        reason=reason,
        rule_name=rule_name,
        confidence=confidence,
        alternatives_considered=considered,
    )
    return record


# --- what a session needs ------------------------------------------------------------------

IMAGE_TOKENS = 1_600
"""Token estimate per image (about what providers charge for a ~1 megapixel image)."""


@dataclass(frozen=True)
class Requirement:
    """One thing the history needs from a model.

    `capability` names the AdapterCapabilities field that satisfies it; `media_types`
    (images) and `tokens` (context size) carry the amounts to compare.
    """

    capability: str
    why: str
    media_types: tuple[str, ...] = ()
    tokens: int = 0


def estimate_tokens(
    history: Iterable[Message], tools: Sequence[ToolDefinition] = (), *, provider: str | None = None
) -> int:
    """Prompt size of `history` in tokens, estimated before anything is sent.

    With `provider`, that adapter's own `estimate_input_tokens`: it counts what it would
    send (text, tool calls, the reasoning it replays), not ids, metadata and signatures
    that never reach the model; each adapter states its method and measured error.

    Without one (or for a provider no adapter serves), a generic upper guess: UTF-8 bytes
    of canonical JSON / 4, images at IMAGE_TOKENS each. Bytes rather than characters:
    cheap (no decode) and closer for non-Latin text, whose characters cost more tokens
    each. Image data is taken out first: base64 bytes / 4 would price a 1 MB screenshot
    at 250k tokens and refuse every swap.
    """
    if provider is not None:
        from . import adapters  # adapters build on this package's lower layers; import late

        try:
            adapter = adapters.get(provider)
        except UnknownAdapterError:
            pass
        else:
            return adapter.estimate_input_tokens(list(history), tools)
    size = 0
    images = 0
    for message in history:
        size += len(canonical_json(message))
        for block in _all_blocks(message):
            if isinstance(block, ImageBlock):
                images += 1
                size -= len(block.source.data)
    size += sum(len(tool.model_dump_json()) for tool in tools)
    return max(size, 0) // 4 + images * IMAGE_TOKENS


def _all_blocks(message: Message) -> Iterable[object]:
    for block in message.content:
        yield block
        if isinstance(block, ToolResultBlock):
            yield from block.content


def required_capabilities(
    history: Sequence[Message], tools: Sequence[ToolDefinition] = (), *, provider: str | None = None
) -> list[Requirement]:
    """What a model must support to carry `history` (and offer `tools`) from here on.

    `provider`: the target's provider, whose adapter estimates the session's size.
    """
    needs: list[Requirement] = []
    media = sorted({b.media_type for m in history for b in _all_blocks(m) if isinstance(b, ImageBlock)})
    if media:
        needs.append(Requirement("supports_images", "session contains images", media_types=tuple(media)))
    if _thinking_mid_tool_loop(history):
        needs.append(
            Requirement("supports_thinking", "session is mid tool loop and its assistant turn holds thinking")
        )
    uses_tools = any(isinstance(b, ToolUseBlock | ToolResultBlock) for m in history for b in m.content)
    if uses_tools or tools:
        needs.append(Requirement("supports_tools", "session uses tools"))
    if any(m.role == Role.system and m.content for m in history):
        needs.append(Requirement("supports_system_prompt", "session has a system prompt"))
    tokens = estimate_tokens(history, tools, provider=provider)
    needs.append(Requirement("max_context_tokens", "session size", tokens=tokens))
    return needs


def _thinking_mid_tool_loop(history: Sequence[Message]) -> bool:
    """True when the next call continues a tool loop whose assistant turn holds thinking.

    Providers that verify thinking (Anthropic) need the current turn's thinking replayed
    with its tool calls; a model that cannot carry thinking would lose it mid-loop. The
    turn is everything after the last USER message; the loop is open when the history
    ends with a TOOL message or an assistant message that made tool calls.
    """
    last_user = max((i for i, m in enumerate(history) if m.role == Role.user), default=-1)
    turn = history[last_user + 1 :]
    if not turn:
        return False
    last = turn[-1]
    open_loop = last.role == Role.tool or (
        last.role == Role.assistant and any(isinstance(b, ToolUseBlock) for b in last.content)
    )
    return open_loop and any(
        isinstance(b, ThinkingBlock | RedactedThinkingBlock)
        for m in turn
        if m.role == Role.assistant
        for b in m.content
    )


def unmet(needs: Sequence[Requirement], caps: AdapterCapabilities) -> list[str]:
    """One user-facing clause per requirement `caps` does not meet (spec §8.4 wording)."""
    clauses: list[str] = []
    for need in needs:
        match need.capability:
            case "supports_images":
                if not caps.supports_images:
                    clauses.append("session contains images that this model can't process")
                else:
                    refused = [t for t in need.media_types if t not in caps.accepted_image_media_types]
                    if refused:
                        clauses.append(
                            f"session contains {', '.join(refused)} images that this model doesn't accept"
                        )
            case "supports_thinking":
                if not caps.supports_thinking:
                    clauses.append("session is mid tool loop with thinking that this model can't replay")
            case "supports_tools":
                if not caps.supports_tools:
                    clauses.append("session uses tools that this model can't call")
            case "supports_system_prompt":
                if not caps.supports_system_prompt:
                    clauses.append("session has a system prompt that this model can't take")
            case "max_context_tokens":
                if need.tokens > caps.max_context_tokens:
                    clauses.append(
                        f"session is about {need.tokens:,} tokens, over this model's "
                        f"{caps.max_context_tokens:,}-token context window"
                    )
    return clauses


def check_swap(
    history: Sequence[Message],
    target_model: str,
    *,
    tools: Sequence[ToolDefinition] = (),
    catalog: Catalog | None = None,
    events: EventSink | None = None,
    active_model: str | None = None,
) -> None:
    """Refuse (CapabilityError) a swap to a model that cannot carry the session.

    `active_model` defaults to the model of the last assistant message; it is reported in
    the `routing_constraint_failure` event as the model that stays active.
    """
    entry = (catalog or load_catalog()).resolve(target_model)
    needs = required_capabilities(history, tools, provider=entry.provider)
    reasons = unmet(needs, entry.capabilities)
    if not reasons:
        return
    missing = list(dict.fromkeys(n.capability for n in needs if unmet([n], entry.capabilities)))
    name = entry.display_name or entry.id
    message = f"Cannot swap to {name}: {'; '.join(reasons)}"
    if entry.assumed:  # say that the refusal rests on assumed capabilities (catalog.py)
        source = entry.resolved_from or f"{entry.provider}'s conservative defaults"
        message += f" ({entry.id} is not in the catalog: its capabilities were assumed from {source})"
    active = active_model or next(
        (m.metadata.model for m in reversed(history) if m.role == Role.assistant and m.metadata.model), None
    )
    emit(
        events,
        "routing_constraint_failure",
        model=entry.id,
        reasons=reasons,
        message=message,
        active_model=active,
        active_model_unchanged=True,
    )
    raise CapabilityError(message, model=entry.id, reasons=reasons, capabilities=missing)


__all__ = [
    "CHAIN_TO_MODE",
    "IMAGE_TOKENS",
    "ChainPolicy",
    "Requirement",
    "check_swap",
    "decision_record",
    "estimate_tokens",
    "required_capabilities",
    "unmet",
]
