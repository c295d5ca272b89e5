// Reads the Prometheus text exposition format (what /metrics answers) into samples, for tests
// that check a process's metrics. prom-client writes it but has no reader.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const ESCAPES: Record<string, string> = { n: '\n', '\\': '\\', '"': '"' };

/** Every sample of the text; comments (# HELP, # TYPE) and blank lines are skipped. */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name) throw new Error(`not a sample: ${line}`);
    let at = name.length;
    const labels: Record<string, string> = {};
    if (line[at] === '{') {
      at++;
      while (line[at] !== '}') {
        const label = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(at));
        if (!label) throw new Error(`bad labels: ${line}`);
        at += label[0].length;
        let value = '';
        while (line[at] !== '"') {
          if (at >= line.length) throw new Error(`unterminated label value: ${line}`);
          if (line[at] === '\\') value += ESCAPES[line[++at] ?? ''] ?? `\\${line[at]}`;
          else value += line[at];
          at++;
        }
        labels[label[1]!] = value;
        at++;
        if (line[at] === ',') at++;
      }
      at++;
    }
    const [value] = line.slice(at).trim().split(/\s+/);
    samples.push({ name, labels, value: parseValue(value ?? '') });
  }
  return samples;
}

// Prometheus reads these case-insensitively, and prom-client writes NaN as "Nan".
function parseValue(text: string): number {
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`not a sample value: "${text}"`);
  return value;
}

/** The samples named `name` whose labels include `labels`. */
export function select(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
}

/** The sum of those samples' values; undefined when there is none. */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = select(samples, name, labels);
  return found.length ? found.reduce((sum, s) => sum + s.value, 0) : undefined;
}
