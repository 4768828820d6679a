import type { FastifyInstance } from 'fastify';
import type { ProviderContext } from '../../../core/types.js';
import { notionRoute } from '../api.js';
import { notFound } from '../errors.js';
import type { NotionState } from '../model.js';
import { listBody, paginate, parsePageSize } from '../pagination.js';
import { renderBot, renderPerson } from '../users.js';
import { pathId } from '../workspace.js';

export function registerUserRoutes(
  app: FastifyInstance,
  ctx: ProviderContext,
  getState: () => NotionState,
): void {
  app.get(
    '/v1/users/me',
    notionRoute(ctx, getState, ({ ws, owner, botId }) => renderBot(owner, botId, ws.identity)),
  );

  app.get(
    '/v1/users',
    notionRoute(ctx, getState, ({ ws, owner, query }) => {
      const pageSize = parsePageSize(query.page_size, 'query');
      const people = ws.identity.members.map((m) => renderPerson(m));
      const bots = [...ws.bots].map((id) => renderBot(owner, id, ws.identity));
      const page = paginate([...people, ...bots], (u) => String(u.id), query.start_cursor, pageSize);
      return listBody(page, 'user');
    }),
  );

  app.get(
    '/v1/users/:user_id',
    notionRoute(ctx, getState, ({ ws, owner, params }) => {
      const id = pathId(params.user_id, 'user_id');
      const member = ws.identity.members.find((m) => m.id === id);
      if (member) return renderPerson(member);
      if (ws.bots.has(id)) return renderBot(owner, id, ws.identity);
      throw notFound('user', id);
    }),
  );
}
