// Part of `npm start`: builds the workspace only when its sources changed since the last build
// (`npm ci` builds it through the root `prepare` script), and says so first, since a first
// compile takes about a minute during which nothing else is printed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const projects = ['packages/emulators', 'packages/sdk', 'packages/gateway'];

const dry = spawnSync(process.execPath, [tsc, '-b', '--dry', ...projects], { cwd: root, encoding: 'utf8' });
const output = `${dry.stdout}${dry.stderr}`;
const built = existsSync(new URL('../dist/cli.js', import.meta.url));
const compile = !built || dry.status !== 0 || /would build/.test(output);
if (compile || /A non-dry build would/.test(output)) {
  if (compile) {
    console.log(
      built
        ? 'Portico: sources changed since the last build; compiling them before the gateway starts…'
        : 'Portico: compiling before the first start (about a minute; `npm ci` does this when it installs)…',
    );
  }
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
