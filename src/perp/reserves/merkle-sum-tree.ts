/**
 * The Merkle-sum tree of the perpetual venue's liabilities (docs/proof-of-reserves.md): one
 * implementation, the SDK's, which users run to rebuild their proofs from the chain; the server
 * builds and serves the very same tree.
 */
export {
  build, buildFromNodes, leafHash, leafNode, leafValue, MAX_SUM, parentOf, pathPositions, proof, verify, ZERO_HASH,
  type LeafInput, type MerkleSumTree, type PathStep, type TreeNode,
} from '@tokex/sdk/perp';
