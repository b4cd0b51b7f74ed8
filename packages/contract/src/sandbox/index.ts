/** The sandbox control API's part of the contract (docs/sandbox.md). */
export * from './sandbox-schemas.ts';
