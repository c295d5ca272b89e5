// What an attacker types: text with control characters, lone surrogates and line breaks, very
// long text, numbers a double cannot hold, keys that pollute prototypes, arrays where objects
// belong, and plain random JSON. Each arbitrary mixes the hostile with the nearly valid, so
// that cases reach past the first check.
import fc from 'fast-check';

const NASTY_TEXT = [
  '',
  ' ',
  '\u0000',
  'two\nlines',
  'carriage\rreturn',
  'header\r\nInjected: yes',
  'tab\there',
  'bell\u0007',
  'del\u007f',
  'c1 \u0085',
  'lone \ud800',
  'lone \udc00 low',
  '\ufeffbom',
  'rtl \u202e',
  'zero\u200bwidth',
  '😀 emoji',
  '%00',
  '%',
  '%E0%A4%A',
  '../../etc/passwd',
  "' OR 1=1 --",
  "\\'; DROP TABLE sessions; --",
  '${jndi:ldap://127.0.0.1/a}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'emo.api.>',
  '*',
  '>',
  'null',
  'undefined',
  'NaN',
  '0',
  '-1',
];

export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Text of every kind: hostile constants, any code units (lone surrogates too), very long runs. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_TEXT) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('\u0000', '\r', '\n', '\ud800', '\udfff', '\u0085', 'a'), maxLength: 20 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '\u00e9', '😀', '\u0000'), fc.integer({ min: 250, max: 70_000 })).map(([c, n]) => c.repeat(n)) },
);

/** Numbers as JSON carries them: huge, tiny, negative, fractional, at the edges of a double's integers. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 0.5, 4.999, 5, 3600, 3601, 1e9, 1e9 + 1, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308, Number.MIN_VALUE, Number.MAX_SAFE_INTEGER),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Numbers as a query string carries them: anything a client can put after `=`. */
export const hostileNumeral: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '0', '-0', '1', '-1', '5', '60', '100', '101', '1e3', '1E3', '0x10', '0b1', '0o7', '1_000', ' 1', '1 ', '+1', '.5', '5.', '1.0', 'NaN', 'Infinity', '-Infinity', '9007199254740993', '1000000000', '1000000001', '4294967296', '1'.padEnd(22, '0'), '1'.padEnd(400, '9'), '١٢', '１'),
  hostileNumber.map(String),
  hostileText,
);

/** Any JSON value, nested, with prototype-pollution keys among the object keys. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    hostileText,
    fc.array(tie('value'), { maxLength: 5 }),
    tie('object'),
  ),
  object: fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS, 'name', 'streamUri', 'time', 'data', 'source', 'format', 'id', 'path', 'body'), hostileText), tie('value')), { maxLength: 5 })
    .map(ownKeys),
})).value;

/** An object with exactly these own keys, `__proto__` included (as JSON.parse would make it). */
export function ownKeys(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** JSON texts no serializer makes: nesting far deeper than any schema, duplicate and polluting keys, broken text. */
export const hostileJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 100, max: 20_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.integer({ min: 100, max: 20_000 }).map((depth) => '{"name":'.repeat(depth) + '1' + '}'.repeat(depth)),
  fc.constantFrom(
    '{"__proto__": {"polluted": true}, "name": "x", "streamUri": "rtmp://127.0.0.1:1/live/x"}',
    '{"constructor": {"prototype": {"polluted": true}}}',
    '{"name": "a", "name": "b"}',
    '{"name": "\\ud800"}',
    '{"time": 1e400, "data": 1}',
    '{"time": -1e400, "data": "x"}',
    '[{"time": 1, "data": 1}, {"__proto__": []}]',
    '{"name":',
    '{"name": "x"} trailing',
    '\u0000',
    '',
    'null',
    '"just a string"',
    '[]',
    '{}',
    '1',
    '\ufeff{}',
  ),
);

/** A session or source id: real ones and everything that is not one. */
export function hostileId(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known) },
    { weight: 1, arbitrary: fc.constantFrom('0'.repeat(24), 'f'.repeat(24), 'a'.repeat(25), 'A'.repeat(24), 'stream', '..', '.', '%2e%2e', '%2F', 'x'.repeat(5000)) },
    { weight: 2, arbitrary: hostileText },
    { weight: 1, arbitrary: known.length ? fc.tuple(fc.constantFrom(...known), hostileText).map(([id, tail]) => id + tail) : hostileText },
  );
}
