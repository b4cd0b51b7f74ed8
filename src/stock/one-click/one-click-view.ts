/**
 * A One Click delegation as the API answers it (`1ct/status`, `1ct/enable|disable`, `users/{userId}`):
 * `status` in Anchored's words (`enable` / `disabled`, anchored-reference.md §4.6: what its clients
 * wait for before a send), `delegationStatus` in tokex's (`enabled` / `disabled`, what `status`
 * answered before issue 30).
 */
import type { StockOneClickStatus, StockOneClickStatusValue } from '@tokex/contract';
import type { Address } from 'viem';

export function oneClickStatusView(v: { status: StockOneClickStatusValue; delegatee: Address }): StockOneClickStatus {
  return { status: v.status === 'enabled' ? 'enable' : 'disabled', delegationStatus: v.status, delegatee: v.delegatee };
}
