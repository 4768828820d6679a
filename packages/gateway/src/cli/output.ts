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

/**
 * The SDK's camelCase fields as the API and the rest of the CLI spell them (snake_case). Top-level
 * keys only: nested values are provider data, definitions or user-chosen names, shown as they are.
 */
export function snakeKeys<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]),
  ) as T;
}

/**
 * An API error's hint as a CLI user acts on it: `GET /api/v1/connections` becomes
 * `portico connections list`. Endpoints the CLI has no command for stay as they are.
 */
const CLI_EQUIVALENTS: Array<[RegExp, string]> = [
  [/\bGET \/api\/v1\/connections\b(?!\/)/g, 'portico connections list'],
  [/\bPOST \/api\/v1\/connections\b(?!\/)/g, 'portico connections create'],
  [/\bGET \/api\/v1\/providers\b(?!\/)/g, 'portico providers list'],
  [/\bPOST \/api\/v1\/providers\b(?!\/)/g, 'portico providers create'],
  [/\bGET \/api\/v1\/tools\b(?!\/)/g, 'portico tools list'],
  [/\bGET \/api\/v1\/mcp\/tokens\b(?!\/)/g, 'portico mcp-tokens list'],
  [/\bPOST \/api\/v1\/mcp\/tokens\b(?!\/)/g, 'portico mcp-tokens create'],
  [/\bGET \/api\/v1\/clients\b(?!\/)/g, 'portico clients list'],
  [/\bGET \/api\/v1\/connected-accounts\b(?!\/)/g, 'portico accounts list'],
  [/\bGET \/api\/v1\/executions\b(?!\/)/g, 'portico executions list'],
  [/\bGET \/api\/v1\/webhooks\b(?!\/)/g, 'portico webhooks list'],
  [/\bPOST \/api\/v1\/webhooks\b(?!\/)/g, 'portico webhooks create'],
  [/\bGET \/api\/v1\/events\b(?!\/)/g, 'portico events list'],
];

export function cliWording(detail: string): string {
  return CLI_EQUIVALENTS.reduce(
    (text, [pattern, command]) => text.replace(pattern, `\`${command}\``),
    detail,
  );
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
