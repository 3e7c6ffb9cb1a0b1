/** Fake model providers on loopback, for tests, benchmarks and demos without a key. */
export {
  type FakeProvider,
  type FakeProviderKind,
  type FakeProviderOptions,
  type RecordedRequest,
  startFakeProvider,
} from "./server.ts";
export type { FakeFault, FakeStep, FakeStop, FakeTurn } from "./plan.ts";
