/** The sandbox control API's part of the contract (docs/sandbox.md). */
export * from './sandbox-schemas.ts';
export * from './sandbox-clock-schemas.ts';
export * from './sandbox-snapshot-schemas.ts';
