/**
 * What the singleton roles of this process say about their progress, in memory: each running role
 * registers a sampler, and each leased role its lease state. Two readers: the status publisher
 * (status-publisher.ts) writes the samples to the database for every API's `/readyz` and for
 * `tokex status`, and the metrics registry (metrics-registry.ts) exports them from this process.
 * Samplers are cheap reads of figures the roles keep anyway; nothing here is on a hot path.
 */

/** The roles that report progress. `perp-indexer` runs under the `indexer` lease, `projector` under `perp-engine`'s. */
export const STATUS_ROLES = ['marketdata', 'indexer', 'perp-indexer', 'executor', 'relayer', 'perp-engine', 'projector'] as const;
export type StatusRole = (typeof STATUS_ROLES)[number];

/** The lease each status role runs under (src/app/leased-role.ts). */
export const LEASE_OF: Readonly<Record<StatusRole, string>> = {
  marketdata: 'marketdata',
  indexer: 'indexer',
  'perp-indexer': 'indexer',
  executor: 'executor',
  relayer: 'relayer',
  'perp-engine': 'perp-engine',
  projector: 'perp-engine',
};

/**
 * `held`: this process runs the role; `standby`: another process holds the lease and this one
 * waits; `lost`: the lease was lost and the role stopped (it waits to take it back); `released`: a
 * clean stop.
 */
export type LeaseState = 'held' | 'standby' | 'lost' | 'released';
export const LEASE_STATES: readonly LeaseState[] = ['held', 'standby', 'lost', 'released'];

export type DetailValue = number | string | boolean | null | Readonly<Record<string, number>>;

export interface RoleSample {
  /**
   * Wall-clock ms of the role's last progress (a tick, a block indexed, a command applied). A
   * sampler answers undefined before the first; the registry then reports the role's start.
   */
  progressAt?: number;
  /** Small figures for operators: counts, sequence numbers, block numbers (as strings when they may exceed 2^53). Never secrets, keys or addresses. */
  detail?: Record<string, DetailValue>;
  /** Per symbol or instrument: wall-clock ms of its last quote or mark. */
  subjects?: Record<string, number>;
}

export interface RoleSnapshot extends RoleSample {
  role: StatusRole;
  leaseState: LeaseState;
}

export interface RoleStatusRegistry {
  /** This process's holder id (the lease holder id where a lease is held). */
  readonly holder: string;
  /** Registers a running role's sampler; the answer removes it (call it when the role stops). */
  track(role: StatusRole, sample: () => RoleSample): () => void;
  /** A leased role's state in this process (src/app/leased-role.ts). */
  setLease(lease: string, state: LeaseState): void;
  leaseState(lease: string): LeaseState | undefined;
  /** Every leased role this process knows of, with its state. */
  leases(): ReadonlyMap<string, LeaseState>;
  /** Each tracked role's sample now, and the roles whose lease this process knows but does not run. */
  snapshot(now?: number): RoleSnapshot[];
}

export function createRoleStatusRegistry(holder: string): RoleStatusRegistry {
  const samplers = new Map<StatusRole, () => RoleSample>();
  /** When each running role started: its age counts from there until its first progress. */
  const startedAt = new Map<StatusRole, number>();
  const leases = new Map<string, LeaseState>();
  /** The last sample of a role that stopped, so a lost role still shows what it had reached. */
  const last = new Map<StatusRole, RoleSample>();
  const sampleOf = (role: StatusRole): RoleSample | undefined => {
    const s = samplers.get(role);
    if (!s) return last.get(role);
    try {
      const v = s();
      // No progress since the role started: as old as the role (not as fresh as this sample).
      if (v.progressAt === undefined) v.progressAt = startedAt.get(role);
      last.set(role, v);
      return v;
    } catch {
      // A sampler that throws reports nothing new; readiness then sees the role's age grow.
      return last.get(role);
    }
  };
  return {
    holder,
    track(role, sample) {
      samplers.set(role, sample);
      startedAt.set(role, Date.now());
      return () => {
        if (samplers.get(role) !== sample) return;
        sampleOf(role);
        samplers.delete(role);
      };
    },
    setLease(lease, state) {
      leases.set(lease, state);
    },
    leaseState(lease) {
      return leases.get(lease);
    },
    leases() {
      return leases;
    },
    snapshot() {
      const out: RoleSnapshot[] = [];
      for (const role of STATUS_ROLES) {
        const running = samplers.has(role);
        const leaseState = leases.get(LEASE_OF[role]);
        if (!running && leaseState === undefined) continue;
        // A role tracked without a lease of its own (a test running a role apart) counts as held.
        const state: LeaseState = running ? 'held' : leaseState!;
        if (!running && state === 'held') continue; // the lease is held but this role is not run here
        const sample = sampleOf(role);
        if (!running && sample === undefined) continue;
        out.push({ role, leaseState: state, ...sample });
      }
      return out;
    },
  };
}
