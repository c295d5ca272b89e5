// Turns untrusted input into a typed value, or a 400 that names every offending field.
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { badRequest, type ErrorDetail } from './errors.ts';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled check of a schema, compiled once. */
export function checker<T extends TSchema>(schema: T): TypeCheck<T> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check as TypeCheck<T>;
}

export type Location = 'body' | 'query';

/**
 * Defaults are filled in first; with `convert` (query strings) numeric text becomes numbers.
 * The input is never mutated, so a rejected request leaves no trace.
 */
export function parse<T extends TSchema>(
  schema: T,
  input: unknown,
  location: Location,
  options: { convert?: boolean } = {},
): Static<T> {
  if (depthOver(input, MAX_DEPTH)) {
    const message = `is nested more than ${MAX_DEPTH} levels deep`;
    throw badRequest(location === 'body' ? 'invalid_body' : 'invalid_query', `${location}: ${message}`, [{ field: location, message }]);
  }
  let value = Value.Default(schema, structuredClone(input ?? {}));
  if (options.convert) value = numbersFromText(schema, value);
  const check = checker(schema);
  if (check.Check(value)) return value as Static<T>;
  const details = describe(check, value, location);
  throw badRequest(
    location === 'body' ? 'invalid_body' : 'invalid_query',
    details.map((d) => `${d.field}: ${d.message}`).join('; '),
    details,
  );
}

/** Like parse, for messages between processes: a failure is the sender's bug, reported as 400. */
export const accept = <T extends TSchema>(schema: T, input: unknown): Static<T> => parse(schema, input, 'body');

// Far deeper than any contract; cloning and checking recurse, so deeper input would overflow the stack.
const MAX_DEPTH = 32;

/** Whether `value` nests deeper than `limit`, found without recursion. */
function depthOver(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [next, depth] = stack.pop()!;
    if (typeof next !== 'object' || next === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(next)) stack.push([child, depth + 1]);
  }
  return false;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Query strings carry text; a numeric field gets a number only when its text is a plain
 * decimal of a size a double holds exactly. Anything else ("1e1", "0x10", " 5", "", 30 digits)
 * stays text and fails validation, rather than being coerced into a number the client did not write.
 */
function numbersFromText(schema: TSchema, value: unknown): unknown {
  const properties = (schema as { properties?: Record<string, { type?: string }> }).properties;
  if (!properties || typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, property] of Object.entries(properties)) {
    const text = out[key];
    if ((property.type === 'integer' || property.type === 'number') && typeof text === 'string' && DECIMAL.test(text)) {
      // Digits beyond a double's exact range stay text and fail as "must be an integer/number".
      const number = Number(text);
      if (Math.abs(number) <= Number.MAX_SAFE_INTEGER) out[key] = number;
    }
  }
  return out;
}

function describe(check: TypeCheck<TSchema>, value: unknown, location: Location): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const error of check.Errors(value)) {
    const field = fieldName(location, error.path);
    // A union reports once per branch; the first message per field is the clearest.
    if (seen.has(field)) continue;
    seen.add(field);
    details.push({ field, message: explain(error.schema, error.message) });
    if (details.length >= 20) break;
  }
  return details;
}

function fieldName(location: Location, path: string): string {
  const parts = path.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [location, ...parts].join('.');
}

function explain(schema: TSchema, fallback: string): string {
  if (fallback === 'Unexpected property') return 'is not an accepted field';
  if (fallback.startsWith('Expected required property')) return 'is required';
  const s = schema as Record<string, unknown>;
  const range = [
    s.minimum !== undefined ? `>= ${s.minimum}` : undefined,
    s.exclusiveMinimum !== undefined ? `> ${s.exclusiveMinimum}` : undefined,
    s.maximum !== undefined ? `<= ${s.maximum}` : undefined,
  ].filter(Boolean);
  if (s.type === 'integer') return `must be an integer${range.length ? ` ${range.join(' and ')}` : ''}`;
  if (s.type === 'number') return `must be a finite number${range.length ? ` ${range.join(' and ')}` : ''}`;
  if (s.type === 'string') {
    if (typeof s.description === 'string') return `must be ${s.description}`;
    if (s.maxLength !== undefined && s.minLength !== undefined) {
      return `must be a string of ${s.minLength} to ${s.maxLength} characters`;
    }
    if (s.maxLength !== undefined) return `must be a string of at most ${s.maxLength} characters`;
    return 'must be a string';
  }
  if (Array.isArray(s.anyOf)) {
    const constants = (s.anyOf as Record<string, unknown>[]).map((b) => b.const).filter((c) => c !== undefined);
    if (constants.length) return `must be one of ${constants.join(', ')}`;
  }
  if (s.const !== undefined) return `must be ${String(s.const)}`;
  if (s.type === 'array') return `must be an array of ${s.minItems ?? 0} to ${s.maxItems ?? 'any number of'} items`;
  if (s.type === 'object') return 'must be an object';
  return fallback;
}
