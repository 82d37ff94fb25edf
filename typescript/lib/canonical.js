// canonicalJson / messageHash: the bytes and the SHA-256 that Python's metis.canonical gives
// the same message, so services in either language agree on a message's identity (spec §6.5).
//
// Python hashes a *read* message: `read_message(document)` validates it and fills in what
// the schema's defaults say (`metadata.status` "complete", `is_error` false, token counts
// 0, ...), and `canonical_json` writes pydantic's JSON form of it: null fields left out,
// times as RFC 3339 with microseconds, decimals as written, a `number` field as a float,
// `metadata.provider_raw` left out and `schema_version` written as 1 (HASHED_SCHEMA_VERSION),
// with sorted keys, no whitespace, UTF-8. `normalize` does the same reading here, driven by
// the bundled JSON Schema of the current version (the schema is the source of truth in
// both languages), and `writeCanonical` writes it as orjson does.
import { createHash } from "node:crypto";
import { JsonFloat, fromPlain, parseExact, writeCanonical } from "./json.js";

/** The schema_version written into the hashed bytes, whatever the message's version. */
export const HASHED_SCHEMA_VERSION = 1;

/** A document that is not a valid message of a schema version this package knows. */
export class MetisDocumentError extends Error {
  /**
   * @param {string} message
   * @param {{path: string, message: string}[]} problems
   */
  constructor(message, problems = []) {
    super(problems.length ? `${message}: ${problems.map((p) => `${p.path || "(document)"}: ${p.message}`).join("; ")}` : message);
    this.name = "MetisDocumentError";
    this.problems = problems;
  }
}

/**
 * The functions bound to one package build: `versions` maps each schema version to its
 * validator, `current` is the version Python writes (and reads every older one as).
 * @param {{current: number, schema: any, validators: Record<number, (doc: unknown, def?: string) => {path: string, message: string}[]>}} config
 */
export function canonicalizer({ current, schema, validators }) {
  const defs = schema.$defs;

  /** The problems of a message document of any version this package reads (none: valid). */
  function validateMessage(document) {
    if (document === null || typeof document !== "object" || Array.isArray(document)) {
      return [{ path: "", message: "a message is a JSON object", keyword: "type" }];
    }
    const version = document.schema_version;
    if (!Number.isInteger(version) || validators[version] === undefined || version > current) {
      const known = Object.keys(validators).filter((v) => Number(v) <= current);
      return [
        {
          path: "schema_version",
          message: `${JSON.stringify(version)} is not a version this package reads (${known.join(", ")})`,
          keyword: "enum",
        },
      ];
    }
    return validators[version](document, "Message");
  }

  function read(document) {
    const exact = typeof document === "string" ? parseExact(document) : fromPlain(document);
    const plain = typeof document === "string" ? JSON.parse(document) : document;
    const problems = validateMessage(plain);
    if (problems.length) throw new MetisDocumentError("not a valid message", problems);
    return normalize(exact, defs.Message, "");
  }

  function normalize(value, node, path) {
    node = resolve(node);
    if (node.oneOf) return normalize(value, branch(value, node, path), path);
    const types = typeOf(node);
    if (node.properties && isObject(value)) return normalizeObject(value, node, path);
    if (Array.isArray(value) && node.items) return value.map((item, i) => normalize(item, node.items, `${path}[${i}]`));
    if (types.has("integer") && value instanceof JsonFloat) {
      throw new MetisDocumentError(`${path}: ${value.value} is written as a float where the schema says integer (Python refuses it)`);
    }
    if (types.has("number") && !types.has("integer") && typeof value === "bigint") return new JsonFloat(Number(value));
    if (typeof value === "string" && node.format === "date-time") return normalizeDateTime(value);
    if (typeof value === "string" && node.format === "decimal") return normalizeDecimal(value);
    return value;
  }

  function normalizeObject(value, node, path) {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === null) continue; // a None field is left out (exclude_none)
      const sub = node.properties[key];
      set(out, key, sub ? normalize(item, sub, path ? `${path}.${key}` : key) : item);
    }
    for (const [key, sub] of Object.entries(node.properties)) {
      if (!Object.hasOwn(value, key) && sub.default !== undefined && sub.default !== null) {
        set(out, key, normalize(fromPlain(sub.default), sub, path ? `${path}.${key}` : key));
      }
    }
    return out;
  }

  function branch(value, node, path) {
    const discriminator = node.discriminator;
    if (discriminator && isObject(value)) {
      const target = discriminator.mapping?.[value[discriminator.propertyName]];
      if (target) return { $ref: target };
    }
    const candidates = node.oneOf.filter((b) => !(resolve(b).type === "null"));
    if (candidates.length === 1) return candidates[0];
    throw new MetisDocumentError(`${path}: no single branch of the union fits (the package is older than the schema?)`);
  }

  function resolve(node) {
    let seen = 0;
    while (node && node.$ref) {
      const name = node.$ref.replace(/^.*#\/\$defs\//, "");
      node = defs[name];
      if (node === undefined || (seen += 1) > 64) throw new MetisDocumentError(`unresolvable $ref ${name}`);
    }
    return node ?? {};
  }

  function canonicalJson(document) {
    const message = read(document);
    if (isObject(message.metadata)) delete message.metadata.provider_raw;
    message.schema_version = BigInt(HASHED_SCHEMA_VERSION);
    return writeCanonical(message);
  }

  function messageHash(document) {
    return createHash("sha256").update(canonicalJson(document), "utf8").digest("hex");
  }

  function conversationHash(documents) {
    return createHash("sha256")
      .update([...documents].map(messageHash).join("\n"), "utf8")
      .digest("hex");
  }

  return {
    canonicalJson,
    messageHash,
    conversationHash,
    validateMessage,
    isMessage: (document) => validateMessage(document).length === 0,
  };
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof JsonFloat);
}

function set(object, key, value) {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function typeOf(node) {
  return new Set(Array.isArray(node.type) ? node.type : node.type ? [node.type] : []);
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A time as pydantic writes a datetime: microseconds (the digits past six dropped, none
 * when all zero), and `Z` for a zero offset.
 * @param {string} value
 */
export function normalizeDateTime(value) {
  const match = DATE_TIME.exec(value);
  if (match === null) return value;
  const [, date, time, fraction = "", offset] = match;
  const micro = fraction.slice(0, 6).padEnd(6, "0");
  const zero = /^[Zz]$|^[+-]00:00$/.test(offset);
  return `${date}T${time}${/^0+$/.test(micro) ? "" : `.${micro}`}${zero ? "Z" : offset}`;
}

/**
 * A decimal string as Python's Decimal writes it back in fixed point: leading zeros of the
 * whole part dropped, the fraction as written (`0.10` stays `0.10`).
 * @param {string} value
 */
export function normalizeDecimal(value) {
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(value);
  if (match === null) return value;
  return `${match[1]}${match[2].replace(/^0+(?=\d)/, "")}${match[3] ?? ""}`;
}
