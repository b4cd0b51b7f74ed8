/**
 * What every perpetual service does around the engine (order, account, liquidity, withdrawal,
 * vault-transaction services, the streams and the reserves routes): the wallet a key acts for,
 * the API's error for an engine refusal, and a submit that answers once the state the service
 * reads (the engine here, or a replica of the journal elsewhere) shows the command.
 */
import type { Db } from '../storage/database.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { AppError, ForbiddenError, NotFoundError, RejectedError, ValidationError } from '../errors/app-error.ts';
import { stepsToDecimal, type InstrumentSpec } from './engine/instruments.ts';
import type { RejectDetail } from './engine/engine-types.ts';
import { isRejectCode } from './engine/result-codes.ts';
import type { SubmitOnceDeps } from './idempotency.ts';
import { PERP_ERROR_CODES, type PerpRejection } from './perp-error-codes.ts';
import type { PerpVenue } from './perp-venue.ts';
import { priceOf } from './perp-views.ts';

/** Why an order whose nonce another order of its account used is refused, wherever the claim was made. */
export const NONCE_USED_MESSAGE = 'message.nonce: already used by another order of this account';

/** The wallet a key trades for: keys a wallet created are bound to it. */
export function walletOf(caller: AuthKey): string {
  if (caller.userAddress === null) throw new ForbiddenError('this API key is bound to no wallet, so it cannot trade');
  return caller.userAddress.toLowerCase();
}

/**
 * The API's error for an engine refusal, through the one result-code table: parameter and not-found
 * codes become their AppErrors, every trading code a RejectedError under its own name. The engine
 * speaks ticks, lots and micro-USD: the client gets the table's words, the log the engine's.
 * `unknownAccount` says what an account without a deposit means where it is not a refusal of its own.
 */
export function engineError(r: { code: string; message: string; detail?: RejectDetail }, unknownAccount: PerpRejection = 'INSUFFICIENT_MARGIN', spec?: InstrumentSpec): AppError {
  if (r.code === 'PRICE_OUT_OF_RANGE' && r.detail?.priceBand !== undefined && spec !== undefined) {
    return new RejectedError('PRICE_OUT_OF_RANGE', priceBandMessage(spec, r.detail.priceBand), { detail: { engine: r.message } });
  }
  switch (r.code) {
    case 'INVALID':
      return new ValidationError('request', r.message);
    case 'UNKNOWN_SYMBOL':
      return new NotFoundError('symbol');
    case 'ORDER_NOT_FOUND':
      return new NotFoundError('order');
    // The engine's transport claimed the order's nonce (protocol 2): refused in the words the API's
    // own claim uses (order-service.ts).
    case 'NONCE_USED':
      return new RejectedError('NONCE_USED', NONCE_USED_MESSAGE);
  }
  const rejection = r.code === 'UNKNOWN_ACCOUNT' ? unknownAccount : r.code;
  if (isRejectCode(r.code) && Object.prototype.hasOwnProperty.call(PERP_ERROR_CODES, rejection)) {
    return new RejectedError(rejection, PERP_ERROR_CODES[rejection as PerpRejection].meaning, { detail: { engine: r.message } });
  }
  return new AppError('INTERNAL', `perp engine: unexpected answer ${r.code}`, { detail: { engine: r.message } });
}

/**
 * Which edge of the band a limit price crossed, with the band in prices (docs/perp-risk.md "Price
 * bands"): `price: 211 is above the price band: a BUY is accepted up to 210 (the band is 190 to 210,
 * the mark 200 ± 5 %)`.
 */
export function priceBandMessage(spec: InstrumentSpec, b: NonNullable<RejectDetail['priceBand']>): string {
  const p = (ticks: number) => priceOf(spec, ticks);
  const band = `the band is ${p(b.lowTicks)} to ${p(b.highTicks)}, the mark ${p(b.markTicks)} ± ${stepsToDecimal(b.bandPpm, '0.0001')} %`;
  return b.side === 'BUY'
    ? `price: ${p(b.priceTicks)} is above the price band: a BUY is accepted up to ${p(b.highTicks)} (${band})`
    : `price: ${p(b.priceTicks)} is below the price band: a SELL is accepted down to ${p(b.lowTicks)} (${band})`;
}

/**
 * `submit`: sends a command and answers once the engine state the service reads shows it; `place`:
 * the same for an order placement, which reads nothing after; `once`: `submit` for idempotent
 * requests (idempotency.ts).
 */
export function readYourWrites(db: Db, venue: PerpVenue): { submit: PerpVenue['gateway']['submit']; place: PerpVenue['gateway']['submit']; once: SubmitOnceDeps } {
  const submit: PerpVenue['gateway']['submit'] = async (cmd) => {
    const r = await venue.gateway.submit(cmd);
    await venue.caughtUp?.(r.journalSeq);
    return r;
  };
  /**
   * An order placement, answered from the engine's reply alone: on a replica's venue the row is only
   * noted (the next request of this process that reads waits for it, `settled`). Waiting for the
   * replica here cost every placement a journal read in each API process (issue 40, item 5).
   */
  const place: PerpVenue['gateway']['submit'] = async (cmd, claim) => {
    const r = await venue.gateway.submit(cmd, claim);
    if (venue.acknowledged) venue.acknowledged(r.journalSeq);
    else await venue.caughtUp?.(r.journalSeq);
    return r;
  };
  return { submit, place, once: { db, submit, ...(venue.caughtUp ? { caughtUp: (seq: number | null) => venue.caughtUp!(seq) } : {}) } };
}
