/** mur watch: the murmur.WatchSession client and its terminal renderer. */
export { openWatch, watch, type WatchIO, type WatchOptions, type WatchTarget } from "./watch.ts";
export { type Out, type RenderOptions, WatchRenderer } from "./render.ts";
export { type SseEvent, sseEvents } from "./sse.ts";
export {
  artifactLines,
  contextLabel,
  responseLines,
  stateWord,
  statusLine,
  unfence,
} from "./format.ts";
