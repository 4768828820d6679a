import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Runs `portico <args>` to completion. */
export function runCli(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', PORTICO_LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `portico <args>` without blocking this process (an in-process gateway must go on answering
 * it); `input` is written to its standard input.
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', PORTICO_LOG_LEVEL: 'warn', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  child.stdin.end(input ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`portico ${args.join(' ')} did not finish:\n${stdout}\n${stderr}`));
    }, 60_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

export interface RunningGateway {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout(): string;
  exited: Promise<number | null>;
}

/** Starts `portico start` and resolves once it logs that it is ready. */
export async function startCli(env: Record<string, string>): Promise<RunningGateway> {
  const child = spawn(process.execPath, [CLI, 'start'], {
    env: { PATH: process.env.PATH ?? '', PORTICO_PORT: '0', PORTICO_HOST: '127.0.0.1', ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${out}`)), 60_000);
    const check = () => {
      const match = /"url":"(http:\/\/[^"]+)".*"msg":"Portico is ready"/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.on('data', check);
    exited.then(() => reject(new Error(`gateway exited:\n${out}`)));
  });
  return { child, url, stdout: () => out, exited };
}
