// Every schema vector against the bundled schema, in Node with ajv (JSON Schema 2020-12):
// valid vectors must pass, invalid ones must fail. The Python suite holds the same vectors
// to the same verdicts (tests/test_vectors.py), so a client in either language agrees.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BUNDLE_REF = "metis.bundle.json";
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
// Date.parse rolls 2026-02-30 over into March: check the day against its month instead.
function realDay(value) {
  const [year, month, day] = value.slice(0, 10).split("-").map(Number);
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= last;
}

const versions = readdirSync(join(REPO, "schema"))
  .filter((name) => /^v\d+$/.test(name))
  .map((name) => Number(name.slice(1)))
  .sort((a, b) => a - b);

function validatorFor(version) {
  const bundle = JSON.parse(
    readFileSync(join(REPO, "generated", "metis_schema", `v${version}`, "schema", BUNDLE_REF), "utf8"),
  );
  // strict: false lets ajv pass over the annotation keywords it does not know
  // (`discriminator` with a mapping, `x-metis-added-in`); `decimal` is a format only the
  // schema's own pattern checks.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat("decimal", true);
  // ajv-formats' date-time takes a space for `T` and an offset without its colon; RFC 3339
  // (what the schema's format means, and what Python's validator checks) takes neither.
  ajv.addFormat("date-time", {
    type: "string",
    validate: (value) => RFC3339.test(value) && realDay(value),
  });
  ajv.addSchema(bundle);
  const compiled = new Map();
  return (definition) => {
    if (!compiled.has(definition)) {
      compiled.set(definition, ajv.compile({ $ref: `${bundle.$id}#/$defs/${definition}` }));
    }
    return compiled.get(definition);
  };
}

assert.ok(versions.length >= 2, `expected schema/v1 and schema/v2, found ${versions}`);

for (const version of versions) {
  const validator = validatorFor(version);
  const dir = join(REPO, "schema", `v${version}`, "vectors");
  const files = readdirSync(dir).filter((name) => name.endsWith(".json")).sort();
  let count = 0;
  for (const file of files) {
    for (const group of JSON.parse(readFileSync(join(dir, file), "utf8"))) {
      const definition = group.schema.$ref.split("/").pop();
      for (const vector of group.tests) {
        count += 1;
        test(`v${version}/${file}: ${vector.description}`, () => {
          const validate = validator(definition);
          const ok = validate(vector.data);
          assert.equal(ok, vector.valid, JSON.stringify(validate.errors));
        });
      }
    }
  }
  test(`v${version} has vectors`, () => assert.ok(count >= 80, `only ${count} vectors`));
}
