/** The perp API's refusal of a call made through PerpClient: its code, HTTP status and message. */
import { PerpApiError } from '@tokex/sdk';

export async function refused(p: Promise<unknown>): Promise<{ code: number; httpStatus: number; msg: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof PerpApiError) return { code: err.code, httpStatus: err.httpStatus, msg: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}
