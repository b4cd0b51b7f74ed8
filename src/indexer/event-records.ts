/**
 * From raw logs of whole blocks to event records (`chain_events` rows): decoded arguments,
 * ordinals per transaction, timestamps. Entity keys are left to the indexer's handlers.
 */
import type { ChainEventRecord } from '../storage/chain-block-store.ts';
import type { EventDecoder, RawLog } from './event-decoder.ts';

/**
 * Decodes the logs of whole blocks into event records: ordinals per transaction (the position among
 * the transaction's logs of the indexer's own contracts: the logs asked for), timestamps from the
 * log (`blockTimestamp`) or `timestamps` (block hash → ms). A log `decode` does not know is kept as
 * `Unknown` with its topics and data.
 */
export function decodeLogs(logs: readonly RawLog[], decode: EventDecoder, timestamps?: ReadonlyMap<string, number>): ChainEventRecord[] {
  const events = decodeInOrder(logs, decode, timestamps);
  // Nodes answer in chain order; ordinals need it, so sort only when one does not.
  for (let i = 1; i < events.length; i++) {
    const a = events[i - 1];
    const b = events[i];
    if (a.blockNumber > b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex >= b.logIndex)) {
      return decodeInOrder([...logs].sort(compareRaw), decode, timestamps);
    }
  }
  return events;
}

function decodeInOrder(logs: readonly RawLog[], decode: EventDecoder, timestamps?: ReadonlyMap<string, number>): ChainEventRecord[] {
  const out: ChainEventRecord[] = [];
  let prevTx = '';
  let prevBlock = '';
  let prevRawTx = '';
  let prevRawBlock = '';
  // Few contracts emit everything, but their logs interleave (a fill is a router log, then a stock
  // log), so one string per contract, not per run.
  const addresses = new Map<string, string>();
  let ordinal = 0;
  for (const log of logs) {
    if (log.removed) continue;
    // Consecutive logs share their block and mostly their transaction: the records keep one string
    // for each run of them (and one per contract), so the JSON answer's own copies die young. A
    // batch keeps its records until it is written, and the garbage collector copies what survives.
    const blockHash = log.blockHash === prevRawBlock ? prevBlock : log.blockHash.toLowerCase();
    const txHash = log.transactionHash === prevRawTx ? prevTx : log.transactionHash.toLowerCase();
    ordinal = txHash === prevTx && blockHash === prevBlock ? ordinal + 1 : 0;
    prevRawBlock = log.blockHash;
    prevRawTx = log.transactionHash;
    prevTx = txHash;
    prevBlock = blockHash;
    let address = addresses.get(log.address);
    if (address === undefined) {
      address = log.address.toLowerCase();
      addresses.set(log.address, address);
    }
    const decoded = decode(log.topics, log.data);
    const timestamp =
      log.blockTimestamp !== undefined ? parseInt(log.blockTimestamp, 16) * 1000 : (timestamps?.get(blockHash) ?? 0);
    out.push({
      blockHash,
      blockNumber: parseInt(log.blockNumber, 16),
      timestamp,
      txHash,
      logIndex: parseInt(log.logIndex, 16),
      ordinal,
      address,
      name: decoded ? decoded.name : 'Unknown',
      args: decoded ? decoded.args : { topics: log.topics, data: log.data },
      entityKey: null,
    });
  }
  return out;
}

function compareRaw(a: RawLog, b: RawLog): number {
  return parseInt(a.blockNumber, 16) - parseInt(b.blockNumber, 16) || parseInt(a.logIndex, 16) - parseInt(b.logIndex, 16);
}
