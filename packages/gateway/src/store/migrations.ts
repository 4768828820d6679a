/**
 * The schema, as ordered migrations. Both backends (PGlite and PostgreSQL) run exactly these
 * statements. Never edit an applied migration; add the next one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'foundation',
    sql: `
CREATE TABLE environments (
  id          text PRIMARY KEY,
  name        text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE gateway_clients (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name            text NOT NULL,
  secret_hash     text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);

-- client_secret holds a sealed value (see secrets/keyring.ts), never plaintext.
CREATE TABLE connections (
  id              text PRIMARY KEY,
  environment_id  text NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  name            text NOT NULL,
  provider        text NOT NULL,
  client_id       text NOT NULL,
  client_secret   text NOT NULL,
  scopes          text[] NOT NULL DEFAULT '{}',
  sandbox         boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (environment_id, name)
);
`,
  },
];
