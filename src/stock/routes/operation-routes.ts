/**
 * Cash and stock movements share one shape (seed §4A): for deposits and for withdrawals, a calldata
 * endpoint, its One Click `send` twin, a tx-recording endpoint, a list and a detail. This module registers that shape for one
 * group and kind; cash-routes and stock-transfer-routes supply what differs. Every shape is the
 * contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ListOf,
  pageOf,
  StockMoveBodySchema,
  StockMoveCalldataSchema,
  StockMoveSendBodySchema,
  StockOperationIdParams,
  StockOperationListQuerySchema,
  StockOperationSendSchema,
  StockRecordedOperationTxSchema,
  stockResponses,
  StockSendHeaders,
  StockTxBodySchema,
  type StockMoveBody,
  type StockOperationKind,
  type StockOperationStatus,
  type TSchema,
} from '@tokex/contract';
import type { Hex } from 'viem';
import { NotFoundError, ValidationError } from '../../errors/app-error.ts';
import { isBoundWallet } from '../../auth/api-key-model.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { getTxRecord, type TxKind } from '../store/tx-record-store.ts';
import type { StockApiDeps } from '../stock-deps.ts';
import { okExactReply, okReply } from './stock-reply.ts';
import { cashMethod, stockMoveMethod } from '../router-calldata.ts';
import { recordOwnedTransaction, rememberCalldata, waitForProjection } from '../tx-recorder.ts';
import { lowerAddress } from '../order-request.ts';
import { parseGasLimit, type OneClickService } from '../one-click/one-click-service.ts';
import { operationSendView, sendIdempotencyOf } from './one-click-routes.ts';

/** What a calldata or send endpoint moves (the contract's StockMoveBody). */
export type MoveBody = StockMoveBody;

/** The Fastify instance a route module of this API registers on (the TypeBox type provider's). */
export type StockRouteApp = Parameters<FastifyPluginAsyncTypebox>[0];

export interface OperationListQuery {
  /** The key's bound wallet: its operations are listed too, whoever recorded them. */
  userAddress?: string;
  status?: StockOperationStatus;
  startTime?: number;
  endTime?: number;
  offset: number;
  limit: number;
}

/** `V` is an operation as the routes answer it: `view` renders a record as it, `viewSchema` prints and serialises it. */
export interface OperationSpec<R extends { operationId: string }, V extends { operationStatus: StockOperationStatus }> {
  /** URL segment: `cash` or `stock`. */
  group: 'cash' | 'stock';
  kind: StockOperationKind;
  txKind: TxKind;
  tag: string;
  calldataSummary: string;
  /** Validates the body and returns the calldata; throws ValidationError naming the field. */
  buildCalldata(body: MoveBody, key: AuthKey): Promise<Hex>;
  /**
   * What a send checks beyond the calldata's own checks, for the wallet the relayer acts for (a
   * deposit: the wallet's balance and its allowance to the StockRouter, which a self-submitting
   * wallet would see fail in its own simulation).
   */
  checkSend?(body: MoveBody, user: `0x${string}`): Promise<void>;
  get(operationId: string): Promise<R | undefined>;
  listByTx(txHash: string): Promise<R[]>;
  list(apiKey: string, q: OperationListQuery): Promise<{ total: number; rows: R[] }>;
  view(r: R): V;
  viewSchema: TSchema & { static: V };
}

/** The wallet a withdrawal pre-check reads: the body's userAddress or the key's bound wallet. */
export function userFor(body: { userAddress?: string }, key: AuthKey): `0x${string}` {
  const u = body.userAddress ?? key.userAddress;
  if (!u) throw new ValidationError('userAddress', 'required: the API key has no bound wallet');
  return lowerAddress(u);
}

export function registerOperationRoutes<R extends { operationId: string; txHash: string; userAddress: string }, V extends { operationStatus: StockOperationStatus }>(
  app: StockRouteApp,
  deps: StockApiDeps,
  oneClick: OneClickService,
  spec: OperationSpec<R, V>,
): void {
  const base = `/${spec.group}/${spec.kind === 'deposit' ? 'deposits' : 'withdrawals'}`;
  const tags = [spec.tag];

  app.post(
    `${base}/calldata`,
    { schema: { tags, summary: spec.calldataSummary, body: StockMoveBodySchema, response: stockResponses(StockMoveCalldataSchema) } },
    async (req) => {
      const callData = await spec.buildCalldata(req.body, req.apiKey!);
      rememberCalldata(deps, req.apiKey!, callData, spec.txKind);
      return okReply(req.id, {
        toAddress: deps.contracts.stockRouter,
        value: '0',
        callData,
        method: spec.group === 'cash' ? cashMethod(spec.kind) : stockMoveMethod(spec.kind),
        chainId: deps.chainId,
        productType: deps.product,
        ...(spec.kind === 'deposit' ? { spenderAddress: deps.contracts.stockRouter } : {}),
      });
    },
  );

  app.post(
    `${base}/send`,
    {
      schema: {
        tags: [...tags, 'one-click'],
        summary: `One Click ${spec.group} ${spec.kind} from the bound wallet, relayed through the One Click router and recorded for the key`,
        body: StockMoveSendBodySchema,
        headers: StockSendHeaders,
        response: stockResponses(StockOperationSendSchema),
      },
    },
    async (req) => {
      const key = req.apiKey!;
      const user = oneClick.sendingUser(key, req.body.userAddress);
      const idempotency = sendIdempotencyOf(req);
      const again = await oneClick.previousSend(key, idempotency);
      if (again) return okReply(req.id, operationSendView(again));
      const gasLimit = parseGasLimit(req.body.gasLimit);
      const body: MoveBody = { userAddress: user, tokenAddress: req.body.tokenAddress, tokenAmount: req.body.tokenAmount };
      const routerCalldata = await spec.buildCalldata(body, key);
      const checks = spec.checkSend ? [spec.checkSend(body, user)] : [];
      const out = await oneClick.relay(key, user, { kind: spec.txKind, routerCalldata, gasLimit, checks, idempotency });
      return okReply(req.id, operationSendView(out));
    },
  );

  app.post(
    `${base}/tx`,
    {
      schema: {
        tags,
        summary: `Record a self-submitted ${spec.group} ${spec.kind} transaction to the calling key (idempotent)`,
        body: StockTxBodySchema,
        response: stockResponses(StockRecordedOperationTxSchema(spec.viewSchema)),
      },
    },
    async (req, reply) => {
      const txHash = req.body.txHash.toLowerCase() as Hex;
      await recordOwnedTransaction(deps, req.apiKey!, txHash, spec.txKind);
      const ops = await waitForProjection(deps, () => spec.listByTx(txHash));
      const views = ops.map((o) => spec.view(o));
      const indexed = ops.length > 0;
      // Exact: a cash operation's nested amounts are exact numbers.
      return okExactReply(reply, req.id, {
        txHash,
        operationId: ops[0]?.operationId ?? null,
        operationStatus: views[0]?.operationStatus ?? null,
        operationIds: ops.map((o) => o.operationId),
        operations: views,
        indexed,
        mappingStatus: indexed ? ('Indexed' as const) : ('Pending' as const),
      });
    },
  );

  app.get(
    base,
    {
      schema: {
        tags,
        summary: `${spec.group} ${spec.kind}s mapped to the calling key, newest first`,
        querystring: StockOperationListQuerySchema,
        response: stockResponses(ListOf(spec.viewSchema)),
      },
    },
    async (req, reply) => {
      const { offset, limit } = pageOf(req.query);
      const key = req.apiKey!;
      const page = await spec.list(key.apiKey, {
        userAddress: key.userAddress ?? undefined,
        status: req.query.status,
        startTime: req.query.startTime,
        endTime: req.query.endTime,
        offset,
        limit,
      });
      return okExactReply(reply, req.id, { total: page.total, rows: page.rows.map((r) => spec.view(r)) });
    },
  );

  app.get(
    `${base}/:operationId`,
    {
      schema: {
        tags,
        summary: `${spec.group} ${spec.kind} detail and operationStatus`,
        params: StockOperationIdParams,
        response: stockResponses(spec.viewSchema),
      },
    },
    async (req, reply) => {
      const key = req.apiKey!;
      const op = await spec.get(req.params.operationId.toLowerCase());
      // Scoped like the list (recorded by the key, or of its bound wallet): any other operation is
      // answered as not found, not as forbidden, so a key cannot probe which operation ids exist.
      const readable = op !== undefined && (isBoundWallet(key, op.userAddress) || (await getTxRecord(deps.db, op.txHash))?.apiKey === key.apiKey);
      if (!readable) throw new NotFoundError('operation');
      return okExactReply(reply, req.id, spec.view(op));
    },
  );
}
