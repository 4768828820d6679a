import { open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';

/** The embedded store is open in another process: a second writer would lose its writes. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    /** What to do instead, where the command has a better way than the generic one. */
    instead = 'Stop that gateway before running commands that open the store, or make the change through its HTTP API.',
  ) {
    super(
      `The embedded database in ${dataDir} is in use by another Portico process (pid ${pid}). ${instead}`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * Takes the data directory for this process: PGlite holds the embedded database in memory and
 * writes it back on its own schedule, so two processes on one directory silently lose writes. The
 * lock is a file naming the holder's pid; one whose holder is gone is taken over. Resolves with the
 * function that releases it.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, 'portico.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return async () => {
        await unlink(file).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (pid && pid !== process.pid && alive(pid)) throw new DataDirInUseError(dataDir, pid);
      // Left behind by a process that is gone (or unreadable): take it over.
      await unlink(file).catch(() => {});
    }
  }
  throw new Error(`could not lock the data directory ${dataDir}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
