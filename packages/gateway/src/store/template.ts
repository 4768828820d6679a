import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A new embedded store starts from a template made by `npm run build`: a fresh PostgreSQL data
 * directory, as PGlite's initdb leaves it, packed with gzip (about 2.5 MB). Running initdb at first
 * start took 2–3 s and grew PGlite's WebAssembly memory to ~700 MB; unpacking takes well under one.
 * The template holds no migration and no data: the gateway migrates and bootstraps it as it would a
 * store initdb made, so no two installations share an id or a secret. It is named for the PGlite
 * version that made it; another version, or no template, falls back to initdb.
 * Nor does it hold the template databases (template0, template1): the gateway uses `postgres` only
 * and never creates a database, and they were 600 of its 1,000 files. Creating a file is what
 * unpacking costs (about 0.5 ms each on a virtual machine's ext4), so they were a third of a first start.
 */
const pgliteEntry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
const PGLITE_VERSION = (
  JSON.parse(readFileSync(path.join(path.dirname(pgliteEntry), '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** Where the build puts the template: the gateway package's dist/ (from src/ and dist/ alike). */
export const STORE_TEMPLATE = fileURLToPath(
  new URL(`../../dist/store-template-${PGLITE_VERSION}.tar.gz`, import.meta.url),
);

/** The template, when the build made one for this PGlite version. */
export async function readStoreTemplate(): Promise<Blob | undefined> {
  try {
    return new Blob([await readFile(STORE_TEMPLATE)]);
  } catch {
    return undefined;
  }
}

/** Whether `dataDir` holds nothing yet (a template may only be unpacked into an empty place). */
export async function isEmptyDir(dataDir: string): Promise<boolean> {
  if (!existsSync(dataDir)) return true;
  return (await readdir(dataDir)).length === 0;
}

/** Makes the template unless this PGlite version's is already there (the build calls this). */
export async function writeStoreTemplate(): Promise<string> {
  if (existsSync(STORE_TEMPLATE)) return STORE_TEMPLATE;
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create('memory://');
  try {
    // One statement per call: DROP DATABASE may not run inside a multi-statement transaction.
    for (const sql of [
      "UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')",
      'DROP DATABASE template0',
      'DROP DATABASE template1',
      'CHECKPOINT',
    ]) {
      await db.exec(sql);
    }
    const dump = await db.dumpDataDir('gzip');
    await mkdir(path.dirname(STORE_TEMPLATE), { recursive: true });
    await writeFile(STORE_TEMPLATE, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await db.close();
  }
  return STORE_TEMPLATE;
}
