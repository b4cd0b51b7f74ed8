/**
 * Proof of reserves (docs/proof-of-reserves.md): `GET account/proof` gives the caller's leaf of the
 * latest liabilities tree the ReserveRegistry holds and its Merkle path, to check against the root
 * on chain and the vault's balance (examples/verify-reserves.ts). Amounts are integer strings of
 * collateral-token units, as the leaf hashes them.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { walletOf } from '../venue-calls.ts';
import { perpOk } from '../perp-envelope.ts';
import { millis, responses } from '../perp-schemas.ts';
import { accountProof } from '../reserves/proof-service.ts';

const units = { type: 'string', pattern: '^(0|[1-9][0-9]*)$', description: 'integer string of collateral-token units (USDC, 6 decimals)' } as const;
const hash32 = { type: 'string', pattern: '^0x[0-9a-f]{64}$' } as const;
const addressOut = { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } as const;

export const accountProofSchema = {
  type: 'object',
  required: [
    'epoch', 'account', 'leafIndex', 'salt', 'equity', 'pendingWithdrawals', 'value', 'leafHash', 'path', 'root', 'total', 'leafCount',
    'badDebt', 'snapshotTs', 'decimals', 'chainId', 'reserveRegistry', 'vault', 'collateralToken', 'txHash', 'vaultBalance', 'solvent',
  ],
  properties: {
    epoch: { ...millis, description: 'the epoch: start of the funding interval, ms since the Unix epoch (the registry key)' },
    account: { type: 'string', description: 'the wallet (lower case)' },
    leafIndex: { type: 'integer', minimum: 0 },
    salt: { ...hash32, description: 'random per account and epoch; keeps the leaf from being guessed from its parts' },
    equity: { ...units, description: 'equity committed: the account equity, 0 when it is below zero' },
    pendingWithdrawals: { ...units, description: 'withdrawals reserved and not paid yet' },
    value: { ...units, description: 'equity + pendingWithdrawals: the leaf\'s sum' },
    leafHash: { ...hash32, description: 'keccak256(abi.encode(bytes32 salt, address account, uint256 equity, uint256 pendingWithdrawals))' },
    path: {
      type: 'array',
      description: 'siblings from the leaf up; node = keccak256(abi.encode(bytes32 leftHash, uint256 leftSum, bytes32 rightHash, uint256 rightSum))',
      items: {
        type: 'object',
        required: ['hash', 'sum', 'side'],
        properties: { hash: hash32, sum: units, side: { type: 'string', enum: ['left', 'right'], description: 'where the sibling sits' } },
      },
    },
    root: hash32,
    total: { ...units, description: 'the liabilities: sum of every leaf' },
    leafCount: { type: 'integer', minimum: 0 },
    badDebt: { ...units, description: 'negative equity of accounts committed at 0, left out of the total' },
    snapshotTs: { ...millis, description: 'when the engine was read' },
    decimals: { type: 'integer', enum: [6] },
    chainId: { type: 'integer' },
    reserveRegistry: { ...addressOut, description: 'the ReserveRegistry: rootOf(epoch) gives the root and total' },
    vault: { ...addressOut, description: 'the MarginVault holding the reserves' },
    collateralToken: { ...addressOut, description: 'the vault\'s collateral token (USDC)' },
    txHash: { type: ['string', 'null'], description: 'the transaction that posted the root' },
    vaultBalance: { type: ['string', 'null'], pattern: '^(0|[1-9][0-9]*)$', description: 'the vault\'s collateral-token balance checked after posting (units)' },
    solvent: { type: ['boolean', 'null'], description: 'vaultBalance ≥ total at that check' },
  },
} as const;

export const reservesRoutes: FastifyPluginAsync<{ db: DbExecutor }> = async (app, opts) => {
  const tags = ['account'];
  app.get(
    '/account/proof',
    {
      schema: {
        tags,
        summary: "Proof of reserves: the caller's leaf of the latest posted liabilities tree and its Merkle path (READ); 40000 when the account is not in it",
        response: responses(accountProofSchema),
      },
    },
    async (req) => perpOk(req.id, await accountProof(opts.db, walletOf((req as { apiKey?: AuthKey }).apiKey as AuthKey))),
  );
};
