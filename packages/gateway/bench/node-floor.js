// The floor under any Node.js proxy, for bench:proxy: Node's HTTP server and undici's pooled client
// (the two parts Portico is built on) with nothing else: the bearer token comes from the path prefix,
// as nginx's does, there is no authentication, no lookup, no validation, no logging, no metrics.
// Portico ÷ this floor is what Portico's own code costs; this floor ÷ nginx is what Node's HTTP
// machinery costs. Run as a child process: node node-floor.js PORT UPSTREAM '{"/prefix/": "token"}'.
import http from 'node:http';
import { Agent } from 'undici';

const [port, upstream, locationsJson] = process.argv.slice(2);
const locations = Object.entries(JSON.parse(locationsJson));
const agent = new Agent({ connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'upgrade', 'te', 'trailer']);

http
  .createServer((req, res) => {
    if (req.url === '/_ready') {
      res.end('ready');
      return;
    }
    const location = locations.find(([prefix]) => req.url.startsWith(prefix));
    if (!location) {
      res.writeHead(404).end();
      return;
    }
    const headers = [];
    for (const name in req.headers) {
      if (!HOP.has(name)) headers.push(name, req.headers[name]);
    }
    headers.push('authorization', `Bearer ${location[1]}`);
    const hasBody =
      req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    agent
      .request({
        origin: upstream,
        path: req.url,
        method: req.method,
        headers,
        body: hasBody ? req : null,
      })
      .then(({ statusCode, headers: upstreamHeaders, body }) => {
        const out = [];
        for (const name in upstreamHeaders) {
          if (HOP.has(name)) continue;
          const value = upstreamHeaders[name];
          if (Array.isArray(value)) for (const one of value) out.push(name, one);
          else out.push(name, value);
        }
        res.writeHead(statusCode, out);
        body.on('error', () => res.destroy());
        res.on('close', () => body.destroy());
        body.pipe(res);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
  })
  .listen(Number(port), '127.0.0.1');

// Exits on SIGTERM rather than dying of it, so a --cpu-prof run writes its profile.
process.on('SIGTERM', () => process.exit(0));
