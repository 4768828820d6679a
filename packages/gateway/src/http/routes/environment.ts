import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Branding, BrandingService } from '../../authorization/branding.js';
import { MAX_ALLOWLIST_ENTRIES, type RedirectAllowlist } from '../../authorization/redirect-allowlist.js';

const BrandingBody = Type.Object(
  {
    display_name: Type.Optional(
      Type.String({ maxLength: 80, description: 'the application’s name on Portico’s pages' }),
    ),
    logo_url: Type.Optional(
      Type.String({ maxLength: 2048, description: 'an https image, shown at most 48 px high' }),
    ),
    accent_color: Type.Optional(
      Type.String({ maxLength: 7, description: '#rrggbb, for buttons and headings' }),
    ),
    support_url: Type.Optional(
      Type.String({ maxLength: 2048, description: 'an http(s) or mailto: URL where users get help' }),
    ),
  },
  { additionalProperties: false, description: 'replaces the branding; {} removes it' },
);

const UpdateEnvironmentBody = Type.Object(
  {
    redirect_url_allowlist: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
        maxItems: MAX_ALLOWLIST_ENTRIES,
        description:
          'origins (https://app.example.com) or URL prefixes (https://app.example.com/oauth/) this environment’s links may send the browser to, on top of PORTICO_REDIRECT_URL_ALLOWLIST; [] removes them',
      }),
    ),
    branding: Type.Optional(BrandingBody),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** The calling client's environment and its settings: where links may redirect, and its look. */
export async function environmentRoutes(
  app: FastifyInstance,
  opts: { redirects: RedirectAllowlist; branding: BrandingService },
): Promise<void> {
  const { redirects, branding } = opts;
  const view = async (environmentId: string) => ({
    ...(await redirects.view(environmentId)),
    branding: await branding.get(environmentId),
  });

  app.get(
    '/environment',
    { schema: { summary: "This client's environment: its redirect_url allow-list and its branding" } },
    async (req) => view(req.principal.environmentId),
  );

  app.patch(
    '/environment',
    {
      schema: {
        summary:
          "Set the environment's redirect_url allow-list (extends PORTICO_REDIRECT_URL_ALLOWLIST) and its branding on the pages end users see",
        body: UpdateEnvironmentBody,
      },
    },
    async (req) => {
      const body = req.body as { redirect_url_allowlist?: string[]; branding?: Branding };
      const environmentId = req.principal.environmentId;
      // Both are checked before either is stored: a request changes all it names, or nothing.
      if (body.branding) branding.check(body.branding);
      if (body.redirect_url_allowlist) await redirects.update(environmentId, body.redirect_url_allowlist);
      if (body.branding) await branding.set(environmentId, body.branding);
      return view(environmentId);
    },
  );
}
