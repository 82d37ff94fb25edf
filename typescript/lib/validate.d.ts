/** One reason a document is not valid: where (`content[0].text`) and what. */
export interface ValidationProblem {
  path: string;
  message: string;
  /** The JSON Schema keyword that failed (`required`, `pattern`, `oneOf`, ...). */
  keyword: string;
}
/** A bundled JSON Schema (draft 2020-12) of one schema version. */
export interface JsonSchema {
  $id: string;
  $schema: string;
  $defs: Record<string, object>;
  [keyword: string]: unknown;
}
/** Every format the schema uses, defined as Python's validator checks it. */
export declare const FORMATS: Readonly<Record<string, (value: string) => boolean>>;
/** Keywords of the bundle that annotate and do not validate. */
export declare const ANNOTATIONS: readonly string[];
export interface Validator {
  readonly definitions: readonly string[];
  validate(document: unknown, definition?: string): ValidationProblem[];
  isValid(document: unknown, definition?: string): boolean;
}
/** A validator over one bundle (ajv, strict, every format and annotation declared). */
export declare function validatorFor(schema: JsonSchema): Validator;
