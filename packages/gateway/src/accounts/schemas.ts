import { type Static, Type } from '@sinclair/typebox';
import { ACCOUNT_STATUSES } from '../store/accounts.js';

export const AuthorizationLinkBody = Type.Object(
  {
    connection_name: Type.String({ minLength: 1, maxLength: 64 }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: '1–256 characters without control characters, e.g. user_42',
    }),
    redirect_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description: 'an absolute http(s) URL',
      }),
    ),
    state: Type.Optional(Type.String({ maxLength: 2048 })),
    user_verify_url: Type.Optional(
      Type.String({
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description:
          'opt-in user verification: after consent the browser goes here with auth_request_id, and the account becomes ACTIVE once you call POST /api/v1/connected-accounts/verify',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AuthorizationLinkBody = Static<typeof AuthorizationLinkBody>;

export const VerifyUserBody = Type.Object(
  {
    auth_request_id: Type.String({
      pattern: '^areq_[0-9A-Za-z]{1,60}$',
      description: 'the auth_request_id your user_verify_url received (areq_…)',
    }),
    identifier: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: 'the identifier of the user your application has signed in',
    }),
  },
  { additionalProperties: false },
);
export type VerifyUserBody = Static<typeof VerifyUserBody>;

export const ListAccountsQuery = Type.Object(
  {
    connection_name: Type.Optional(Type.String({ maxLength: 64 })),
    identifier: Type.Optional(Type.String({ maxLength: 256 })),
    status: Type.Optional(Type.Union(ACCOUNT_STATUSES.map((s) => Type.Literal(s)))),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    page_token: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ListAccountsQuery = Static<typeof ListAccountsQuery>;

export interface AccountView {
  id: string;
  connection_name: string;
  provider: string;
  identifier: string;
  status: string;
  status_reason: string | null;
  scopes: string[];
  token_expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  updated_at: string;
}
