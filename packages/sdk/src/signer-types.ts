/** What signs EIP-712 typed data: a viem account or wallet client, or any eth_signTypedData_v4 wallet. */
export interface TypedDataSigner {
  address: `0x${string}`;
  signTypedData(typedData: any): Promise<`0x${string}`>;
}

/** A typed-data signer whose address is not needed (the stock One Click delegation). */
export type AnyTypedDataSigner = Pick<TypedDataSigner, 'signTypedData'>;
