/**
 * How an API is served: HTTPS with the certificate of TLS_CERT_FILE / TLS_KEY_FILE (docs/deployment.md),
 * or plain HTTP, which production mode (TOKEX_ENV=production) allows only on a loopback host or
 * behind trusted proxies that say the client spoke HTTPS (X-Forwarded-Proto).
 *
 * The certificate files are checked before anything listens (readable, a certificate and a key
 * that belong together, inside the certificate's validity) so a bad file stops the start with an
 * error naming it, and the same checks guard a reload (SIGHUP): a bad new file keeps the old
 * certificate serving. Error messages name files and problems only, never key material.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import type { Server as HttpsServer, ServerOptions as HttpsServerOptions } from 'node:https';
import { AppError } from '../errors/app-error.ts';
import type { Logger } from '../lib/logger.ts';
import type { TlsFiles } from '../config/app-config.ts';

export type { TlsFiles } from '../config/app-config.ts';

export type TlsProblem = 'missing' | 'unreadable' | 'not-a-certificate' | 'not-a-key' | 'key-mismatch' | 'expired' | 'not-yet-valid' | 'rejected';

/**
 * A certificate file the server cannot use. `code` is VALIDATION like every other configuration
 * error; `problem` and `file` say which check failed on which file.
 */
export class TlsConfigError extends AppError {
  readonly file: string;
  readonly problem: TlsProblem;
  constructor(file: string, problem: TlsProblem, reason: string, options?: { cause?: unknown }) {
    super('VALIDATION', `TLS ${file}: ${reason}`, { detail: { file, problem }, cause: options?.cause });
    this.file = file;
    this.problem = problem;
  }
}

/** The checked material, ready for `https.createServer` or `setSecureContext`. */
export interface TlsMaterial {
  /** The certificate followed by the chain of TLS_CA_FILE. */
  cert: string;
  key: string;
  serialNumber: string;
  validTo: Date;
}

function readPem(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new TlsConfigError(file, 'missing', 'file not found', { cause });
    throw new TlsConfigError(file, 'unreadable', `cannot read the file (${code ?? 'error'})`, { cause });
  }
}

/** Reads and checks the files; throws TlsConfigError naming the file at fault. */
export function loadTlsMaterial(files: TlsFiles, now: number = Date.now()): TlsMaterial {
  const certPem = readPem(files.certFile);
  const keyPem = readPem(files.keyFile);
  const chainPem = files.caFile === undefined ? '' : readPem(files.caFile);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (cause) {
    throw new TlsConfigError(files.certFile, 'not-a-certificate', 'not a PEM certificate', { cause });
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (cause) {
    // The parser's own message is not passed on: it is about the key's bytes.
    throw new TlsConfigError(files.keyFile, 'not-a-key', 'not a PEM private key (or one with a passphrase)', { cause });
  }
  if (!cert.checkPrivateKey(key)) {
    throw new TlsConfigError(files.keyFile, 'key-mismatch', `the private key does not match the certificate ${files.certFile}`);
  }
  const validTo = new Date(cert.validTo);
  if (validTo.getTime() <= now) throw new TlsConfigError(files.certFile, 'expired', `the certificate expired on ${validTo.toISOString()}`);
  const validFrom = new Date(cert.validFrom);
  if (validFrom.getTime() > now) throw new TlsConfigError(files.certFile, 'not-yet-valid', `the certificate is not valid before ${validFrom.toISOString()}`);
  if (chainPem !== '') {
    try {
      new X509Certificate(chainPem);
    } catch (cause) {
      throw new TlsConfigError(files.caFile!, 'not-a-certificate', 'not a PEM certificate chain', { cause });
    }
  }
  const fullChain = chainPem === '' ? certPem : `${certPem.trimEnd()}\n${chainPem}`;
  try {
    tls.createSecureContext({ cert: fullChain, key: keyPem, minVersion: 'TLSv1.2' });
  } catch (cause) {
    throw new TlsConfigError(files.certFile, 'rejected', `TLS refuses the certificate and key (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, { cause });
  }
  return { cert: fullChain, key: keyPem, serialNumber: cert.serialNumber, validTo };
}

/** What both APIs' https servers are created with. */
export function httpsServerOptions(m: TlsMaterial): HttpsServerOptions {
  return { cert: m.cert, key: m.key, minVersion: 'TLSv1.2' };
}

export type TlsReloadResult = { ok: true; serialNumber: string } | { ok: false; error: TlsConfigError };

/**
 * Reads the files again and swaps them in for new handshakes; open connections (and WebSockets)
 * keep theirs. A bad file leaves the running certificate in place and is logged naming the file.
 */
export function reloadServerTls(server: HttpsServer, files: TlsFiles, logger: Logger, what: string): TlsReloadResult {
  let material: TlsMaterial;
  try {
    material = loadTlsMaterial(files);
  } catch (err) {
    if (!(err instanceof TlsConfigError)) throw err;
    logger.error({ file: err.file, problem: err.problem, api: what }, `TLS reload refused, the previous certificate stays: ${err.message}`);
    return { ok: false, error: err };
  }
  server.setSecureContext(httpsServerOptions(material));
  logger.info({ api: what, serialNumber: material.serialNumber, validTo: material.validTo.toISOString() }, 'TLS certificate reloaded');
  return { ok: true, serialNumber: material.serialNumber };
}

/** 127.0.0.0/8, ::1 (also as ::ffff:127.x) and `localhost`: a host nobody else can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  if (net.isIPv4(v4)) return v4.startsWith('127.');
  if (!net.isIPv6(h)) return false;
  // The URL parser writes an IPv6 address in its one short form (::ffff:127.0.0.1 as ::ffff:7f00:1).
  const n = new URL(`http://[${h}]/`).hostname;
  return n === '[::1]' || n.startsWith('[::ffff:7f');
}

const NAMED_RANGES: Record<string, Array<[string, number, 'ipv4' | 'ipv6']>> = {
  loopback: [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']],
  linklocal: [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']],
  uniquelocal: [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']],
};

/**
 * Whether a peer address is one of TRUSTED_PROXIES (addresses, CIDR ranges, or the names
 * loopback, linklocal, uniquelocal, as Fastify's trustProxy reads them). For upgrade requests,
 * which never reach Fastify's request.protocol.
 */
export function peerTrust(list: readonly string[]): (address: string) => boolean {
  if (list.length === 0) return () => false;
  const block = new net.BlockList();
  for (const entry of list) {
    const named = NAMED_RANGES[entry.toLowerCase()];
    if (named) {
      for (const [a, p, t] of named) block.addSubnet(a, p, t);
      continue;
    }
    const [addr, prefix] = entry.split('/');
    const type = net.isIPv4(addr) ? 'ipv4' : net.isIPv6(addr) ? 'ipv6' : undefined;
    if (!type) continue;
    if (prefix === undefined) block.addAddress(addr, type);
    else block.addSubnet(addr, Number(prefix), type);
  }
  return (address) => {
    const v4 = address.toLowerCase().startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
    return block.check(v4, net.isIPv4(v4) ? 'ipv4' : 'ipv6');
  };
}

/** How createHttpServer serves one API (see apiTransportFor). */
export interface ApiTransport {
  /** Present: the API is served over HTTPS with these options. */
  https?: HttpsServerOptions;
  /**
   * Production behind trusted proxies: every request must have reached the proxy over HTTPS
   * (X-Forwarded-Proto from a trusted peer), else it is refused with "https required".
   */
  requireHttps: boolean;
}

export interface TransportSettings {
  host: string;
  production: boolean;
  tls?: TlsFiles;
  trustedProxies: readonly string[];
}

/**
 * Decides how an API is served, or refuses to serve it: production mode never serves plain HTTP
 * on a host others can reach unless trusted proxies terminate TLS in front of it.
 */
export function apiTransportFor(settings: TransportSettings, what: string): ApiTransport {
  if (settings.tls) return { https: httpsServerOptions(loadTlsMaterial(settings.tls)), requireHttps: false };
  if (!settings.production) return { requireHttps: false };
  if (settings.trustedProxies.length > 0) return { requireHttps: true };
  if (isLoopbackHost(settings.host)) return { requireHttps: false };
  throw new AppError(
    'VALIDATION',
    `TOKEX_ENV=production: ${what} would serve plain HTTP on HOST=${settings.host}; set TLS_CERT_FILE and TLS_KEY_FILE, or TRUSTED_PROXIES for a proxy that terminates TLS (docs/deployment.md)`,
    { detail: { problem: 'plain-http' } },
  );
}

