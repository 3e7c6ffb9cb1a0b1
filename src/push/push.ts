/**
 * A session's push notifications (docs/push.md): its configs (configs.ts), its
 * deliveries (deliveries.ts) and its signing secret (signing.ts). `mur run` makes one when the
 * manifest turns push on; the door's push methods (src/door/push_methods.ts) and the inline
 * `taskPushNotificationConfig` of a send act on it; the session's end drains it.
 */
import type { EventLog } from "../events/log.ts";
import type { PushConfig as ManifestPush } from "../manifest/types.ts";
import type { TraceEventType, TraceFieldsOf } from "../trace_events.ts";
import type { Resolver } from "./address_policy.ts";
import { ConfigStore, type PushConfig } from "./configs.ts";
import { Deliveries } from "./deliveries.ts";
import { newSecret, Signer } from "./signing.ts";

export interface PushOptions {
  manifest: ManifestPush;
  log: EventLog;
  trace<K extends TraceEventType>(type: K, fields: TraceFieldsOf[K]): void;
  resolve?: Resolver;
  retryBaseMs?: number;
}

export class PushNotifications {
  readonly store = new ConfigStore();

  private constructor(
    /** The Standard Webhooks secret receivers verify with (`whsec_…`). */
    readonly secret: string,
    readonly allowPrivate: boolean,
    readonly resolve: Resolver | undefined,
    private readonly deliveries: Deliveries,
    private readonly trace: PushOptions["trace"],
  ) {}

  static async create(o: PushOptions): Promise<PushNotifications> {
    const secret = o.manifest.secret ?? newSecret();
    const deliveries = new Deliveries({
      log: o.log,
      signer: await Signer.of(secret),
      allowPrivate: o.manifest.allowPrivate,
      trace: o.trace,
      resolve: o.resolve,
      retryBaseMs: o.retryBaseMs,
    });
    return new PushNotifications(
      secret,
      o.manifest.allowPrivate,
      o.resolve,
      deliveries,
      o.trace,
    );
  }

  /**
   * Stores the config and starts its deliveries with the events after `after` (an inline config:
   * the log's last id before the task was submitted), else with the next event.
   */
  put(c: PushConfig, after?: number): void {
    const replaced = this.store.put(c);
    this.deliveries.attach(ConfigStore.key(c.caller, c.id), c, after);
    this.trace("push_config", {
      task_id: c.taskId,
      config_id: c.id,
      action: replaced ? "replaced" : "created",
      url: c.url.origin,
      activated: c.activated,
    });
  }

  /** Deletes the caller's config; true when there was one. */
  delete(taskId: string, caller: string, id: string): boolean {
    const old = this.store.delete(taskId, caller, id);
    if (!old) return false;
    this.trace("push_config", {
      task_id: taskId,
      config_id: id,
      action: "deleted",
      url: old.url.origin,
      activated: old.activated,
    });
    this.deliveries.detach(ConfigStore.key(caller, id), taskId);
    return true;
  }

  /** The session's end: drain for a bounded time; the totals of what was not delivered. */
  finish(): Promise<{ undelivered: number; dropped: number; gaveUp: number }> {
    return this.deliveries.finish();
  }
}
