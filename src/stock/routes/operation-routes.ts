/**
 * Cash and stock movements share one shape (seed §4A): for deposits and for withdrawals, a calldata
 * endpoint, its One Click `send` twin, a tx-recording endpoint, a list and a detail. This module registers that shape for one
 * group and kind; cash-routes and stock-transfer-routes supply what differs.
 */
import type { FastifyInstance } from 'fastify';
import type { Hex } from 'viem';
import { NotFoundError, ValidationError } from '../../errors/app-error.ts';
import { TX_HASH_PATTERN, VISIBLE_ASCII_PATTERN } from '../../http/schema-patterns.ts';
import { isBoundWallet } from '../../auth/api-key-model.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { getTxRecord, type TxKind } from '../store/tx-record-store.ts';
import type { StockApiDeps } from '../stock-deps.ts';
import { stockOk } from '../stock-envelope.ts';
import { address, decimal, listOf, millis, pageOf, pageQueryProps, responses } from '../stock-schemas.ts';
import { recordOwnedTransaction, rememberCalldata, waitForProjection } from '../tx-recorder.ts';
import { lowerAddress } from '../order-request.ts';
import { parseGasLimit, type OneClickService } from '../one-click/one-click-service.ts';
import { gasLimitProp, operationSendSchema, operationSendView, sendHeaders, sendIdempotencyOf } from './one-click-routes.ts';

export interface MoveBody {
  userAddress?: string;
  tokenAddress: string;
  tokenAmount: string;
}

export interface OperationListQuery {
  /** The key's bound wallet: its operations are listed too, whoever recorded them. */
  userAddress?: string;
  status?: 'processing' | 'completed' | 'failed';
  startTime?: number;
  endTime?: number;
  offset: number;
  limit: number;
}

export interface OperationSpec<R extends { operationId: string }> {
  /** URL segment: `cash` or `stock`. */
  group: 'cash' | 'stock';
  kind: 'deposit' | 'withdrawal';
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
  view(r: R): Record<string, unknown>;
  viewSchema: Record<string, unknown>;
}

/** The wallet a withdrawal pre-check reads: the body's userAddress or the key's bound wallet. */
export function userFor(body: { userAddress?: string }, key: AuthKey): `0x${string}` {
  const u = body.userAddress ?? key.userAddress;
  if (!u) throw new ValidationError('userAddress', 'required: the API key has no bound wallet');
  return lowerAddress(u);
}

export function registerOperationRoutes<R extends { operationId: string; txHash: string; userAddress: string }>(
  app: FastifyInstance,
  deps: StockApiDeps,
  oneClick: OneClickService,
  spec: OperationSpec<R>,
): void {
  const base = `/${spec.group}/${spec.kind === 'deposit' ? 'deposits' : 'withdrawals'}`;
  const tags = [spec.tag];

  app.post<{ Body: MoveBody }>(
    `${base}/calldata`,
    {
      schema: {
        tags,
        summary: spec.calldataSummary,
        body: {
          type: 'object',
          required: ['tokenAddress', 'tokenAmount'],
          additionalProperties: false,
          properties: {
            userAddress: { ...address, description: 'wallet for the pre-checks (default: the key\'s bound wallet)' },
            tokenAddress: address,
            tokenAmount: { ...decimal, description: 'token units, at most the token\'s decimals' },
          },
        },
        response: responses({
          type: 'object',
          required: ['toAddress', 'value', 'callData'],
          properties: {
            toAddress: { ...address, description: 'the StockRouter' },
            value: { type: 'string' },
            callData: { type: 'string' },
            spenderAddress: { ...address, description: 'approve the token to this address before a deposit (the StockRouter)' },
          },
        }),
      },
    },
    async (req) => {
      const callData = await spec.buildCalldata(req.body, req.apiKey!);
      rememberCalldata(deps, req.apiKey!, callData, spec.txKind);
      return stockOk(req.id, {
        toAddress: deps.contracts.stockRouter,
        value: '0',
        callData,
        ...(spec.kind === 'deposit' ? { spenderAddress: deps.contracts.stockRouter } : {}),
      });
    },
  );

  app.post<{ Body: MoveBody & { gasLimit?: number | string } }>(
    `${base}/send`,
    {
      schema: {
        tags: [...tags, 'one-click'],
        summary: `One Click ${spec.group} ${spec.kind} from the bound wallet, relayed through the One Click router and recorded for the key`,
        body: {
          type: 'object',
          required: ['tokenAddress', 'tokenAmount'],
          additionalProperties: false,
          properties: {
            userAddress: { ...address, description: 'optional; must be the key\'s bound wallet (a send acts only for it)' },
            tokenAddress: address,
            tokenAmount: { ...decimal, description: 'token units, at most the token\'s decimals' },
            gasLimit: gasLimitProp,
          },
        },
        headers: sendHeaders,
        response: responses(operationSendSchema),
      },
    },
    async (req) => {
      const key = req.apiKey!;
      const user = oneClick.sendingUser(key, req.body.userAddress);
      const idempotency = sendIdempotencyOf(req);
      const again = await oneClick.previousSend(key, idempotency);
      if (again) return stockOk(req.id, operationSendView(again));
      const gasLimit = parseGasLimit(req.body.gasLimit);
      const body: MoveBody = { userAddress: user, tokenAddress: req.body.tokenAddress, tokenAmount: req.body.tokenAmount };
      const routerCalldata = await spec.buildCalldata(body, key);
      const checks = spec.checkSend ? [spec.checkSend(body, user)] : [];
      const out = await oneClick.relay(key, user, { kind: spec.txKind, routerCalldata, gasLimit, checks, idempotency });
      return stockOk(req.id, operationSendView(out));
    },
  );

  app.post<{ Body: { txHash: Hex } }>(
    `${base}/tx`,
    {
      schema: {
        tags,
        summary: `Record a self-submitted ${spec.group} ${spec.kind} transaction to the calling key (idempotent)`,
        body: { type: 'object', required: ['txHash'], additionalProperties: false, properties: { txHash: { type: 'string', pattern: TX_HASH_PATTERN } } },
        response: responses({
          type: 'object',
          required: ['txHash', 'operationIds', 'operations', 'indexed'],
          properties: {
            txHash: { type: 'string' },
            operationId: { type: ['string', 'null'] },
            operationStatus: { type: ['string', 'null'] },
            operationIds: { type: 'array', items: { type: 'string' } },
            operations: { type: 'array', items: spec.viewSchema },
            indexed: { type: 'boolean', description: 'false when the indexer had not reached the block yet; poll the detail' },
          },
        }),
      },
    },
    async (req) => {
      const txHash = req.body.txHash.toLowerCase() as Hex;
      await recordOwnedTransaction(deps, req.apiKey!, txHash, spec.txKind);
      const ops = await waitForProjection(deps, () => spec.listByTx(txHash));
      const views = ops.map((o) => spec.view(o));
      return stockOk(req.id, {
        txHash,
        operationId: ops[0]?.operationId ?? null,
        operationStatus: (views[0]?.operationStatus as string | undefined) ?? null,
        operationIds: ops.map((o) => o.operationId),
        operations: views,
        indexed: ops.length > 0,
      });
    },
  );

  app.get<{ Querystring: { status?: OperationListQuery['status']; startTime?: number; endTime?: number; page?: number; limit?: number } }>(
    base,
    {
      schema: {
        tags,
        summary: `${spec.group} ${spec.kind}s mapped to the calling key, newest first`,
        querystring: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: ['processing', 'completed', 'failed'] },
            startTime: { ...millis, minimum: 0 },
            endTime: { ...millis, minimum: 0 },
            ...pageQueryProps,
          },
        },
        response: responses(listOf(spec.viewSchema)),
      },
    },
    async (req) => {
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
      return stockOk(req.id, { total: page.total, rows: page.rows.map((r) => spec.view(r)) });
    },
  );

  app.get<{ Params: { operationId: string } }>(
    `${base}/:operationId`,
    {
      schema: {
        tags,
        summary: `${spec.group} ${spec.kind} detail and operationStatus`,
        params: { type: 'object', required: ['operationId'], properties: { operationId: { type: 'string', minLength: 1, maxLength: 100, pattern: VISIBLE_ASCII_PATTERN } } },
        response: responses(spec.viewSchema),
      },
    },
    async (req) => {
      const key = req.apiKey!;
      const op = await spec.get(req.params.operationId.toLowerCase());
      // Scoped like the list (recorded by the key, or of its bound wallet): any other operation is
      // answered as not found, not as forbidden, so a key cannot probe which operation ids exist.
      const readable = op !== undefined && (isBoundWallet(key, op.userAddress) || (await getTxRecord(deps.db, op.txHash))?.apiKey === key.apiKey);
      if (!readable) throw new NotFoundError('operation');
      return stockOk(req.id, spec.view(op));
    },
  );
}
