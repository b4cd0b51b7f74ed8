/**
 * The sandbox's snapshots, revert and reset (docs/sandbox.md "Snapshots, revert and reset"): the
 * whole venue (chains, storage, perpetual engine, streams' sequences, caches, nonce windows, keys)
 * kept at an instant and put back. How it is done is the server's (src/app/revertible-stack.ts);
 * what crosses the wire is here. Streams open across one are closed with SANDBOX_STREAM_DROP_CLOSE
 * (1012 "service restart"), as a venue restarting closes them.
 */
import { Millis, Type, type Static } from '../common/schema-kit.ts';
import { SandboxClockStateSchema } from './sandbox-clock-schemas.ts';

/** A snapshot's id as the server hands it out: `snap-` and a number, in the order they were taken. */
export const SANDBOX_SNAPSHOT_ID_PATTERN = '^snap-[1-9][0-9]{0,9}$';

export const SandboxSnapshotSchema = Type.Object({
  id: Type.String({ pattern: SANDBOX_SNAPSHOT_ID_PATTERN, description: 'the snapshot, usable for any number of reverts until it is deleted or dropped' }),
  createdAt: Millis({ description: 'when it was taken, wall clock ms' }),
  ms: Type.Integer({ minimum: 0, description: 'how long taking it took (the venue stops and starts again), ms' }),
});
export type SandboxSnapshot = Static<typeof SandboxSnapshotSchema>;

export const SandboxSnapshotListSchema = Type.Object({
  snapshots: Type.Array(Type.Object({ id: Type.String(), createdAt: Millis() })),
});
export type SandboxSnapshotList = Static<typeof SandboxSnapshotListSchema>;

export const SandboxSnapshotIdParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const SandboxRevertSchema = Type.Object({
  id: Type.String({ description: 'the snapshot the venue is back at (still usable)' }),
  dropped: Type.Array(Type.String(), { description: 'the snapshots taken after it, gone with the revert (their chain snapshots are)' }),
  clock: SandboxClockStateSchema,
  ms: Type.Integer({ minimum: 0, description: 'how long the revert took, ms' }),
});
export type SandboxRevert = Static<typeof SandboxRevertSchema>;

export const SandboxSnapshotDeletedSchema = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
export type SandboxSnapshotDeleted = Static<typeof SandboxSnapshotDeletedSchema>;

export const SandboxResetSchema = Type.Object({
  reset: Type.Literal(true),
  dropped: Type.Array(Type.String(), { description: 'every snapshot, gone with the reset' }),
  clock: SandboxClockStateSchema,
  ms: Type.Integer({ minimum: 0, description: 'how long the reset took, ms' }),
});
export type SandboxReset = Static<typeof SandboxResetSchema>;

