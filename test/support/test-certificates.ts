/**
 * Throwaway certificates for the TLS tests, made with the machine's openssl, and a `fetch` that
 * trusts their CA (the SDK's `fetch` option: the in-process way to trust a private CA).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';

export interface Leaf {
  cert: string;
  key: string;
  serial: string;
}

/** A CA and leaves for 127.0.0.1/localhost, made with the system's openssl in `dir`. */
export function makeCertificates(dir: string) {
  const ossl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=tokex test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  fs.writeFileSync(path.join(dir, 'leaf.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  const leaf = (name: string, serial: string): Leaf => {
    ossl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=localhost');
    ossl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', `0x${serial}`, '-days', '2', '-extfile', 'leaf.ext', '-out', `${name}.pem`);
    return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`), serial };
  };
  const first = leaf('first', '1A2B3C01');
  const second = leaf('second', '1A2B3C02');
  // OpenSSL 3.0's x509 has no -not_after; `openssl ca` takes any dates.
  ossl('req', ...ec, '-keyout', 'expired.key', '-out', 'expired.csr', '-subj', '/CN=localhost');
  fs.writeFileSync(path.join(dir, 'index.txt'), '');
  fs.writeFileSync(path.join(dir, 'serial'), '1A2B3C03\n');
  fs.writeFileSync(path.join(dir, 'ca.cnf'), [
    '[ca]', 'default_ca = d', '[d]', 'database = index.txt', 'new_certs_dir = .', 'certificate = ca.pem', 'private_key = ca.key',
    'serial = serial', 'default_md = sha256', 'policy = p', 'x509_extensions = e', 'unique_subject = no',
    '[p]', 'commonName = supplied', '[e]', 'subjectAltName = IP:127.0.0.1,DNS:localhost', '',
  ].join('\n'));
  ossl('ca', '-batch', '-config', 'ca.cnf', '-in', 'expired.csr', '-out', 'expired.pem', '-notext', '-startdate', '20200101000000Z', '-enddate', '20200102000000Z');
  const expired = { cert: path.join(dir, 'expired.pem'), key: path.join(dir, 'expired.key'), serial: '1A2B3C03' };
  return { ca: path.join(dir, 'ca.pem'), first, second, expired };
}


/** The SDK's `fetch` option over node https with our CA: the in-process way to trust a private CA. */
export function fetchWithCa(ca: string): typeof fetch {
  return ((input: string | URL, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const req = https.request(String(input), { method: init.method ?? 'GET', headers: init.headers as Record<string, string>, ca, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
        });
      });
      req.on('error', reject);
      if (typeof init.body === 'string') req.write(init.body);
      req.end();
    })) as typeof fetch;
}

