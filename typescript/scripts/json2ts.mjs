// Bundled metis JSON Schema (a file path) -> TypeScript declarations on stdout.
// Run by `python -m codegen` (codegen/typescript.py), which owns the output files and
// checks them with `--check`; run it by hand only to debug the generator.
import { readFileSync } from "node:fs";
import { compile } from "json-schema-to-typescript";

const [bundlePath, banner] = process.argv.slice(2);
const bundle = JSON.parse(readFileSync(bundlePath, "utf8"));

// Types, not rules: the if/then clauses (spec §5, role vs blocks) say which documents are
// valid, which TypeScript cannot express and the Node test checks with ajv instead. And a
// $ref beside annotations (a description, x-metis-added-in) would make json2ts emit a
// copy of the referenced type under a new name: keep the $ref alone.
const ANNOTATIONS = new Set(["description", "title", "default", "x-metis-added-in"]);
function typesOnly(node) {
  if (Array.isArray(node)) return node.map(typesOnly);
  if (node === null || typeof node !== "object") return node;
  if ("$ref" in node && Object.keys(node).every((k) => k === "$ref" || ANNOTATIONS.has(k))) {
    return { $ref: node.$ref };
  }
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    const rules = key === "allOf" && Array.isArray(value) && value.every((c) => "if" in c);
    if (!rules) out[key] = key === "properties" || key === "$defs" ? mapValues(value) : typesOnly(value);
  }
  return out;
}
function mapValues(object) {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, typesOnly(v)]));
}
const defs = mapValues(bundle.$defs);

// The bundle is a set of $defs with no root type: give it a root object that names every
// definition, so each is emitted as an exported type under its own title.
const root = {
  $schema: bundle.$schema,
  title: "MetisSchema",
  description: bundle.description,
  type: "object",
  properties: Object.fromEntries(Object.keys(defs).map((name) => [name, { $ref: `#/$defs/${name}` }])),
  additionalProperties: false,
  $defs: defs,
};

const ts = await compile(root, "MetisSchema", {
  bannerComment: banner,
  additionalProperties: false,
  declareExternallyReferenced: true,
  unreachableDefinitions: true,
  strictIndexSignatures: true,
  enableConstEnums: false,
  inferStringEnumKeysFromValues: false,
  format: true,
  style: { semi: true, singleQuote: false, printWidth: 110, trailingComma: "all" },
  $refOptions: { resolve: { external: false } },
});
process.stdout.write(ts);
