import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isAddress } from 'viem';
import { AppError } from '../errors/app-error.ts';
import type { Deployment } from './deploy-contracts.ts';

function invalid(file: string, why: string): AppError {
  return new AppError('INTERNAL', `deployment file ${path.basename(file)}: ${why}`);
}

function checkAddress(file: string, field: string, value: unknown): void {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) throw invalid(file, `${field} is not an address`);
}

/** Reads a deployment record; `undefined` when the file does not exist, an error when it is malformed. */
export async function readDeployment(file: string): Promise<Deployment | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let d: Deployment;
  try {
    d = JSON.parse(text) as Deployment;
  } catch {
    throw invalid(file, 'not JSON');
  }
  if (!d || typeof d !== 'object' || typeof d.chainId !== 'number') throw invalid(file, 'chainId missing');
  if (typeof d.blockNumber !== 'string' || typeof d.deployedAt !== 'number') throw invalid(file, 'blockNumber or deployedAt missing');
  checkAddress(file, 'operator', d.operator);
  const c = d.contracts;
  if (!c || typeof c !== 'object' || !c.stocks || typeof c.stocks !== 'object') throw invalid(file, 'contracts missing');
  for (const key of ['stockRouter', 'oneClickRouter', 'cashier', 'cashToken', 'accountLens'] as const) {
    checkAddress(file, `contracts.${key}`, c[key]);
  }
  for (const [symbol, address] of Object.entries(c.stocks)) checkAddress(file, `contracts.stocks.${symbol}`, address);
  return d;
}

/** Writes a deployment record as pretty JSON, atomically (temp file + rename). */
export async function writeDeployment(file: string, deployment: Deployment): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(deployment, null, 2)}\n`);
  await rename(tmp, file);
}
