// A question about the bus whose answer must be as of a given moment or later: a list must see
// every change made before it came. One request serves every caller that came before it was
// sent; callers that come while it is on its way wait for the next one, so at most one request
// is on its way and one waits, however many callers there are.
export class AskedAfter<T> {
  private asked?: Promise<T>;
  private next?: Promise<T>;

  constructor(private readonly ask: () => Promise<T>) {}

  latest(): Promise<T> {
    if (!this.asked) {
      this.asked = this.ask().finally(() => (this.asked = undefined));
      return this.asked;
    }
    // The request on its way may have been sent before this caller came.
    this.next ??= this.asked.catch(() => undefined).then(() => {
      this.next = undefined;
      return this.latest();
    });
    return this.next;
  }
}
