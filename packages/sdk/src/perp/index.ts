/**
 * The perpetual venue without the class: its transport and every action, flat (one import per
 * action, so a bundler keeps only those used). Meant for a subpath export `@tokex/sdk/perp`.
 */
export { createPerpTransport, PERP_PATH_ROOT, type PerpPublicTransport, type PerpRequestErrorType, type PerpSendOptions, type PerpTransport } from './perp-transport.ts';
export * from './actions/index.ts';
export {
  build, buildFromNodes, leafHash, leafNode, leafValue, MAX_SUM, parentOf, pathPositions, proof, verify, ZERO_HASH,
  type LeafInput, type MerkleSumTree, type PathStep, type TreeNode,
} from './reserves-tree.ts';
export { escapeCallFromChain, readPublishedLeaves, type EscapeCall, type EscapeFromChainOptions, type EscapeLeafProof } from './escape-from-chain.ts';
