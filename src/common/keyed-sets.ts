/**
 * Values grouped by key, a key kept only while it has values: who waits on what
 * (TaskNotifier's listeners, LedgerService's watches).
 */
export class KeyedSets<K, V> {
  private readonly sets = new Map<K, Set<V>>();

  /** Adds `value` under `key`; returns what removes it again. */
  add(key: K, value: V): () => void {
    let set = this.sets.get(key);
    if (!set) {
      this.sets.set(key, (set = new Set()));
    }
    set.add(value);
    return () => {
      set.delete(value);
      if (set.size === 0 && this.sets.get(key) === set) {
        this.sets.delete(key);
      }
    };
  }

  /** The values under `key` as they are now (a copy: one may be removed while the caller goes through them). */
  get(key: K): V[] {
    return [...(this.sets.get(key) ?? [])];
  }

  /** Whether `key` has values; with `value`, whether it is one of them. */
  has(key: K, value?: V): boolean {
    const set = this.sets.get(key);
    return set !== undefined && (value === undefined || set.has(value));
  }

  /** The keys that have values, as they are now. */
  keys(): K[] {
    return [...this.sets.keys()];
  }

  /** How many values there are under `key`, or under every key. */
  count(key?: K): number {
    if (key !== undefined) {
      return this.sets.get(key)?.size ?? 0;
    }
    let count = 0;
    for (const set of this.sets.values()) {
      count += set.size;
    }
    return count;
  }
}
