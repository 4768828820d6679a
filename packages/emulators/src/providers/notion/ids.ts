import { createHash, randomUUID } from 'node:crypto';

/**
 * A UUID derived from a seed string, so seeded objects keep their ids across resets and tests
 * and docs can name them. Version/variant bits are set so it looks like the v4 ids Notion returns.
 */
export function stableId(seed: string): string {
  const hex = createHash('sha256').update(`notion:${seed}`).digest('hex').slice(0, 32).split('');
  hex[12] = '4';
  hex[16] = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return hyphenate(hex.join(''));
}

/** The one data source of a database (API version 2025-09-03): a stable id of its own. */
export function dataSourceIdFor(databaseId: string): string {
  return stableId(`data-source:${databaseId}`);
}

export function newId(): string {
  return randomUUID();
}

function hyphenate(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Notion accepts ids with or without hyphens (as they appear in page URLs) and returns them hyphenated. */
export function parseId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const hex = raw.trim().toLowerCase().replace(/-/g, '');
  return /^[0-9a-f]{32}$/.test(hex) ? hyphenate(hex) : null;
}

export function compactId(id: string): string {
  return id.replace(/-/g, '');
}

/** Short property ids like Notion's (`title` is fixed for the title property). */
export function propertyId(seed: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const digest = createHash('sha256').update(`notion-property:${seed}`).digest();
  let id = '';
  for (let i = 0; i < 4; i++) id += alphabet[(digest[i] ?? 0) % alphabet.length];
  return id;
}
