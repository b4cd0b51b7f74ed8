import { describe, expect, it } from 'vitest';
import { isLoopbackHost, opsRefusal } from './ops-access.ts';

const ok = { peerAddress: '127.0.0.1', host: '127.0.0.1:8080', origin: undefined, opsHeader: undefined, write: false };

describe('operator page access', () => {
  it('answers a loopback peer that names a loopback host', () => {
    expect(opsRefusal(ok)).toBeUndefined();
    expect(opsRefusal({ ...ok, peerAddress: '::ffff:127.0.0.1', host: 'localhost:8080' })).toBeUndefined();
    expect(opsRefusal({ ...ok, peerAddress: '::1', host: '[::1]:8080' })).toBeUndefined();
  });
  it('refuses another peer, and a loopback peer reached by another name (DNS rebinding)', () => {
    expect(opsRefusal({ ...ok, peerAddress: '192.0.2.7' })).toBe('not from this host');
    expect(opsRefusal({ ...ok, host: 'evil.example:8080' })).toBe('not addressed to a loopback name');
    expect(opsRefusal({ ...ok, host: undefined })).toBe('not addressed to a loopback name');
    expect(isLoopbackHost('127.0.0.1.evil.example')).toBe(false);
  });
  it('takes a write only with its header and from a loopback origin', () => {
    expect(opsRefusal({ ...ok, write: true })).toBe('no X-Tokex-Ops header');
    expect(opsRefusal({ ...ok, write: true, opsHeader: '1' })).toBeUndefined();
    expect(opsRefusal({ ...ok, write: true, opsHeader: '1', origin: 'http://127.0.0.1:8080' })).toBeUndefined();
    expect(opsRefusal({ ...ok, write: true, opsHeader: '1', origin: 'https://evil.example' })).toBe('from another site');
    expect(opsRefusal({ ...ok, write: true, opsHeader: '1', origin: 'null' })).toBe('malformed Origin');
  });
});
