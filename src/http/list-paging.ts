/**
 * Paging of every list endpoint of both APIs: the rule is the contract's (packages/contract
 * common/paging.ts); the servers' stores take the `{page, limit, offset}` it answers.
 */
export { ListOf as listOf, MAX_PAGE, PageQueryProps as pageQueryProps, pageOf } from '@tokex/contract';
