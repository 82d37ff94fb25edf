// JSON read and written exactly as metis's Python side reads and writes it (runtime/metis/_json.py).
//
// Why not JSON.parse / JSON.stringify: a message's hash is SHA-256 over bytes Python writes
// with orjson, and three things JSON.parse loses decide those bytes. `1.0` and `1` are a
// float and an integer to Python (written back as `1.0` and `1`) but one number to
// JavaScript; an integer past 2**53 is exact in Python and rounded by JSON.parse; and
// orjson formats floats its own way (`1e+16`, `0.00001`, `1e-7`), not as Number#toString
// does. So `parseExact` keeps integers as bigint and floats as `JsonFloat`, and
// `writeCanonical` writes them, and strings and keys, byte for byte as Python does.

/** A JSON number written with a fraction or an exponent: a float to Python, whatever its value. */
export class JsonFloat {
  /** @param {number} value */
  constructor(value) {
    this.value = value;
    Object.freeze(this);
  }
}

/** JSON text Python would refuse to read or write (metis's own bounds included). */
export class JsonError extends Error {
  constructor(message) {
    super(message);
    this.name = "JsonError";
  }
}

/** Most digits of an integer Python reads or writes (runtime/metis/_json.py MAX_INT_DIGITS). */
export const MAX_INT_DIGITS = 4300;
/** Deepest nesting read (orjson's bound, as in runtime/metis/_json.py). */
export const MAX_DEPTH = 1024;

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * The values of a JSON document with integers as bigint and floats as JsonFloat.
 * Refuses what orjson refuses: a lone surrogate, a float that overflows, text after the value.
 * @param {string} text
 */
export function parseExact(text) {
  let at = 0;
  const fail = (what) => {
    throw new JsonError(`${what} at character ${at}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const string = () => {
    at += 1; // the opening quote
    let out = "";
    for (;;) {
      const end = text.slice(at).search(/["\\\u0000-\u001f]/);
      if (end < 0) fail("unterminated string");
      out += text.slice(at, at + end);
      at += end;
      const c = text[at];
      if (c === '"') {
        at += 1;
        break;
      }
      if (c !== "\\") fail("control character in a string");
      const e = text[at + 1];
      if (e === "u") {
        const hex = text.slice(at + 2, at + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
        out += String.fromCharCode(parseInt(hex, 16));
        at += 6;
      } else if (e in ESCAPES) {
        out += ESCAPES[e];
        at += 2;
      } else {
        fail("bad escape");
      }
    }
    if (!out.isWellFormed()) fail("a lone surrogate in a string");
    return out;
  };
  const value = (depth) => {
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH}`);
    skip();
    const c = text[at];
    if (c === "{") {
      at += 1;
      const out = {};
      skip();
      if (text[at] === "}") {
        at += 1;
        return out;
      }
      for (;;) {
        skip();
        if (text[at] !== '"') fail("expected a key");
        const key = string();
        skip();
        if (text[at] !== ":") fail("expected ':'");
        at += 1;
        Object.defineProperty(out, key, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        skip();
        if (text[at] === ",") at += 1;
        else if (text[at] === "}") {
          at += 1;
          return out;
        } else fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      at += 1;
      const out = [];
      skip();
      if (text[at] === "]") {
        at += 1;
        return out;
      }
      for (;;) {
        out.push(value(depth + 1));
        skip();
        if (text[at] === ",") at += 1;
        else if (text[at] === "]") {
          at += 1;
          return out;
        } else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    for (const [word, literal] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return literal;
      }
    }
    NUMBER.lastIndex = at;
    const match = NUMBER.exec(text);
    if (match === null) fail("unexpected character");
    at = NUMBER.lastIndex;
    if (match[1] === undefined && match[2] === undefined) {
      if (match[0].replace("-", "").length > MAX_INT_DIGITS) {
        fail(`an integer of more than ${MAX_INT_DIGITS} digits`);
      }
      return BigInt(match[0]);
    }
    const number = Number(match[0]);
    if (!Number.isFinite(number)) fail("a number that overflows a double");
    return new JsonFloat(number);
  };
  const result = value(0);
  skip();
  if (at !== text.length) fail("text after the JSON value");
  return result;
}

/**
 * A JavaScript value as `parseExact` would read it from `JSON.stringify(value)`: what a
 * Python reader of that text holds (an integral number is an integer, unless
 * JSON.stringify writes it with an exponent; `undefined` properties are left out).
 * @param {unknown} value
 * @returns {unknown}
 */
export function fromPlain(value) {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new JsonError(`${value} is not JSON (NaN and Infinity have no JSON form)`);
    const text = String(value);
    return /^-?\d+$/.test(text) ? BigInt(text) : new JsonFloat(value);
  }
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : fromPlain(item)));
  if (value !== null && typeof value === "object" && !(value instanceof JsonFloat)) {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined && typeof item !== "function") {
        Object.defineProperty(out, key, { value: fromPlain(item), enumerable: true, writable: true, configurable: true });
      }
    }
    return out;
  }
  return value;
}

/**
 * A float as orjson writes it: the shortest digits that read back to the same double,
 * positioned by Ryu's rules (decimal notation from 1e-5 up to below 1e16, otherwise an
 * exponent with its sign), with `.0` on a whole number.
 * @param {number} x
 */
export function formatFloat(x) {
  if (!Number.isFinite(x)) throw new JsonError(`${x} is not JSON (NaN and Infinity have no JSON form)`);
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mantissa, exponent] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const length = digits.length;
  const kk = Number(exponent) + 1; // 10**(kk-1) <= |x| < 10**kk
  const k = kk - length; // |x| = digits * 10**k
  let out;
  if (k >= 0 && kk <= 16) out = `${digits}${"0".repeat(k)}.0`;
  else if (kk > 0 && kk <= 16) out = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  else if (kk > -5 && kk <= 0) out = `0.${"0".repeat(-kk)}${digits}`;
  else {
    const e = kk - 1;
    const head = length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`;
    out = `${head}e${e < 0 ? "-" : "+"}${Math.abs(e)}`;
  }
  return sign + out;
}

/**
 * A string as orjson writes it: `"` and `\` escaped, control characters as \b \f \n \r \t
 * or \u00xx, everything else (non-ASCII, U+2028, DEL) as itself, in UTF-8.
 * @param {string} s
 */
export function writeString(s) {
  if (!s.isWellFormed()) throw new JsonError("a lone surrogate in a string (not UTF-8, so not JSON)");
  return `"${s.replace(/["\\\u0000-\u001f]/g, escapeChar)}"`;
}

const SHORT = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
function escapeChar(c) {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * Code point order (Python's and UTF-8's), not JavaScript's UTF-16 order: they differ where
 * a character past U+FFFF (a surrogate pair) meets one from U+E000 to U+FFFF.
 * @param {string} a
 * @param {string} b
 */
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return lift(x) - lift(y);
  }
  return a.length - b.length;
}
function lift(unit) {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/**
 * Compact JSON with keys in code point order, as `orjson.dumps(value, option=OPT_SORT_KEYS)`:
 * bigint as an integer, JsonFloat (and any other number) as a float.
 * @param {unknown} value
 * @returns {string}
 */
export function writeCanonical(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return writeString(value);
    case "bigint": {
      const text = value.toString();
      if (text.replace("-", "").length > MAX_INT_DIGITS) {
        throw new JsonError(`an integer of more than ${MAX_INT_DIGITS} digits`);
      }
      return text;
    }
    case "number":
      return formatFloat(value);
    case "object":
      if (value instanceof JsonFloat) return formatFloat(value.value);
      if (Array.isArray(value)) return `[${value.map(writeCanonical).join(",")}]`;
      return `{${Object.keys(value)
        .sort(compareCodePoints)
        .map((key) => `${writeString(key)}:${writeCanonical(value[key])}`)
        .join(",")}}`;
    default:
      throw new JsonError(`a ${typeof value} is not JSON`);
  }
}
