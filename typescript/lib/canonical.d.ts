import type { JsonSchema, ValidationProblem } from "./validate.js";
/** The schema_version written into the hashed bytes, whatever the message's version. */
export declare const HASHED_SCHEMA_VERSION: 1;
/** A document that is not a valid message of a schema version this package reads. */
export declare class MetisDocumentError extends Error {
  readonly problems: ValidationProblem[];
  constructor(message: string, problems?: ValidationProblem[]);
}
/**
 * A message document: JSON text (read exactly as Python reads it: `1.0` stays a float,
 * big integers stay exact) or a parsed value (read as Python would read JSON.stringify of it).
 */
export type MessageDocument = string | object;
export interface Canonicalizer {
  canonicalJson(document: MessageDocument): string;
  messageHash(document: MessageDocument): string;
  conversationHash(documents: Iterable<MessageDocument>): string;
  validateMessage(document: unknown): ValidationProblem[];
  isMessage(document: unknown): boolean;
}
export declare function canonicalizer(config: {
  current: number;
  schema: JsonSchema;
  validators: Record<number, (document: unknown, definition?: string) => ValidationProblem[]>;
}): Canonicalizer;
/** A time as pydantic writes it: microseconds, `Z` for a zero offset. */
export declare function normalizeDateTime(value: string): string;
/** A decimal string as Python's Decimal writes it back in fixed point. */
export declare function normalizeDecimal(value: string): string;
