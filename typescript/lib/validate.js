// Validation of documents against one version's bundled JSON Schema (draft 2020-12), with
// ajv, holding them to what Python's `metis validate` holds them to (runtime/metis/validation.py).
//
// The bundle uses two annotation keywords ajv does not know (`discriminator` with a mapping,
// which ajv's own discriminator support refuses, and `x-metis-added-in`) and three formats:
// they are declared here, so ajv runs in strict mode with nothing left to warn about. A
// format the schema starts using without being declared here fails compilation (strict),
// and the package's tests compile every definition of every version.
import Ajv2020Module from "ajv/dist/2020.js";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;

// RFC 3339 as Python's checker reads it (rfc3339-validator): hours to 23, minutes and
// seconds to 59, an offset with its colon, `T` and `Z` in either case; the day must exist
// and the year be at least 1 (what Python's datetime takes).
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function realDay(year, month, day) {
  // Date.UTC rolls 2026-02-30 over into March: check the day against its month instead.
  const last = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leap(year) ? 1 : 0);
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= last;
}
function leap(year) {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
function dateParts(match) {
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Every format the schema uses, defined as Python's validator checks it. */
export const FORMATS = {
  "date-time": (value) => {
    const match = RFC3339.exec(value);
    return match !== null && realDay(...dateParts(match));
  },
  date: (value) => {
    const match = FULL_DATE.exec(value);
    return match !== null && realDay(...dateParts(match));
  },
  /** A decimal number in fixed point, as Money is written: never a float (spec §4.5). */
  decimal: (value) => /^-?\d+(\.\d+)?$/.test(value),
};

// Anything ajv would print is an error here: the package compiles without a warning.
const LOUD = {
  log() {},
  warn(...args) {
    throw new Error(`ajv: ${args.join(" ")}`);
  },
  error(...args) {
    throw new Error(`ajv: ${args.join(" ")}`);
  },
};

/** Keywords of the bundle that annotate and do not validate. */
export const ANNOTATIONS = ["discriminator", "x-metis-added-in"];

/**
 * A validator over one bundle: `validate(document, definition = "Message")` lists the
 * problems (none when valid), `isValid` says whether there are none.
 * @param {any} schema the bundled JSON Schema of one version
 */
export function validatorFor(schema) {
  // Strict: an unknown keyword or format is an error, not a warning. The two strict checks
  // left off flag what the schema means to do: `required` in a rule's `then` of a property
  // declared beside it (strictRequired), and a rule without a `type` (strictTypes).
  const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true, logger: LOUD });
  for (const keyword of ANNOTATIONS) ajv.addKeyword({ keyword, schemaType: ["object", "number", "string"] });
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: "string", validate });
  ajv.addSchema(schema);
  const compiled = new Map();
  const definitions = Object.keys(schema.$defs);

  function compile(definition) {
    if (!Object.hasOwn(schema.$defs, definition)) {
      throw new RangeError(`${definition} is not a definition of ${schema.$id} (one of ${definitions.join(", ")})`);
    }
    if (!compiled.has(definition)) compiled.set(definition, ajv.compile({ $ref: `${schema.$id}#/$defs/${definition}` }));
    return compiled.get(definition);
  }

  function validate(document, definition = "Message") {
    const check = compile(definition);
    if (check(document)) return [];
    return (check.errors ?? []).map((error) => ({
      path: pointerToPath(error.instancePath),
      message: error.message ?? error.keyword,
      keyword: error.keyword,
    }));
  }

  return {
    definitions,
    validate,
    isValid: (document, definition = "Message") => compile(definition)(document) === true,
  };
}

/** `/content/0/text` -> `content[0].text`, the paths Python's problems name. */
function pointerToPath(pointer) {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part;
  }
  return out;
}
