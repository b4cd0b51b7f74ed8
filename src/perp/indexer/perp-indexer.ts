/**
 * The chain indexer of the perpetual venue (docs/indexer.md): the MarginVault's `Deposited` and
 * `Withdrawn` events, registered with the generic chain follower (src/indexer/chain-follower.ts)
 * under the name `perp`, so its blocks, events and checkpoint are its own beside the stock
 * indexer's. Each movement becomes a row of `perp_collateral_events`
 * (src/perp/store/collateral-event-store.ts), written in the batch's transaction with its events
 * and checkpoint; the engine runtime applies the rows in chain order and marks them applied.
 *
 * On a reorg the movements above the common ancestor are rolled back: an unapplied one is deleted,
 * an applied one is marked orphaned for the engine to reverse (the store's header says why).
 */
import { marginVaultAbi } from '../../chain/abi/generated/index.ts';
import type { PerpDeployment } from '../../chain/deploy-perp-venue.ts';
import { createChainFollower, defineIndexer, followerOptionsOf, type ChainFollower, type ChainFollowerOptions, type IndexerDefinition } from '../../indexer/chain-follower.ts';
import type { ChainEventRecord } from '../../storage/chain-block-store.ts';
import { rollbackCollateralEventsAbove, upsertCollateralEvents, type CollateralEventKind, type NewCollateralEvent } from '../store/collateral-event-store.ts';

/** The follower's own settings (`confirmations` from PERP_CONFIRMATIONS), plus the venue it follows. */
export interface PerpIndexerOptions
  extends Pick<ChainFollowerOptions, 'db' | 'publicClient' | 'confirmations' | 'pollMs' | 'batchBlocks' | 'startBlock' | 'logger'> {
  deployment: Pick<PerpDeployment, 'blockNumber' | 'contracts'>;
  /** Indexer name: its checkpoint and the namespace of its blocks and events. Default `perp`. */
  name?: string;
}

export type PerpIndexer = ChainFollower;

/** The movements a batch read, written at its end in one statement. */
interface PerpBatch {
  events: NewCollateralEvent[];
}

function movement(kind: CollateralEventKind, ev: ChainEventRecord): NewCollateralEvent {
  return {
    kind,
    account: String(ev.args.account),
    // Decoded integers come as numbers up to 48 bits, as decimal strings beyond.
    amount: String(ev.args.amount),
    txHash: ev.txHash,
    blockNumber: ev.blockNumber,
    logIndex: ev.logIndex,
    blockTimestamp: ev.timestamp,
    withdrawalId: kind === 'withdrawal' ? String(ev.args.withdrawalId) : null,
  };
}

/** The MarginVault and its handlers, for the chain follower. */
export function definePerpIndexer(deployment: Pick<PerpDeployment, 'contracts'>, opts: { name?: string } = {}): IndexerDefinition<PerpBatch> {
  const indexer = defineIndexer<PerpBatch>({
    name: opts.name ?? 'perp',
    contracts: [{ name: 'MarginVault', abi: marginVaultAbi, addresses: [deployment.contracts.marginVault] }],
    hooks: {
      createBatch: () => ({ events: [] }),
      async flush(batch, ctx) {
        if (batch.events.length > 0) await ctx.record((r) => upsertCollateralEvents(r, batch.events));
      },
      async rollback(ctx) {
        // On a reset the anchor is the block before the start: everything indexed goes.
        return (tx) => rollbackCollateralEventsAbove(tx, ctx.anchor.number);
      },
    },
  });
  indexer.on('MarginVault:Deposited', (ev, { batch }) => void batch.events.push(movement('deposit', ev)));
  indexer.on('MarginVault:Withdrawn', (ev, { batch }) => void batch.events.push(movement('withdrawal', ev)));
  // A payment of the escape hatch (docs/security.md): the vault is frozen for good, the engine pays
  // nothing more; the row keeps the account's history whole (no withdrawal id: no engine withdrawal).
  indexer.on('MarginVault:EscapeWithdrawn', (ev, { batch }) => void batch.events.push({ ...movement('withdrawal', ev), withdrawalId: null }));
  // OperatorSet (and Ownable's events) are recorded in chain_events and project into nothing.
  return indexer;
}

/** The perpetual venue's indexer, running on its own chain follower. */
export function createPerpIndexer(opts: PerpIndexerOptions): PerpIndexer {
  return createChainFollower(definePerpIndexer(opts.deployment, { name: opts.name }), followerOptionsOf(opts, opts.deployment));
}
