/** How the CLI shows results: aligned tables and key/value lists for people, JSON for scripts. */

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** Longer cells are cut with an ellipsis. */
  max?: number;
}

type Out = { write(text: string): unknown };

function cell(value: unknown, max?: number): string {
  const text =
    value === null || value === undefined
      ? '-'
      : Array.isArray(value)
        ? value.join(',') || '-'
        : String(value).replace(/\s+/g, ' ');
  return max && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function printJson(value: unknown, out: Out = process.stdout): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printTable<T>(rows: T[], columns: Column<T>[], out: Out = process.stdout): void {
  if (!rows.length) {
    out.write('(none)\n');
    return;
  }
  const cells = rows.map((row) => columns.map((c) => cell(c.value(row), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    `${values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()}\n`;
  out.write(line(columns.map((c) => c.header)));
  for (const row of cells) out.write(line(row));
}

/** One object as `key: value` lines (nested values as compact JSON). */
export function printFields(value: object, out: Out = process.stdout): void {
  const entries = Object.entries(value);
  const width = Math.max(...entries.map(([k]) => k.length));
  for (const [key, v] of entries) {
    const text = v !== null && typeof v === 'object' && !Array.isArray(v) ? JSON.stringify(v) : cell(v);
    out.write(`${`${key}:`.padEnd(width + 2)}${text}\n`);
  }
}
