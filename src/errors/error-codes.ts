/**
 * The stable numeric codes the stock API answers for the one AppError hierarchy: the contract's
 * table (STOCK_ERROR_CODES, contract.md §A), keyed by the hierarchy's codes; a code added to the
 * hierarchy without a row there fails to compile here. The perpetual API's mapping is
 * src/perp/perp-error-codes.ts.
 */
import { STOCK_ERROR_CODES, STOCK_OK_CODE, type StockErrorEntry } from '@tokex/contract';
import type { ErrorCode } from './app-error.ts';

export const STOCK_ERROR_STATUS: Readonly<Record<ErrorCode, StockErrorEntry>> = STOCK_ERROR_CODES;

export { STOCK_OK_CODE };
