// The docs' TypeScript example (docs/typescript.md): validate a message Python wrote and
// compute the message_hash Python computes. `tsc --noEmit` (npm test) type-checks it, and
// tests/test_typescript_package.py compiles and runs the same calls against the installed
// tarball.
import { canonicalJson, isMessage, messageHash, validateMessage, v1, type AnyMessage } from "@metis/schema";

const text =
  '{"id":"01HZ0000000000000000000001","session_id":"sess_42","role":"user",' +
  '"content":[{"type":"text","text":"What\'s a ULID?"}],"metadata":{"status":"complete"},' +
  '"created_at":"2026-05-08T12:00:01.000001Z","schema_version":3}';

const doc: unknown = JSON.parse(text);
if (isMessage(doc)) {
  const message: AnyMessage = doc; // narrowed by the type guard; schema_version says which version
  console.log(message.role, message.content.length);
  console.log(canonicalJson(text)); // the bytes Python's metis.canonical.canonical_json writes
  console.log(messageHash(text)); // 07be4d8e1f6c87ada8e4511e8e7411ac5025eda2f0756bbb19d09d1c4d289b53
} else {
  console.log(validateMessage(doc)); // [{ path: "content[0].text", message: "...", keyword: "..." }]
}

// An older version's types and validator, side by side: v1 had no document block.
export const refused: boolean = v1.isValid({ type: "document" }, "ContentBlock");
