/**
 * The sandbox control API wired onto the stock API's server (docs/sandbox.md): its service gets the
 * stack's database, quotes, perpetual engine and chain; the routes go under `{prefix}/sandbox/v1`.
 * Called by the stock-api role only when SANDBOX is on.
 */
import type { FastifyInstance } from 'fastify';
import { createSandboxFunding } from '../sandbox/sandbox-funding.ts';
import { sandboxRoutes } from '../sandbox/sandbox-routes.ts';
import { createSandboxService } from '../sandbox/sandbox-service.ts';
import type { SandboxState } from '../sandbox/sandbox-state.ts';
import type { StackContext } from './stack-context.ts';
import type { StopList } from './stop-list.ts';

export async function registerSandbox(ctx: StackContext, app: FastifyInstance, state: SandboxState, stops: StopList): Promise<void> {
  const { chain, logger } = ctx;
  const service = createSandboxService({
    state,
    db: ctx.firstChainDb,
    quotes: () => ctx.quotes(),
    // Read at each call: the perp-engine role taking its lease back starts a new engine.
    perpEngine: () => ctx.perpVenue?.engine(),
    // Every role runs here (the perp engine among them) only in the all-in-one stack.
    perpExpected: state.allInOne,
    publicClient: chain.publicClient,
    logger,
  });
  const funding = createSandboxFunding({
    publicClient: chain.publicClient,
    deployment: chain.deployment,
    deployer: chain.walletFor('deployer'),
    logger,
    stalled: () => state.faults.has('chain-stall'),
  });
  // A node stalled by the fault mines again when the stack stops: a node of one's own outlives it.
  stops.add(() => service.release());
  await app.register(sandboxRoutes, { prefix: state.path, token: state.token, service, funding, logger });
  logger.info({ path: state.path }, 'sandbox control API on: prices, funds and faults (docs/sandbox.md)');
}
