/**
 * The indexer's projections against a real anvil with the stack deployed, on SQLite and (with
 * DATABASE_URL) PostgreSQL: every event type projected with exact values.
 */
import { describe, expect, test } from 'vitest';
import { decodeEventLog, keccak256, stringToHex, type Address } from 'viem';
import { accountLensAbi, cashierAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { decodeEvent } from '../../src/indexer/event-decoder.ts';
import { indexedAddresses, operationIdFromReceipt, operationIdOf } from '../../src/stock/operation-id.ts';
import { reprojectEntities } from '../../src/stock/indexer/projector.ts';
import type { Db } from '../../src/storage/database.ts';
import { getCashOperation, getStockOperation, listCashOperationsByTx, listStockOperationsByTx } from '../../src/stock/store/stock-operation-store.ts';
import { getOrder, listOrderFills, listOrdersByTx } from '../../src/stock/store/stock-order-store.ts';
import { getPosition, listPositions } from '../../src/stock/store/stock-position-store.ts';
import { withTransaction } from '../../src/storage/transaction.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { approveStock, approveUsdc, confirm, contracts, DAY, deadlineEachTest, depositUsdc, musd, OrderStatus, price, shares, Side, usdc, ANY_BUY_PRICE, ANY_SELL_PRICE } from '../chain/chain-test-helpers.ts';
import { blockTimeMs, cashierAdmin, expectEventsMatchChain, newIndexer, routerCall, settle } from './indexer-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;
let carol: ChainUser;
let AAPL: Address;
let TSLA: Address;
let deadline: number;

const f = useChainFixture(async () => {
  [alice, bob, carol] = f.users;
  ({ AAPL, TSLA } = contracts(f).stocks);
});
deadlineEachTest(f, (d) => (deadline = d));

const lc = (a: string) => a.toLowerCase();

describe.each(testDatabases)('indexer projections ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  test('a limit buy: placed, partially filled, filled and closed, with exact amounts and fills', async () => {
    const indexer = newIndexer(f, db);
    await depositUsdc(f, alice, usdc('10000'));
    const placed = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('10'), price('200'), DAY, deadline]);
    const orderId = placed.result.toString();
    await indexer.syncOnce();
    const placedAt = await blockTimeMs(f, placed.receipt.blockNumber);
    expect(await getOrder(db, orderId)).toEqual({
      orderId,
      userAddress: lc(alice.address),
      stockAddress: lc(AAPL),
      side: 'Buy',
      orderType: 'Limit',
      status: 'Open',
      timeInForce: 'DAY',
      deadline,
      quantity: shares('10').toString(),
      notional: musd('2000').toString(),
      price: price('200').toString(),
      // 2000 + the 5 bps limit fee on it
      locked: musd('2001').toString(),
      filledQuantity: '0',
      filledNotional: '0',
      fees: '0',
      placeTxHash: placed.receipt.transactionHash,
      cancelTxHash: null,
      closeTxHash: null,
      createdAt: placedAt,
      updatedAt: placedAt,
      closedAt: null,
      blockNumber: Number(placed.receipt.blockNumber),
      multiplier: (10n ** 36n).toString(),
    });
    expect((await listOrdersByTx(db, placed.receipt.transactionHash)).map((o) => o.orderId)).toEqual([orderId]);

    const fill1 = await settle(f, [{ orderId: placed.result, quantity: shares('4'), price: price('199.5') }], []);
    await indexer.syncOnce();
    const partial = await getOrder(db, orderId);
    expect(partial).toMatchObject({
      status: 'Open',
      filledQuantity: shares('4').toString(),
      filledNotional: musd('798').toString(),
      fees: musd('0.399').toString(),
      locked: musd('1202.601').toString(),
      updatedAt: await blockTimeMs(f, fill1.blockNumber),
    });

    const fill2 = await settle(
      f,
      [{ orderId: placed.result, quantity: shares('6'), price: price('199') }],
      [{ orderId: placed.result, status: OrderStatus.Filled }],
    );
    await indexer.syncOnce();
    const filledAt = await blockTimeMs(f, fill2.blockNumber);
    expect(await getOrder(db, orderId)).toMatchObject({
      status: 'Filled',
      filledQuantity: shares('10').toString(),
      filledNotional: musd('1992').toString(),
      fees: musd('0.996').toString(),
      locked: '0',
      closeTxHash: fill2.transactionHash,
      closedAt: filledAt,
      updatedAt: filledAt,
      createdAt: placedAt,
    });
    const fills = await listOrderFills(db, orderId);
    // A fill row as the projection writes it: the settlement's transaction and block, exact amounts.
    const fillRow = (receipt: typeof fill1, quantity: string, at: string, notional: string, fee: string, timestamp: number) => ({
      orderId,
      txHash: receipt.transactionHash,
      blockNumber: Number(receipt.blockNumber),
      logIndex: expect.any(Number),
      quantity: shares(quantity).toString(),
      price: price(at).toString(),
      notional: musd(notional).toString(),
      fee: musd(fee).toString(),
      timestamp,
    });
    expect(fills).toEqual([
      fillRow(fill1, '4', '199.5', '798', '0.399', await blockTimeMs(f, fill1.blockNumber)),
      fillRow(fill2, '6', '199', '1194', '0.597', filledAt),
    ]);
    // The projection agrees with the router's own record.
    const onChain = await f.publicClient.readContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [placed.result] });
    const o = await getOrder(db, orderId);
    expect([o?.filledQuantity, o?.filledNotional, o?.fees, o?.locked]).toEqual(
      [onChain.filledQuantity, onChain.filledNotional, onChain.fees, onChain.locked].map(String),
    );
    // Buy fills mint exchange stock: the position was re-read from the Stock contract.
    expect(await getPosition(db, alice.address, AAPL)).toMatchObject({ walletBalance: shares('100').toString(), exchangeBalance: shares('10').toString(), lockedBalance: '0' });
  });

  test('a limit sell: cancel requested then closed Canceled releases the stock; positions follow the Stock state', async () => {
    const indexer = newIndexer(f, db);
    await approveStock(f, bob, AAPL, shares('20'));
    const deposit = await routerCall(f, bob, 'depositStock', [AAPL, shares('20')]);
    const placed = await routerCall<bigint>(f, bob, 'placeLimitOrder', [AAPL, Side.Sell, shares('8'), price('251'), DAY, deadline]);
    await indexer.syncOnce();
    const orderId = placed.result.toString();
    expect(await getOrder(db, orderId)).toMatchObject({
      side: 'Sell',
      status: 'Open',
      quantity: shares('8').toString(),
      notional: musd('2008').toString(),
      locked: shares('8').toString(),
    });
    expect(await getPosition(db, bob.address, AAPL)).toMatchObject({
      walletBalance: shares('80').toString(),
      exchangeBalance: shares('12').toString(),
      lockedBalance: shares('8').toString(),
      blockNumber: Number(placed.receipt.blockNumber),
    });

    const cancel = await routerCall(f, bob, 'cancelLimitOrder', [placed.result]);
    await indexer.syncOnce();
    expect(await getOrder(db, orderId)).toMatchObject({
      status: 'Canceling',
      cancelTxHash: cancel.receipt.transactionHash,
      updatedAt: await blockTimeMs(f, cancel.receipt.blockNumber),
      closedAt: null,
    });

    const close = await settle(f, [], [{ orderId: placed.result, status: OrderStatus.Canceled }]);
    await indexer.syncOnce();
    expect(await getOrder(db, orderId)).toMatchObject({
      status: 'Canceled',
      locked: '0',
      filledQuantity: '0',
      cancelTxHash: cancel.receipt.transactionHash,
      closeTxHash: close.transactionHash,
      closedAt: await blockTimeMs(f, close.blockNumber),
    });
    expect(await getPosition(db, bob.address, AAPL)).toMatchObject({ exchangeBalance: shares('20').toString(), lockedBalance: '0' });

    // The stock deposit is an operation of its own; its log is the Stock's second in the transaction
    // (after the ERC-20 Transfer), so its ordinal is 1.
    const opId = operationIdOf(deposit.receipt.transactionHash, 1);
    expect(await listStockOperationsByTx(db, deposit.receipt.transactionHash)).toEqual([
      {
        operationId: opId,
        kind: 'deposit',
        userAddress: lc(bob.address),
        stockAddress: lc(AAPL),
        amount: shares('20').toString(),
        status: 'completed',
        txHash: deposit.receipt.transactionHash,
        blockNumber: Number(deposit.receipt.blockNumber),
        createdAt: await blockTimeMs(f, deposit.receipt.blockNumber),
        updatedAt: await blockTimeMs(f, deposit.receipt.blockNumber),
      },
    ]);
  });

  test('market orders closed with each final status', async () => {
    const indexer = newIndexer(f, db);
    await depositUsdc(f, carol, usdc('5000'));
    await approveStock(f, bob, TSLA, shares('10'));
    await routerCall(f, bob, 'depositStock', [TSLA, shares('10')]);
    const buyExpired = await routerCall<bigint>(f, carol, 'placeMarketOrder', [TSLA, Side.Buy, 0n, musd('1000'), ANY_BUY_PRICE, deadline]);
    const buyRejected = await routerCall<bigint>(f, carol, 'placeMarketOrder', [TSLA, Side.Buy, 0n, musd('500'), ANY_BUY_PRICE, deadline]);
    const sellFilled = await routerCall<bigint>(f, bob, 'placeMarketOrder', [TSLA, Side.Sell, shares('5'), 0n, ANY_SELL_PRICE, deadline]);
    await indexer.syncOnce();
    expect(await getOrder(db, buyExpired.result.toString())).toMatchObject({
      orderType: 'Market',
      side: 'Buy',
      quantity: '0',
      notional: musd('1000').toString(),
      // A market order's price of record is its worst price (the API shows none for it).
      price: ANY_BUY_PRICE.toString(),
      locked: musd('1000').toString(),
    });
    expect(await getOrder(db, sellFilled.result.toString())).toMatchObject({ quantity: shares('5').toString(), notional: '0', locked: shares('5').toString() });

    const closes = await settle(
      f,
      [{ orderId: sellFilled.result, quantity: shares('5'), price: price('230') }],
      [
        { orderId: buyExpired.result, status: OrderStatus.Expired },
        { orderId: buyRejected.result, status: OrderStatus.Rejected },
        { orderId: sellFilled.result, status: OrderStatus.Filled },
      ],
    );
    await indexer.syncOnce();
    expect(await getOrder(db, buyExpired.result.toString())).toMatchObject({ status: 'Expired', locked: '0', closeTxHash: closes.transactionHash });
    expect(await getOrder(db, buyRejected.result.toString())).toMatchObject({ status: 'Rejected', locked: '0' });
    // Sell proceeds 1150, market fee 10 bps = 1.15 out of them.
    expect(await getOrder(db, sellFilled.result.toString())).toMatchObject({
      status: 'Filled',
      filledQuantity: shares('5').toString(),
      filledNotional: musd('1150').toString(),
      fees: musd('1.15').toString(),
      locked: '0',
    });
  });

  test('cash deposits and withdrawals, instant and queued, complete with their settlement', async () => {
    const indexer = newIndexer(f, db);
    const c = contracts(f);
    const instantDeposit = await depositUsdc(f, alice, usdc('10000'));
    await cashierAdmin(f, 'setCreditBuffer', [musd('500')]);
    await approveUsdc(f, bob, usdc('1000'));
    const queuedDeposit = await routerCall(f, bob, 'deposit', [c.cashToken, usdc('1000')]);
    const instantWithdrawal = await routerCall(f, alice, 'withdraw', [c.cashToken, usdc('100')]);
    await cashierAdmin(f, 'setWithdrawBuffer', [c.cashToken, usdc('50')]);
    const queuedWithdrawal = await routerCall(f, alice, 'withdraw', [c.cashToken, usdc('500')]);
    await indexer.syncOnce();

    const t = (r: { blockNumber: bigint }) => blockTimeMs(f, r.blockNumber);
    const depositId = operationIdOf(instantDeposit.transactionHash, 0);
    expect(await getCashOperation(db, depositId)).toEqual({
      operationId: depositId,
      kind: 'deposit',
      userAddress: lc(alice.address),
      tokenAddress: lc(c.cashToken),
      tokenAmount: usdc('10000').toString(),
      musdAmount: musd('10000').toString(),
      status: 'completed',
      instant: true,
      queueId: null,
      txHash: instantDeposit.transactionHash,
      settleTxHash: null,
      blockNumber: Number(instantDeposit.blockNumber),
      createdAt: await t(instantDeposit),
      updatedAt: await t(instantDeposit),
      completedAt: await t(instantDeposit),
      steps: [{ step: 'deposited-instant', txHash: instantDeposit.transactionHash, timestamp: await t(instantDeposit) }],
    });

    const [queued] = await listCashOperationsByTx(db, queuedDeposit.receipt.transactionHash);
    expect(queued).toMatchObject({
      kind: 'deposit',
      status: 'processing',
      instant: false,
      queueId: '1',
      musdAmount: musd('1000').toString(),
      completedAt: null,
      steps: [{ step: 'queued', txHash: queuedDeposit.receipt.transactionHash, timestamp: await t(queuedDeposit.receipt) }],
    });

    // The cash token's Transfer comes first in a withdrawal, but only the indexed contracts' logs
    // count for the ordinal: the Withdrawn log is ordinal 0.
    const withdrawal = instantWithdrawal.receipt;
    expect(withdrawal.logs[0].address.toLowerCase()).toBe(lc(c.cashToken));
    const withdrawnLog = withdrawal.logs.find((l) => l.address.toLowerCase() === lc(c.cashier)) as { logIndex: number };
    const withdrawalId = operationIdFromReceipt(withdrawal, withdrawnLog.logIndex, f.deployment);
    expect(withdrawalId).toBe(operationIdOf(withdrawal.transactionHash, 0));
    expect(await getCashOperation(db, withdrawalId as string)).toMatchObject({
      kind: 'withdrawal',
      status: 'completed',
      instant: true,
      tokenAmount: usdc('100').toString(),
      musdAmount: musd('100').toString(),
      steps: [
        { step: 'debited', txHash: withdrawal.transactionHash, timestamp: await t(withdrawal) },
        { step: 'paid', txHash: withdrawal.transactionHash, timestamp: await t(withdrawal) },
      ],
    });
    const [queuedOut] = await listCashOperationsByTx(db, queuedWithdrawal.receipt.transactionHash);
    expect(queuedOut).toMatchObject({ kind: 'withdrawal', status: 'processing', instant: false, queueId: '1', settleTxHash: null });
    expect(queuedOut.steps.map((s) => s.step)).toEqual(['debited', 'queued']);

    const settledIn = await cashierAdmin(f, 'settleDeposit', [1n]);
    const settledOut = await cashierAdmin(f, 'settleWithdrawal', [1n]);
    await indexer.syncOnce();
    expect(await getCashOperation(db, queued.operationId)).toMatchObject({
      status: 'completed',
      settleTxHash: settledIn.transactionHash,
      completedAt: await t(settledIn),
      updatedAt: await t(settledIn),
      createdAt: await t(queuedDeposit.receipt),
      steps: [
        { step: 'queued', txHash: queuedDeposit.receipt.transactionHash, timestamp: await t(queuedDeposit.receipt) },
        { step: 'settled', txHash: settledIn.transactionHash, timestamp: await t(settledIn) },
      ],
    });
    const out = await getCashOperation(db, queuedOut.operationId);
    expect(out).toMatchObject({ status: 'completed', settleTxHash: settledOut.transactionHash, completedAt: await t(settledOut) });
    expect(out?.steps.map((s) => s.step)).toEqual(['debited', 'queued', 'settled']);
    // A settlement transaction creates no operation of its own.
    expect(await listCashOperationsByTx(db, settledIn.transactionHash)).toEqual([]);
  });

  test('stock withdrawal, and an order with deposit gives an operation and an order in one transaction', async () => {
    const indexer = newIndexer(f, db);
    const c = contracts(f);
    await approveStock(f, carol, AAPL, shares('30'));
    await routerCall(f, carol, 'depositStock', [AAPL, shares('30')]);
    const out = await routerCall(f, carol, 'withdrawStock', [AAPL, shares('12.5')]);
    await approveUsdc(f, alice, usdc('3000'));
    const combo = await routerCall<bigint>(f, alice, 'depositAndLimitBuy', [c.cashToken, usdc('3000'), TSLA, shares('2'), price('250'), DAY, deadline]);
    await indexer.syncOnce();

    const [withdrawal] = await listStockOperationsByTx(db, out.receipt.transactionHash);
    expect(withdrawal).toMatchObject({
      operationId: operationIdOf(out.receipt.transactionHash, 1),
      kind: 'withdrawal',
      amount: shares('12.5').toString(),
      status: 'completed',
      stockAddress: lc(AAPL),
    });
    expect(await getStockOperation(db, withdrawal.operationId)).toEqual(withdrawal);
    expect(await getPosition(db, carol.address, AAPL)).toMatchObject({ walletBalance: shares('82.5').toString(), exchangeBalance: shares('17.5').toString() });

    const tx = combo.receipt.transactionHash;
    const [deposit] = await listCashOperationsByTx(db, tx);
    const depositLog = combo.receipt.logs.find((l) => l.address.toLowerCase() === lc(c.cashier)) as { logIndex: number };
    expect(deposit.operationId).toBe(operationIdFromReceipt(combo.receipt, depositLog.logIndex, f.deployment));
    expect(deposit).toMatchObject({ kind: 'deposit', instant: true, status: 'completed', tokenAmount: usdc('3000').toString() });
    expect(await listOrdersByTx(db, tx)).toMatchObject([{ orderId: combo.result.toString(), side: 'Buy', notional: musd('500').toString(), placeTxHash: tx }]);
  });

  test('a split restates the open orders of its stock, re-reads every holder, and a later fill folds in the new shares', async () => {
    const indexer = newIndexer(f, db);
    await depositUsdc(f, alice, usdc('10000'));
    await approveStock(f, bob, AAPL, shares('20'));
    await routerCall(f, bob, 'depositStock', [AAPL, shares('20')]);
    const sell = await routerCall<bigint>(f, bob, 'placeLimitOrder', [AAPL, Side.Sell, shares('8'), price('251'), DAY, deadline]);
    const buy = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('2'), price('200.01'), DAY, deadline]);
    const tsla = await routerCall<bigint>(f, alice, 'placeLimitOrder', [TSLA, Side.Buy, shares('1'), price('300'), DAY, deadline]);
    await settle(f, [{ orderId: sell.result, quantity: shares('3'), price: price('251') }], []);
    await indexer.syncOnce();
    const split = await confirm(f, f.operator.writeContract({ address: AAPL, abi: stockAbi, functionName: 'split', args: [10n, 1n, keccak256(stringToHex('AAPL-split'))] }));
    await indexer.syncOnce();
    const m10 = (10n * 10n ** 36n).toString();
    expect(await getOrder(db, sell.result.toString())).toMatchObject({
      quantity: shares('80').toString(),
      filledQuantity: shares('30').toString(),
      price: price('25.1').toString(),
      // Base units of the stock: unchanged by the split.
      locked: shares('5').toString(),
      multiplier: m10,
      updatedAt: await blockTimeMs(f, split.blockNumber),
    });
    // 200.01 / 10 = 20.001 exactly.
    expect(await getOrder(db, buy.result.toString())).toMatchObject({ quantity: shares('20').toString(), price: price('20.001').toString(), multiplier: m10 });
    expect(await getOrder(db, tsla.result.toString())).toMatchObject({ quantity: shares('1').toString(), multiplier: (10n ** 36n).toString() });
    // Alice never touched her wallet's AAPL: the split alone re-read it.
    expect(await getPosition(db, alice.address, AAPL)).toMatchObject({ walletBalance: shares('1000').toString(), blockNumber: Number(split.blockNumber) });
    expect(await getPosition(db, bob.address, AAPL)).toMatchObject({ walletBalance: shares('800').toString(), exchangeBalance: shares('120').toString(), lockedBalance: shares('50').toString() });

    await settle(f, [{ orderId: sell.result, quantity: shares('25'), price: price('25.1') }], []);
    await indexer.syncOnce();
    expect(await getOrder(db, sell.result.toString())).toMatchObject({ filledQuantity: shares('55').toString(), locked: shares('2.5').toString(), multiplier: m10 });
    const view = await f.publicClient.readContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [sell.result] });
    expect([view.quantity, view.filledQuantity, view.price, view.locked]).toEqual([shares('80'), shares('55'), price('25.1'), shares('2.5')]);
    // The fills stay as they happened: the first in the shares before the split.
    expect((await listOrderFills(db, sell.result.toString())).map((x) => [x.quantity, x.price])).toEqual([
      [shares('3').toString(), price('251').toString()],
      [shares('25').toString(), price('25.1').toString()],
    ]);
  });

  test('stored events are exactly the chain logs, decode as viem does, and re-projection equals the appended projections', async () => {
    const indexer = newIndexer(f, db, { batchBlocks: 3 });
    const c = contracts(f);
    await depositUsdc(f, alice, usdc('20000'));
    await approveStock(f, bob, AAPL, shares('40'));
    await routerCall(f, bob, 'depositStock', [AAPL, shares('40')]);
    const buy = await routerCall<bigint>(f, alice, 'placeLimitOrder', [AAPL, Side.Buy, shares('3'), price('210'), DAY, deadline]);
    const sell = await routerCall<bigint>(f, bob, 'placeLimitOrder', [AAPL, Side.Sell, shares('7'), price('205'), DAY, deadline]);
    await indexer.syncOnce();
    await settle(f, [{ orderId: buy.result, quantity: shares('1'), price: price('209') }, { orderId: sell.result, quantity: shares('2'), price: price('206') }], []);
    await routerCall(f, bob, 'cancelLimitOrder', [sell.result]);
    await cashierAdmin(f, 'setWithdrawBuffer', [c.cashToken, 0n]);
    await routerCall(f, alice, 'withdraw', [c.cashToken, usdc('5')]);
    await cashierAdmin(f, 'settleWithdrawal', [1n]);
    await settle(f, [], [{ orderId: buy.result, status: OrderStatus.Filled }, { orderId: sell.result, status: OrderStatus.Canceled }]);
    await indexer.syncOnce();
    await expectEventsMatchChain(f, db);

    // Every stored event decodes like viem's generic decoder on the node's own log.
    const abi = [...stockRouterAbi, ...cashierAbi, ...stockAbi, ...oneClickRouterAbi];
    const logs = await f.publicClient.getLogs({ address: indexedAddresses(f.deployment) as Address[], fromBlock: 0n });
    expect(logs.length).toBeGreaterThan(40);
    const names = new Set<string>();
    for (const log of logs) {
      const viem = decodeEventLog({ abi, topics: log.topics, data: log.data });
      const fast = decodeEvent(log.topics, log.data);
      expect(fast?.name).toBe(viem.eventName);
      const normalised = Object.fromEntries(
        Object.entries(viem.args as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'bigint' ? v.toString() : typeof v === 'string' && v.startsWith('0x') ? v.toLowerCase() : v]),
      );
      for (const [k, v] of Object.entries(normalised)) expect(String(fast?.args[k]), `${viem.eventName}.${k}`).toBe(String(v));
      names.add(fast?.name ?? '');
    }
    for (const n of ['OrderPlaced', 'OrderFilled', 'OrderCancelRequested', 'OrderClosed', 'Deposited', 'WithdrawalQueued', 'WithdrawalSettled', 'StockDeposited', 'Transfer']) {
      expect(names.has(n), n).toBe(true);
    }

    // Folding everything again from the stored events gives the rows the appends produced.
    const snapshotRows = async () => ({
      orders: await db.kysely.selectFrom('stock_orders').selectAll().orderBy('order_id').execute(),
      fills: await db.kysely.selectFrom('stock_order_fills').selectAll().orderBy('tx_hash').orderBy('log_index').execute(),
      cash: await db.kysely.selectFrom('stock_cash_operations').selectAll().orderBy('operation_id').execute(),
      stock: await db.kysely.selectFrom('stock_operations').selectAll().orderBy('operation_id').execute(),
    });
    const appended = await snapshotRows();
    expect(appended.orders).toHaveLength(2);
    expect(appended.fills).toHaveLength(2);
    const keys = (await db.kysely.selectFrom('chain_events').select('entity_key').distinct().where('indexer', '=', 'stock').where('entity_key', 'is not', null).execute()).map((r) => r.entity_key as string);
    await withTransaction(db, (tx) => reprojectEntities(tx, 'stock', keys));
    expect(await snapshotRows()).toEqual(appended);

    // Positions are the Stock contract's state.
    for (const p of await listPositions(db, bob.address)) {
      const account = await f.publicClient.readContract({ address: c.accountLens, abi: accountLensAbi, functionName: 'getAccount', args: [bob.address, [p.stockAddress as Address], [], '0x0000000000000000000000000000000000000000'] });
      expect([p.walletBalance, p.exchangeBalance, p.lockedBalance]).toEqual([account.stocks[0].wallet, account.stocks[0].exchange, account.stocks[0].locked].map(String));
    }
  });
});

