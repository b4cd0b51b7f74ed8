import { describe, expect, it } from 'vitest';
import { isLoopbackOrigin } from './cors-plugin.ts';

describe('loopback CORS origins', () => {
  it('allows pages served from this machine only', () => {
    for (const o of ['http://127.0.0.1:3000', 'http://localhost:3000', 'http://localhost', 'https://127.0.0.1', 'http://[::1]:8080', 'http://127.9.9.9:1']) expect(isLoopbackOrigin(o), o).toBe(true);
    for (const o of [undefined, 'null', '', 'http://192.0.2.7:3000', 'https://evil.example', 'http://localhost.evil.example', 'http://127.0.0.1.evil.example', 'http://evil.example/127.0.0.1', 'file://', 'http://127.0.0.1:3000/']) expect(isLoopbackOrigin(o), String(o)).toBe(false);
  });
});
