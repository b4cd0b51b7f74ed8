/** A signed order message names a clientOrderId: the server applies it once, so it may be resent. */
export function hasClientOrderId(message: Record<string, unknown>): boolean {
  const id = message.clientOrderId;
  return typeof id === 'string' && id !== '' && !/^0x0*$/.test(id);
}
