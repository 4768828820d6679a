import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MAX_ALLOWLIST_ENTRIES, type RedirectAllowlist } from '../../authorization/redirect-allowlist.js';

const UpdateEnvironmentBody = Type.Object(
  {
    redirect_url_allowlist: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
      maxItems: MAX_ALLOWLIST_ENTRIES,
      description:
        'origins (https://app.example.com) or URL prefixes (https://app.example.com/oauth/) this environment’s links may send the browser to, on top of PORTICO_REDIRECT_URL_ALLOWLIST; [] removes them',
    }),
  },
  { additionalProperties: false },
);

/** The calling client's environment and its settings (today: where links may redirect). */
export async function environmentRoutes(
  app: FastifyInstance,
  opts: { redirects: RedirectAllowlist },
): Promise<void> {
  const { redirects } = opts;

  app.get(
    '/environment',
    { schema: { summary: "This client's environment and its redirect_url allow-list" } },
    async (req) => redirects.view(req.principal.environmentId),
  );

  app.patch(
    '/environment',
    {
      schema: {
        summary: "Set the environment's redirect_url allow-list (extends PORTICO_REDIRECT_URL_ALLOWLIST)",
        body: UpdateEnvironmentBody,
      },
    },
    async (req) =>
      redirects.update(
        req.principal.environmentId,
        (req.body as { redirect_url_allowlist: string[] }).redirect_url_allowlist,
      ),
  );
}
