'use strict';
// Tool schemas given as JSON Schema or as zod 4 (an optional peer dependency), turned into the
// JSON Schema the core validates against. Validation itself happens once, in Rust.

function isZod(value) {
  return value !== null && typeof value === 'object' && '_zod' in value;
}

/** A TS-SDK style raw shape: `{ city: z.string() }`. */
function isZodShape(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isZod(value)) {
    return false;
  }
  const values = Object.values(value);
  return values.length > 0 && values.every(isZod);
}

let zodModule;
function zod() {
  if (zodModule === undefined) {
    try {
      zodModule = require('zod');
    } catch {
      zodModule = null;
    }
  }
  if (!zodModule || typeof zodModule.toJSONSchema !== 'function') {
    throw new TypeError('a zod schema was given but zod 4 is not installed (npm install zod@4)');
  }
  return zodModule;
}

/**
 * JSON Schema for a tool's input or output: a JSON Schema object as given, a zod 4 schema
 * or a raw shape of zod schemas converted with zod's own `toJSONSchema`.
 * @param {unknown} schema
 * @param {'input'|'output'} io
 */
function toJsonSchema(schema, io) {
  if (schema === undefined || schema === null) return undefined;
  let out = schema;
  if (isZodShape(schema)) out = zod().toJSONSchema(zod().object(schema), { io });
  else if (isZod(schema)) out = zod().toJSONSchema(schema, { io });
  else if (typeof schema !== 'object' || Array.isArray(schema)) {
    throw new TypeError(`a tool's ${io} schema must be a JSON Schema object or a zod schema`);
  }
  if (out !== schema && '$schema' in out) {
    out = { ...out };
    delete out.$schema;
  }
  return out;
}

module.exports = { toJsonSchema, isZod };
