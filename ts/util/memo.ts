/**
 * A value remembered on an object, in a non-enumerable symbol property: what a WeakMap keyed by the object does
 * (the value lives as long as the object; JSON, spreads, Object.keys and deep equality do not see it), without the
 * WeakMap's cost. Every garbage collection walks a WeakMap's ephemeron table again, and the pool's transactions
 * each had four of them (their decoded form, their encoding, their rule check, their sender): measured ~3-7 µs of
 * GC per admitted transaction. An object that cannot take the property (frozen, sealed) is simply not remembered.
 */
export interface ObjectMemo<K extends object, V> {
  get(obj: K): V | undefined;
  set(obj: K, value: V): void;
}

export function objectMemo<K extends object, V>(name: string): ObjectMemo<K, V> {
  const key = Symbol(name);
  return {
    get: (obj) => (obj as { [key]?: V })[key],
    set(obj, value) {
      if (Object.hasOwn(obj, key)) (obj as { [key]?: V })[key] = value;
      else if (Object.isExtensible(obj)) Object.defineProperty(obj, key, { value, writable: true });
    },
  };
}
