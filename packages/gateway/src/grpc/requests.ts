import { Type } from '@sinclair/typebox';
import { Problem } from '../errors/problem.js';
import { PROVIDER_KEYS } from '../providers/catalog.js';
import { unsafeInput } from '../validation/text-safety.js';
import { compileValidator, summarize } from '../validation/validator.js';

/**
 * Checks on gRPC request fields, with the REST API's rules and wording: protobuf only says a field
 * is a string. Field paths are the proto field names (`/identifier`, `/connector`).
 */
const Identifier = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[^\\u0000-\\u001f]+$',
  description: '1–256 characters without control characters, e.g. user_42',
});
const ConnectionName = Type.String({ minLength: 1, maxLength: 64 });
const AccountId = Type.String({
  pattern: '^ca_[0-9A-Za-z]{1,60}$',
  description: 'a connected account id (ca_…)',
});

const AccountRef = Type.Object({
  id: Type.Optional(AccountId),
  connector: Type.Optional(ConnectionName),
  identifier: Type.Optional(Identifier),
});
const checkRef = compileValidator<{ id?: string; connector?: string; identifier?: string }>(AccountRef);

const Link = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 2048 })),
  user_verify_url: Type.Optional(
    Type.String({
      format: 'uri',
      pattern: '^https?://',
      maxLength: 2048,
      description: 'an absolute http(s) URL',
    }),
  ),
});
const Verify = Type.Object({
  auth_request_id: Type.String({
    pattern: '^areq_[0-9A-Za-z]{1,60}$',
    description: 'the auth_request_id your user_verify_url received (areq_…)',
  }),
  identifier: Identifier,
});
export const checkVerify = compileValidator<{ auth_request_id: string; identifier: string }>(Verify);

export const checkLinkOptions = compileValidator<{ state?: string; user_verify_url?: string }>(Link);

const Execute = Type.Object({
  tool_name: Type.String({ minLength: 1, maxLength: 100 }),
  identifier: Type.Optional(Identifier),
  connector: Type.Optional(ConnectionName),
  connected_account_id: Type.Optional(AccountId),
});
export const checkExecute = compileValidator<{
  tool_name: string;
  identifier?: string;
  connector?: string;
  connected_account_id?: string;
}>(Execute);

/** Fields with a value (proto3 leaves absent strings empty and absent numbers 0). */
export function present<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined && v !== '' && v !== 0),
  ) as Partial<T>;
}

/** NUL characters and unpaired surrogates are refused here as they are over REST. */
export function refuseUnsafe(fields: Record<string, unknown>): void {
  const found = unsafeInput(fields, '');
  if (found) throw new Problem('invalid_input', summarize([found], 'The request'), { errors: [found] });
}

/** Scalekit scopes accounts by organization or user too; Portico names end users by identifier only. */
export function refuseScopes(req: { organizationId?: string; userId?: string }): void {
  const given = [req.organizationId ? 'organization_id' : '', req.userId ? 'user_id' : ''].filter(Boolean);
  if (given.length) {
    throw new Problem(
      'not_implemented',
      `Portico names end users by identifier only; ${given.join(' and ')} scoping is not supported: remove ${given.length > 1 ? 'them' : 'it'} and pass identifier.`,
      { errors: given.map((field) => ({ path: `/${field}`, message: 'is not supported by Portico' })) },
    );
  }
}

export type AccountRefFields = { id: string } | { connector: string; identifier: string };

/** An account named by id, or by connector and identifier. */
export function accountRef(req: {
  id?: string;
  connector?: string;
  identifier?: string;
  organizationId?: string;
  userId?: string;
}): AccountRefFields {
  refuseScopes(req);
  const fields = present({ id: req.id, connector: req.connector, identifier: req.identifier });
  refuseUnsafe(fields);
  const ref = checkRef(fields);
  if (ref.id) return { id: ref.id };
  if (ref.connector && ref.identifier) return { connector: ref.connector, identifier: ref.identifier };
  const missing = ['connector', 'identifier'].filter((f) => !ref[f as 'connector' | 'identifier']);
  throw new Problem(
    'invalid_input',
    `Name the connected account: send id (ca_…), or connector (the connection name) and identifier; ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing.`,
    { errors: missing.map((f) => ({ path: `/${f}`, message: 'is required when id is not given' })) },
  );
}

export const checkIdentifier = compileValidator<{ identifier: string }>(
  Type.Object({ identifier: Identifier }),
);

/** Offset paging over a list Portico holds in memory (the tool catalog). */
export function pageOf<T>(items: T[], pageSize: number, pageToken: string): { page: T[]; next: string } {
  const offset = pageToken ? Number(Buffer.from(pageToken, 'base64url').toString('utf8')) : 0;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > items.length) {
    throw new Problem(
      'invalid_input',
      'page_token is not a token this API returned; omit it to start from the first page.',
      {
        errors: [{ path: '/page_token', message: 'is not a valid page token' }],
      },
    );
  }
  const size = pageSize > 0 ? pageSize : items.length;
  const end = Math.min(items.length, offset + size);
  return {
    page: items.slice(offset, end),
    next: end < items.length ? Buffer.from(String(end)).toString('base64url') : '',
  };
}

/** A provider named as Portico names it (case-insensitive): a built-in key or an environment's custom one. */
export function checkProvider(value: string, path: string): string {
  const key = value.toLowerCase();
  if (!/^[a-z][a-z0-9_]{1,47}$/.test(key)) {
    throw new Problem(
      'invalid_input',
      `${path.slice(1)} "${value}" is not a provider key; use a built-in one (${PROVIDER_KEYS.slice(0, 7).join(', ')}…) or one of your custom providers.`,
      { errors: [{ path, message: 'must be a provider key (lower-case letters, digits and underscores)' }] },
    );
  }
  return key;
}
