/**
 * The sandbox control API wired onto the stock API's server (docs/sandbox.md): its service gets the
 * stack's database, quotes, perpetual engine and chain; the routes go under `{prefix}/sandbox/v1`.
 * Called by the stock-api role only when SANDBOX is on.
 */
import type { FastifyInstance } from 'fastify';
import { createSandboxCorporateActions } from '../sandbox/sandbox-corporate-actions.ts';
import { createSandboxFunding } from '../sandbox/sandbox-funding.ts';
import { createPricePaths } from '../sandbox/sandbox-price-paths.ts';
import { sandboxRoutes } from '../sandbox/sandbox-routes.ts';
import { createSandboxService } from '../sandbox/sandbox-service.ts';
import type { SandboxState } from '../sandbox/sandbox-state.ts';
import { corporateActionRegistryOf } from './corporate-action-wiring.ts';
import type { StackContext } from './stack-context.ts';
import type { StopList } from './stop-list.ts';
import { named } from '../http/named-plugin.ts';

export async function registerSandbox(ctx: StackContext, app: FastifyInstance, state: SandboxState, stops: StopList): Promise<void> {
  const { chain, logger } = ctx;
  const paths = createPricePaths({ db: ctx.firstChainDb, logger });
  const service = createSandboxService({
    state,
    db: ctx.firstChainDb,
    quotes: () => ctx.quotes(),
    // Read at each call: the perp-engine role taking its lease back starts a new engine.
    perpEngine: () => ctx.perpVenue?.engine(),
    // Every role runs here (the perp engine among them) only in the all-in-one stack.
    perpExpected: state.allInOne,
    publicClient: chain.publicClient,
    paths,
    logger,
  });
  const funding = createSandboxFunding({
    publicClient: chain.publicClient,
    deployment: chain.deployment,
    deployer: chain.walletFor('deployer'),
    logger,
    stalled: () => state.faults.has('chain-stall'),
  });
  // The same registry as the stock API's list and the CLI's add (the first chain's store).
  const corporateActions = createSandboxCorporateActions({
    registry: () => corporateActionRegistryOf(ctx),
    clockOffsetMs: ctx.calendar.clockOffsetMs,
    logger,
    stalled: () => state.faults.has('chain-stall'),
  });
  // A node stalled by the fault mines again when the stack stops: a node of one's own outlives it.
  stops.add(() => service.release());
  // No step of a price path is written after the stop.
  stops.add(() => paths.stop());
  // The stack made the clock before its roles (stack.ts); a stock API without it has no stack around it.
  if (!state.clock) throw new Error('sandbox: the stack made no clock');
  // The venue control is set once the first start is done (revertible-stack.ts): read at each call.
  await app.register(named(sandboxRoutes), { prefix: state.path, token: state.token, service, clock: state.clock, funding, corporateActions, venue: () => state.venue, logger });
  logger.info({ path: state.path }, 'sandbox control API on: the clock, prices and price paths, funds, corporate actions, faults, snapshots and reset (docs/sandbox.md)');
}
