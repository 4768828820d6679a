import { cliActor, recordAuditNow } from '../audit/service.js';
import { bootstrapStore } from '../auth/bootstrap.js';
import type { Database } from '../store/db.js';
import { type AdminRole, AdminService, type NewAdmin } from './admins.js';

export interface AdminsArgs {
  /** `create` or `reset-password`. */
  sub: string | undefined;
  /** The username (`--name`, or the positional after the subcommand). */
  username: string | undefined;
  /** `--role admin|viewer` for `create` (default admin). */
  role?: string | undefined;
}

export const ADMINS_USAGE = `  admins create [--name N] [--role admin|viewer]
                                create a dashboard admin (default name "admin"; a viewer only reads)
                                and print its password once
  admins reset-password <name>  set a new password, print it once and sign the admin out everywhere`;

/** `portico admins …`: prints the new password once; returns the exit code. */
export async function adminsCommand(
  db: Database,
  args: AdminsArgs,
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const admins = new AdminService(db);
  const { environment } = await bootstrapStore(db);
  let created: NewAdmin;
  if (args.sub === 'create') {
    created = await admins.create(
      environment.id,
      args.username ?? 'admin',
      undefined,
      (args.role ?? 'admin') as AdminRole,
    );
  } else if (args.sub === 'reset-password' && args.username) {
    created = await admins.resetPassword(args.username);
  } else {
    throw new Error(`Usage:\n${ADMINS_USAGE}`);
  }
  await recordAuditNow(db, {
    environmentId: environment.id,
    ...cliActor(),
    action: args.sub === 'create' ? 'admin.created' : 'admin.password_reset',
    resourceType: 'admin',
    resourceId: created.username,
    details: args.sub === 'create' ? { role: created.role ?? 'admin' } : {},
  });
  printAdmin(created, out);
  return 0;
}

export function printAdmin(admin: NewAdmin, out: NodeJS.WritableStream = process.stdout): void {
  out.write(
    [
      'Portico dashboard admin. Sign in at /dashboard; the password is shown only once.',
      `  username: ${admin.username}`,
      `  password: ${admin.password}`,
      ...(admin.role === 'viewer' ? ['  role:     viewer (reads only)'] : []),
      '',
    ].join('\n'),
  );
}
