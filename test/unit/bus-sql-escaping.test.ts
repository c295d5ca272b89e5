// storage/clickhouse/sql.ts is the only way values enter SQL. Each string literal it makes is read back
// here by the rules of ClickHouse's lexer: the value must come back whole and the literal must
// end exactly where it should, whatever the string holds.
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import { literal, sql } from '../../storage/clickhouse/sql.ts';

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', 0: '\0', '\\': '\\', "'": "'" };

/** Reads a quoted literal at the start of `text`; returns its value and where it ended. */
function readString(text: string): { value: string; end: number } {
  assert.is(text[0], "'");
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const char = text[i]!;
    if (char === "'") return { value, end: i + 1 };
    if (char === '\\') {
      const next = text[++i]!;
      assert.ok(next in ESCAPES, `unexpected escape \\${next}`);
      value += ESCAPES[next];
    } else {
      value += char;
    }
  }
  throw new Error(`unterminated literal: ${text}`);
}

const HOSTILE = [
  "it's",
  "'; DROP TABLE sessions; --",
  "\\'; DROP TABLE sessions; --",
  'back\\slash\\',
  '\\',
  "\\'",
  "''",
  'nul\0byte',
  'line\nbreak\r\nand\ttab',
  '\b\f',
  'ünïcødé ✓ 😀',
  '',
  '\u2028\u2029',
];

test('strings come back whole, and the literal ends where it should', () => {
  for (const value of HOSTILE) {
    const text = literal(value);
    const read = readString(text);
    assert.is(read.value, value, JSON.stringify(value));
    assert.is(read.end, text.length, `literal of ${JSON.stringify(value)} ends early: ${text}`);
  }
});

test('special characters are escaped, none left raw', () => {
  assert.is(literal("it's"), "'it\\'s'");
  assert.is(literal('a\\b'), "'a\\\\b'");
  assert.is(literal('\0'), "'\\0'");
  assert.is(literal('\n\r\t'), "'\\n\\r\\t'");
  assert.not.match(literal('x\ny\0z\r'), /[\n\r\0]/);
});

test('numbers: finite only, integers without exponent noise', () => {
  assert.is(literal(42), '42');
  assert.is(literal(-7), '-7');
  assert.is(literal(1.5), '1.5');
  assert.is(literal(1_700_000_000_123), '1700000000123');
  assert.is(literal(-0), '0');
  for (const bad of [NaN, Infinity, -Infinity]) {
    assert.throws(() => literal(bad), /non-finite/, String(bad));
  }
});

test('booleans, null and arrays', () => {
  assert.is(literal(true), '1');
  assert.is(literal(false), '0');
  assert.is(literal(null), 'NULL');
  assert.is(literal(['a', "b'", 3]), "['a', 'b\\'', 3]");
  assert.is(literal([]), '[]');
  assert.throws(() => literal([1, NaN]), /non-finite/);
});

test('values of other types are refused', () => {
  assert.throws(() => literal(undefined as never), TypeError);
  assert.throws(() => literal({ toString: () => "1' OR 1=1" } as never), TypeError);
  assert.throws(() => literal(10n as never), TypeError);
});

test('sql`` binds every interpolation as a literal', () => {
  const user = "alice' OR user != '";
  const query = sql`SELECT id FROM sessions WHERE user = ${user} AND created_ms >= ${1000} LIMIT ${5}`;
  assert.is(query, "SELECT id FROM sessions WHERE user = 'alice\\' OR user != \\'' AND created_ms >= 1000 LIMIT 5");
  const start = query.indexOf("'");
  const read = readString(query.slice(start));
  assert.is(read.value, user);
  assert.is(query.slice(start + read.end), ' AND created_ms >= 1000 LIMIT 5');
  assert.throws(() => sql`LIMIT ${Infinity}`, /non-finite/);
  assert.is(sql`SELECT 1`, 'SELECT 1');
});

test.run();
