import { bootstrapStore } from '../auth/bootstrap.js';
import type { Database } from '../store/db.js';
import { AdminService, type NewAdmin } from './admins.js';

export interface AdminsArgs {
  /** `create` or `reset-password`. */
  sub: string | undefined;
  /** The username (`--name`, or the positional after the subcommand). */
  username: string | undefined;
}

export const ADMINS_USAGE = `  admins create [--name N]      create a dashboard admin (default name "admin") and print its password once
  admins reset-password <name>  set a new password, print it once and sign the admin out everywhere`;

/** `portico admins …`: prints the new password once; returns the exit code. */
export async function adminsCommand(
  db: Database,
  args: AdminsArgs,
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  const admins = new AdminService(db);
  let created: NewAdmin;
  if (args.sub === 'create') {
    const { environment } = await bootstrapStore(db);
    created = await admins.create(environment.id, args.username ?? 'admin');
  } else if (args.sub === 'reset-password' && args.username) {
    created = await admins.resetPassword(args.username);
  } else {
    throw new Error(`Usage:\n${ADMINS_USAGE}`);
  }
  printAdmin(created, out);
  return 0;
}

export function printAdmin(admin: NewAdmin, out: NodeJS.WritableStream = process.stdout): void {
  out.write(
    [
      'Portico dashboard admin. Sign in at /dashboard; the password is shown only once.',
      `  username: ${admin.username}`,
      `  password: ${admin.password}`,
      '',
    ].join('\n'),
  );
}
