import { Problem } from '../errors/problem.js';
import { findBuiltInProvider } from '../providers/catalog.js';
import { listConnections } from '../store/connections.js';
import type { Queryable } from '../store/db.js';
import { closestName, plainName } from '../validation/closest-name.js';

/** Enough connections to find a near miss among; an environment with more gets none past these. */
const CANDIDATES = 500;

/**
 * The answer to a connection name that names none: `connection_not_found` with the connection the
 * caller most likely meant, chosen among those it may reach (`within`, as auth/access.ts's
 * listFilter gives it: null for all; undefined when the caller's reach is not known here, which
 * suggests nothing). A provider's name is the likeliest mistake ("notion" for "notion-prod"),
 * then a misspelt name.
 */
export async function unknownConnection(
  db: Queryable,
  environmentId: string,
  name: string,
  within: readonly string[] | null | undefined,
  hint: string,
): Promise<Problem> {
  const candidates =
    within === undefined
      ? []
      : await listConnections(db, environmentId, {
          limit: CANDIDATES,
          ...(within ? { names: within } : {}),
        });
  const wanted = plainName(name);
  const ofProvider = candidates.filter(
    (c) =>
      plainName(c.provider) === wanted ||
      plainName(findBuiltInProvider(c.provider)?.displayName ?? '') === wanted,
  );
  const suggestion =
    ofProvider[0]?.name ??
    closestName(
      name,
      candidates.map((c) => c.name),
    );
  const others = ofProvider.slice(1, 5).map((c) => `"${c.name}"`);
  const meant = suggestion
    ? ` (did you mean "${suggestion}"${others.length ? `, or ${others.join(', ')}` : ''}?)`
    : '';
  return new Problem('connection_not_found', `No connection is named "${name}"${meant}; ${hint}`, {
    extensions: { connection_name: name, ...(suggestion ? { did_you_mean: suggestion } : {}) },
  });
}
