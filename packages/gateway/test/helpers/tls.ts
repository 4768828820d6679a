import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** A self-signed certificate for 127.0.0.1 in `dir`, made for one run (openssl). */
export function selfSigned(dir: string): { certPath: string; keyPath: string } {
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
      .concat(['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'])
      .concat(['-keyout', keyPath, '-out', certPath]),
    { stdio: 'ignore' },
  );
  return { certPath, keyPath };
}
