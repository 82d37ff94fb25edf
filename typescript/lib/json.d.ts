/** A JSON number written with a fraction or an exponent: a float to Python, whatever its value. */
export declare class JsonFloat {
  readonly value: number;
  constructor(value: number);
}
/** JSON text Python would refuse to read or write. */
export declare class JsonError extends Error {}
export declare const MAX_INT_DIGITS: number;
export declare const MAX_DEPTH: number;
/** A JSON value as parseExact reads it: integers as bigint, floats as JsonFloat. */
export type ExactJson = null | boolean | string | bigint | JsonFloat | ExactJson[] | { [key: string]: ExactJson };
/** The values of JSON text with integers as bigint and floats as JsonFloat (Python's reading). */
export declare function parseExact(text: string): ExactJson;
/** A JavaScript value as parseExact would read it from JSON.stringify(value). */
export declare function fromPlain(value: unknown): ExactJson;
/** A float as orjson writes it (`1.0`, `1e+16`, `0.00001`, `1e-7`). */
export declare function formatFloat(x: number): string;
/** A string as orjson writes it (UTF-8, only `"`, `\` and control characters escaped). */
export declare function writeString(s: string): string;
/** Code point order (Python's), not UTF-16 order. */
export declare function compareCodePoints(a: string, b: string): number;
/** Compact JSON with keys in code point order, as orjson with OPT_SORT_KEYS writes it. */
export declare function writeCanonical(value: unknown): string;
