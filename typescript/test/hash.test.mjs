// The cross-language hash vectors (schema/vectors/hash.json, written by Python's metis via
// `python -m codegen.hash_vectors`): canonicalJson and messageHash must give Python's bytes
// and digest for every document, from its JSON text and from its parsed value, and refuse
// what Python refuses. tests/test_hash_vectors.py holds Python to the same file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { canonicalJson, conversationHash, messageHash, MetisDocumentError } from "@metis/schema";
import { JsonError, compareCodePoints, formatFloat } from "../lib/json.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const vectors = JSON.parse(readFileSync(join(REPO, "schema", "vectors", "hash.json"), "utf8"));

test("there are hash vectors, and refused ones", () => {
  assert.ok(vectors.length >= 25);
  assert.ok(vectors.some((v) => v.refused));
});

for (const vector of vectors) {
  test(`hash vector: ${vector.description}`, () => {
    if (vector.refused) {
      assert.throws(() => canonicalJson(vector.document), (e) => e instanceof MetisDocumentError || e instanceof JsonError);
      return;
    }
    assert.equal(canonicalJson(vector.document), vector.canonical);
    assert.equal(messageHash(vector.document), vector.sha256);
    assert.equal(createHash("sha256").update(vector.canonical, "utf8").digest("hex"), vector.sha256);
    assert.equal(canonicalJson(JSON.parse(vector.document)), vector.canonical_parsed ?? vector.canonical);
  });
}

test("conversationHash joins the message hashes with newlines, as Python does", () => {
  const docs = vectors.filter((v) => !v.refused).slice(0, 3);
  const expected = createHash("sha256").update(docs.map((v) => v.sha256).join("\n")).digest("hex");
  assert.equal(conversationHash(docs.map((v) => v.document)), expected);
  assert.equal(conversationHash([]), createHash("sha256").update("").digest("hex"));
});

test("code point order differs from UTF-16 order where Python's does", () => {
  const keys = ["\u{1F600}", "\uFF21", "\uE000", "z"];
  assert.deepEqual([...keys].sort(), ["z", "\u{1F600}", "\uE000", "\uFF21"]);
  assert.deepEqual([...keys].sort(compareCodePoints), ["z", "\uE000", "\uFF21", "\u{1F600}"]);
});

test("floats are formatted as orjson formats them", () => {
  const cases = [[1, "1.0"], [-0, "-0.0"], [1e16, "1e+16"], [1e15, "1000000000000000.0"], [1e-5, "0.00001"], [1e-6, "1e-6"], [0.1, "0.1"], [-2.5e-7, "-2.5e-7"], [123.456, "123.456"]];
  for (const [value, text] of cases) assert.equal(formatFloat(value), text);
  assert.throws(() => formatFloat(Number.NaN), JsonError);
});

test("validateMessage checks a message of any version by its own schema_version", async () => {
  const { validateMessage, isMessage, CURRENT_VERSION, VERSIONS } = await import("@metis/schema");
  const doc = JSON.parse(vectors[0].document);
  for (const version of VERSIONS.filter((v) => v <= CURRENT_VERSION)) {
    assert.deepEqual(validateMessage({ ...doc, schema_version: version }), [], `v${version}`);
  }
  const newer = validateMessage({ ...doc, schema_version: CURRENT_VERSION + 1 });
  assert.equal(newer[0].path, "schema_version");
  assert.equal(isMessage({ ...doc, content: [] }), false);
  assert.equal(isMessage([doc]), false);
});
