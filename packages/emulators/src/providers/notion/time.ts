/** Notion rounds object timestamps down to the minute. */
export function notionTime(ms: number): string {
  return new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
}
