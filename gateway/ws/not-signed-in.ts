// The sockets of each client address that have not signed in yet, oldest first. At the bound a
// new socket is let in and the address's oldest one closed: sockets left idle, or opened by
// another client behind the same address to fill its places, make way for a client that signs
// in at once, instead of keeping it out. The bound still holds what one address can hold.

export class NotSignedIn {
  private readonly byAddress = new Map<string, Set<{ evict(): void }>>();

  constructor(private readonly limit: number) {}

  /**
   * Counts a new socket of the address, closing (`evict`) the oldest at the bound. Returns what
   * gives its place back, once it signs in or goes; calling it again does nothing.
   */
  admit(address: string, evict: () => void): () => void {
    let sockets = this.byAddress.get(address);
    if (!sockets) this.byAddress.set(address, (sockets = new Set()));
    if (sockets.size >= this.limit) {
      const [oldest] = sockets;
      sockets.delete(oldest!);
      oldest!.evict();
    }
    const entry = { evict };
    sockets.add(entry);
    return () => {
      sockets.delete(entry);
      if (sockets.size === 0 && this.byAddress.get(address) === sockets) this.byAddress.delete(address);
    };
  }
}
