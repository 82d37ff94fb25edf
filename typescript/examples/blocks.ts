// A typed example of every content block of every schema version, and of the documents
// around them. `tsc --noEmit` (npm test) checks that the generated declarations accept each
// one, and the @ts-expect-error lines check that they refuse what the schema refuses.
import type { v1, v2 } from "@metis/schema";

const text: v2.TextBlock = { type: "text", text: "ULIDs sort by time.", cache_point: { ttl: "1h" } };
const cited: v2.TextBlock = {
  type: "text",
  text: "ULIDs sort by time.",
  citations: [
    { type: "char_location", cited_text: "sort", document_index: 0, start_char_index: 0, end_char_index: 4 },
    { type: "page_location", cited_text: "128", document_index: 1, start_page_number: 1, end_page_number: 2 },
    { type: "content_block_location", cited_text: "x", document_index: 2, start_block_index: 0, end_block_index: 1 },
    { type: "url", url: "https://github.com/ulid/spec", title: "ulid/spec" },
    {
      type: "search_result_location",
      cited_text: "base32",
      search_result_index: 0,
      source: "https://example.com",
      start_block_index: 0,
      end_block_index: 1,
    },
  ],
};
const toolUse: v2.ToolUseBlock = { type: "tool_use", id: "tu_01HZ0000000000000000000001", name: "getWeather", input: {} };
const image: v2.ImageBlock = {
  type: "image",
  source: { kind: "file_id", data: "file-abc", provider: "openai" },
  media_type: "image/png",
};
const document: v2.DocumentBlock = {
  type: "document",
  source: { kind: "base64", data: "JVBERi0xLjQK" },
  media_type: "application/pdf",
  title: "Spec",
  citations_enabled: true,
};
const audio: v2.AudioBlock = { type: "audio", source: { kind: "url", data: "https://x.test/a.wav" }, media_type: "audio/wav" };
const video: v2.VideoBlock = { type: "video", source: { kind: "file_ref", data: "clip.mp4" }, media_type: "video/mp4" };
const search: v2.SearchResultBlock = { type: "search_result", source: "https://x.test", title: "X", content: [text] };
const toolResult: v2.ToolResultBlock = {
  type: "tool_result",
  tool_use_id: "tu_01HZ0000000000000000000001",
  content: [text, image, document, search],
  is_error: false,
};
const thinking: v2.ThinkingBlock = { type: "thinking", text: "13 * 17", signature: "c2ln" };
const redacted: v2.RedactedThinkingBlock = { type: "redacted_thinking", data: "cmVk" };
const serverUse: v2.ServerToolUseBlock = {
  type: "server_tool_use",
  id: "srvtoolu_01",
  provider: "anthropic",
  name: "web_search",
  input: { query: "ulid" },
};
const serverResult: v2.ServerToolResultBlock = {
  type: "server_tool_result",
  tool_use_id: "srvtoolu_01",
  provider: "anthropic",
  name: "web_search",
  content: [search],
  provider_data: { encrypted_content: "..." },
};
const compaction: v2.CompactionBlock = { type: "compaction", provider: "anthropic", summary: "Earlier: ULIDs." };

export const everyV2Block: v2.ContentBlock[] = [
  text,
  cited,
  toolUse,
  image,
  document,
  audio,
  video,
  search,
  toolResult,
  thinking,
  redacted,
  serverUse,
  serverResult,
  compaction,
];

export const everyV1Block: v1.ContentBlock[] = [
  { type: "text", text: "hi" },
  { type: "tool_use", id: "tu_01HZ0000000000000000000001", name: "read_file", input: { path: "a" } },
  { type: "tool_result", tool_use_id: "tu_01HZ0000000000000000000001", content: [{ type: "text", text: "ok" }] },
  { type: "image", source: { kind: "url", data: "https://x.test/a.png" }, media_type: "image/png" },
  { type: "thinking", text: "hm" },
  { type: "redacted_thinking", data: "cmVk" },
];

export const answer: v2.Message = {
  id: "01HZ0000000000000000000002",
  session_id: "sess_42",
  role: "assistant",
  content: [compaction, serverUse, serverResult, cited],
  metadata: { status: "complete", model: "anthropic:claude-sonnet-4-6", provider: "anthropic", phase: "final_answer" },
  created_at: "2026-05-08T12:00:02.000002Z",
  schema_version: 2,
};

export const tool: v2.ToolDefinition = {
  name: "getWeather",
  description: "Weather for a city.",
  input_schema: { type: "object" },
  side_effects: "network",
  strict: true,
};

// @ts-expect-error a text block carries its text
export const noText: v2.TextBlock = { type: "text" };
// @ts-expect-error there is no hologram block
export const hologram: v2.ContentBlock = { type: "hologram", text: "x" };
// @ts-expect-error v1 has no document block
export const v1Document: v1.ContentBlock = document;
// @ts-expect-error the cache ttl is 5m or 1h
export const badTtl: v2.CachePoint = { ttl: "10m" };
// @ts-expect-error a v2 message says schema_version 2
export const wrongVersion: v2.Message = { ...answer, schema_version: 1 };
