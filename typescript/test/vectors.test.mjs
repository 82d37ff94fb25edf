// Every schema vector against the package's own validator of its version (ajv over the
// bundled schema, strict, every format declared): valid vectors must pass, invalid ones must
// fail. The Python suite holds the same vectors to the same verdicts (tests/test_vectors.py),
// so a client in either language agrees.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import * as metis from "@metis/schema";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const versions = readdirSync(join(REPO, "schema"))
  .filter((name) => /^v\d+$/.test(name))
  .map((name) => Number(name.slice(1)))
  .sort((a, b) => a - b);

test("the package holds every schema version under schema/", () => {
  assert.deepEqual([...metis.VERSIONS], versions);
  assert.ok(metis.VERSIONS.includes(metis.CURRENT_VERSION));
});

for (const version of versions) {
  const module = metis[`v${version}`];
  test(`v${version}: every definition compiles without a warning`, () => {
    for (const definition of Object.keys(module.schema.$defs)) module.validate(null, definition);
  });
  const dir = join(REPO, "schema", `v${version}`, "vectors");
  const files = readdirSync(dir).filter((name) => name.endsWith(".json")).sort();
  let count = 0;
  for (const file of files) {
    for (const group of JSON.parse(readFileSync(join(dir, file), "utf8"))) {
      const definition = group.schema.$ref.split("/").pop();
      for (const vector of group.tests) {
        count += 1;
        test(`v${version}/${file}: ${vector.description}`, () => {
          const problems = module.validate(vector.data, definition);
          assert.equal(problems.length === 0, vector.valid, JSON.stringify(problems));
          assert.equal(module.isValid(vector.data, definition), vector.valid);
        });
      }
    }
  }
  test(`v${version} has vectors`, () => assert.ok(count >= 80, `only ${count} vectors`));
}
