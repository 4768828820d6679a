import { Problem } from '../errors/problem.js';
import type { Database } from '../store/db.js';
import { findEnvironment, setBranding } from '../store/environments.js';

/**
 * The application's name and look on the pages Portico shows its end users (the link's landing
 * page, the credential form, results and errors), per environment.
 */
export interface Branding {
  display_name?: string;
  /** An https image, shown at most 48 px high. */
  logo_url?: string;
  /** #rrggbb: buttons and headings. */
  accent_color?: string;
  /** Where a user in trouble gets help: an http(s) or mailto: URL. */
  support_url?: string;
}

const FIELDS = ['display_name', 'logo_url', 'accent_color', 'support_url'] as const;
const CACHE_MS = 10_000;

/** What is wrong with each field, by JSON path. */
function faults(branding: Branding): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  const url = (value: string, schemes: string[]) => {
    try {
      const parsed = new URL(value);
      return schemes.includes(parsed.protocol) && (parsed.protocol === 'mailto:' || Boolean(parsed.hostname));
    } catch {
      return false;
    }
  };
  const { display_name, logo_url, accent_color, support_url } = branding;
  if (
    display_name !== undefined &&
    (!display_name.trim() ||
      display_name.length > 80 ||
      /[<>]/.test(display_name) ||
      [...display_name].some((c) => c.charCodeAt(0) < 0x20))
  )
    out.push({
      path: '/branding/display_name',
      message: 'must be 1–80 characters without control characters, "<" or ">"',
    });
  if (logo_url !== undefined && (logo_url.length > 2048 || !url(logo_url, ['https:'])))
    out.push({ path: '/branding/logo_url', message: 'must be an absolute https URL of an image' });
  if (accent_color !== undefined && !/^#[0-9a-fA-F]{6}$/.test(accent_color))
    out.push({ path: '/branding/accent_color', message: 'must be a colour as #rrggbb, e.g. #4f46e5' });
  if (
    support_url !== undefined &&
    (support_url.length > 2048 || !url(support_url, ['https:', 'http:', 'mailto:']))
  )
    out.push({ path: '/branding/support_url', message: 'must be an absolute http(s) or mailto: URL' });
  return out;
}

export class BrandingService {
  private readonly cache = new Map<string, { branding: Branding; until: number }>();

  constructor(private readonly db: Database) {}

  /** The environment's branding (empty when none is set, or the environment is unknown). */
  async get(environmentId: string): Promise<Branding> {
    const cached = this.cache.get(environmentId);
    if (cached && cached.until > Date.now()) return cached.branding;
    const row = await findEnvironment(this.db, environmentId);
    const branding = pick(row?.branding ?? {});
    this.cache.set(environmentId, { branding, until: Date.now() + CACHE_MS });
    return branding;
  }

  /** Throws invalid_input naming each wrong field; the branding as it would be stored. */
  check(branding: Branding): Branding {
    const clean = pick(branding as Record<string, unknown>);
    const errors = faults(clean);
    if (errors.length) {
      throw new Problem(
        'invalid_input',
        `The branding is invalid: ${errors.map((e) => `${e.path.slice(1).replace('/', '.')} ${e.message}`).join('; ')}.`,
        { errors },
      );
    }
    return clean;
  }

  /** Replaces the branding; an empty object removes it. */
  async set(environmentId: string, branding: Branding): Promise<Branding> {
    const clean = this.check(branding);
    await setBranding(
      this.db,
      environmentId,
      Object.keys(clean).length ? (clean as Record<string, string>) : null,
    );
    this.cache.delete(environmentId);
    return clean;
  }
}

function pick(value: Record<string, unknown>): Branding {
  const out: Branding = {};
  for (const field of FIELDS)
    if (typeof value[field] === 'string' && value[field]) out[field] = value[field] as string;
  return out;
}
