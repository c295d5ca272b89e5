// Values are bound into SQL here and nowhere else. ClickHouse 18.16 has no server-side query
// parameters, so every value is validated and escaped on the client by this one function.
export type SqlValue = string | number | boolean | null | readonly SqlValue[];

export function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot bind a non-finite number (${value}) into SQL`);
    if (!Number.isInteger(value)) return String(value);
    // Past 2^53 toFixed writes exponents ("1e+21") and the digits are not the value anyway.
    if (!Number.isSafeInteger(value)) throw new TypeError(`cannot bind an integer beyond 2^53 (${value}) into SQL`);
    return value.toFixed(0);
  }
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'string') return `'${escapeString(value)}'`;
  throw new TypeError(`cannot bind a ${typeof value} into SQL`);
}

function escapeString(text: string): string {
  let out = '';
  for (const char of text) {
    switch (char) {
      case '\\': out += '\\\\'; break;
      case "'": out += "\\'"; break;
      case '\0': out += '\\0'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\t': out += '\\t'; break;
      case '\b': out += '\\b'; break;
      case '\f': out += '\\f'; break;
      default: out += char;
    }
  }
  return out;
}

/** Tagged template: sql`SELECT * FROM t WHERE id = ${id}` binds every interpolation as a literal. */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): string {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += literal(value) + (strings[i + 1] ?? '');
  });
  return out;
}
