/**
 * The containment classes (docs/containment.md): what the operating system enforces around every
 * process mur starts for a capsule. Ordered: a class promises everything the ones before it do.
 */

export const CONTAINMENT_CLASSES = ["advisory", "scoped", "sealed"] as const;
export type ContainmentClass = typeof CONTAINMENT_CLASSES[number];

export function isContainmentClass(v: unknown): v is ContainmentClass {
  return (CONTAINMENT_CLASSES as readonly unknown[]).includes(v);
}

/** Position in the order: advisory 0, scoped 1, sealed 2. */
export function rank(c: ContainmentClass): number {
  return CONTAINMENT_CLASSES.indexOf(c);
}

/** The stronger of two classes. */
export function stronger(a: ContainmentClass, b: ContainmentClass): ContainmentClass {
  return rank(a) >= rank(b) ? a : b;
}
