import { SimpleStateManager } from '@ethereumjs/statemanager';
import type { Account, Address } from '@ethereumjs/util';

type Layer = Map<string, unknown>;

/**
 * The cheapest in-memory state a bare `@ethereumjs/vm` can run over, for the interpreter's ceiling
 * (bench/evm-ceiling.ts): @ethereumjs' SimpleStateManager (plain maps, no trie, no state root) with its
 * checkpoints replaced by an undo log. SimpleStateManager copies the whole state at every checkpoint (each
 * transaction and call takes one), so its cost grows with the state and a block of 850 transfers runs slower
 * than the node; here a checkpoint is the log's length, a revert undoes the writes after it.
 */
export class MapStateManager extends SimpleStateManager {
  private readonly undo: { layer: Layer; key: string; had: boolean; value: unknown }[] = [];
  private readonly marks: number[] = [];

  private record(layer: Layer, key: string): void {
    if (this.marks.length === 0) return;
    this.undo.push({ layer, key, had: layer.has(key), value: layer.get(key) });
  }

  /** A copy: the VM changes the account it was given before it puts it back. */
  override async getAccount(address: Address): Promise<Account | undefined> {
    const a = this.topAccountStack().get(address.toString());
    return a === undefined ? undefined : Object.assign(Object.create(Object.getPrototypeOf(a)), a);
  }

  override async putAccount(address: Address, account: Account): Promise<void> {
    this.record(this.topAccountStack() as Layer, address.toString());
    await super.putAccount(address, account);
  }

  override async deleteAccount(address: Address): Promise<void> {
    this.record(this.topAccountStack() as Layer, address.toString());
    await super.deleteAccount(address);
  }

  override async putCode(address: Address, value: Uint8Array): Promise<void> {
    this.record(this.topCodeStack() as Layer, address.toString());
    await super.putCode(address, value);
  }

  override async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    // SimpleStateManager's storage key: address, then the slot as 0x-hex.
    this.record(this.topStorageStack() as Layer, `${address.toString()}_0x${Buffer.from(key).toString('hex')}`);
    await super.putStorage(address, key, value);
  }

  override async clearStorage(address: Address): Promise<void> {
    const layer = this.topStorageStack() as Layer;
    const prefix = `${address.toString()}_`;
    for (const k of layer.keys()) if (k.startsWith(prefix)) this.record(layer, k);
    await super.clearStorage(address);
  }

  override async checkpoint(): Promise<void> {
    this.marks.push(this.undo.length);
  }

  override async commit(): Promise<void> {
    this.marks.pop();
    if (this.marks.length === 0) this.undo.length = 0;
  }

  override async revert(): Promise<void> {
    const mark = this.marks.pop() ?? 0;
    while (this.undo.length > mark) {
      const u = this.undo.pop() as (typeof this.undo)[number];
      if (u.had) u.layer.set(u.key, u.value);
      else u.layer.delete(u.key);
    }
  }
}
