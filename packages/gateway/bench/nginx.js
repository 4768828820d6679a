// nginx as the reference reverse proxy for bench:proxy: one worker, upstream keep-alive, the
// provider's Authorization header injected per location, as an operator would configure it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './lib.js';

/** The nginx binary, or undefined (with the reason) when it is not installed. */
export function findNginx() {
  for (const candidate of [process.env.BENCH_NGINX, 'nginx', '/usr/sbin/nginx'].filter(Boolean)) {
    const probe = spawnSync(candidate, ['-v']);
    if (!probe.error) return { bin: candidate };
  }
  return {
    missing: 'nginx is not installed (Debian: apt-get install nginx); the nginx comparison is skipped',
  };
}

/**
 * Starts nginx in front of `upstream` (an origin); `locations` maps a path prefix to the bearer
 * token nginx adds. Resolves with its URL, the pids of its processes and a stop function.
 */
export async function startNginx(bin, upstream, locations) {
  const prefix = await mkdtemp(path.join(tmpdir(), 'portico-bench-nginx-'));
  const port = await freePort();
  const { host, port: upstreamPort } = new URL(upstream);
  const blocks = Object.entries(locations)
    .map(
      ([location, token]) => `
    location ${location} {
      proxy_pass http://upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer ${token}";
    }`,
    )
    .join('\n');
  const conf = `worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
${tempPaths(prefix)}  client_max_body_size 64m;
  client_body_buffer_size 2m;
  proxy_buffers 8 64k;
  proxy_request_buffering off;
  upstream upstream { server ${host.replace(/:\d+$/, '')}:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
${blocks}
  }
}
`;
  const url = `http://127.0.0.1:${port}`;
  const child = await run(bin, prefix, conf, url);
  return {
    url,
    /** The master and its worker: nginx's CPU is theirs together. */
    async pids() {
      const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').catch(
        () => '',
      );
      return [child.pid, ...children.split(/\s+/).filter(Boolean).map(Number)];
    },
    stop: () => stopNginx(child, prefix),
  };
}

/**
 * nginx as the load balancer in front of several gateway replicas: round robin over upstream
 * keep-alive connections, and a failed connection to one replica retried on the next for requests
 * nginx may repeat (its default: idempotent methods only), as operators configure it.
 */
export async function startBalancer(bin, upstreams, port) {
  const prefix = await mkdtemp(path.join(tmpdir(), 'portico-bench-lb-'));
  const servers = upstreams
    .map((u) => `    server ${new URL(u).host} max_fails=1 fail_timeout=2s;`)
    .join('\n');
  const conf = `worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
${tempPaths(prefix)}  # The proxy's routing headers are connection_name and identifier: nginx drops header names
  # with underscores unless told otherwise (or send x-connection-name and x-identifier).
  underscores_in_headers on;
  upstream portico {
${servers}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://portico;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_connect_timeout 1s;
      proxy_next_upstream error timeout;
    }
  }
}
`;
  const url = `http://127.0.0.1:${port}`;
  const child = await run(bin, prefix, conf, `${url}/healthz`);
  return {
    url,
    stop: () => stopNginx(child, prefix),
  };
}

/** nginx's scratch directories, inside its prefix (it runs unprivileged). */
const tempPaths = (prefix) =>
  ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${prefix}/${kind};\n`)
    .join('');

/** Writes the configuration, starts nginx in the foreground and waits until `readyUrl` answers. */
async function run(bin, prefix, conf, readyUrl) {
  const confPath = path.join(prefix, 'nginx.conf');
  await writeFile(confPath, conf);
  const child = spawn(bin, ['-p', prefix, '-c', confPath, '-g', 'daemon off;'], { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    try {
      await fetch(readyUrl);
      return child;
    } catch {
      if (child.exitCode !== null || i > 200) {
        const log = await readFile(path.join(prefix, 'error.log'), 'utf8').catch(() => '');
        throw new Error(`nginx did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

async function stopNginx(child, prefix) {
  child.kill('SIGQUIT');
  await new Promise((r) => (child.exitCode !== null ? r() : child.on('exit', r)));
  await rm(prefix, { recursive: true, force: true });
}
