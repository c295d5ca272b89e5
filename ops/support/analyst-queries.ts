// The analyst queries of docs/analysts.md, word for word, with its placeholders ('SESSION', 'USER')
// bound: the tests run the documentation itself, so it cannot drift from the schema.
import { literal } from '../../storage/clickhouse/sql.ts';

export interface AnalystQuery {
  /** The query's leading comment. */
  title: string;
  sql: string;
}

export function analystQueries(readme: string, values: Record<string, string>): AnalystQuery[] {
  const block = /```sql\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('docs/analysts.md has no sql block');
  return block
    .split(/;\s*\n/)
    .map((text) => text.trim())
    .filter((text) => /\bSELECT\b/i.test(text))
    .map((text) => ({
      title: /^--\s*(.*)$/m.exec(text)?.[1] ?? text.slice(0, 60),
      sql: text.replace(/'([A-Z]+)'/g, (placeholder, name: string) => (name in values ? literal(values[name]!) : placeholder)),
    }));
}
