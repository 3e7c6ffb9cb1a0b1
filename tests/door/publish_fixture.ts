/** A capsule that makes files in its workdir and publishes them (docs/protocol.md "Files and data"). */
export const BIG = 5 * 1024 * 1024;

/** A PNG signature and a few bytes that are not UTF-8. */
export const PNG_BYTES = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe];

/** The tools and script of a capsule that makes and publishes three files and one data value. */
export function publishingCapsule(extra: Record<string, unknown> = {}) {
  const png = PNG_BYTES.map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("");
  const make = [
    "printf '# Report\\n\\nAll good ✓\\n' > report.md",
    `printf '${png}' > chart.png`,
    `head -c ${BIG} /dev/zero | tr '\\0' 'z' > big.bin`,
    "ln -s /etc/hostname link.md",
    "mkdir -p sub && ln -s .. sub/up",
  ].join(" && ");
  const publish = (id: string, path: string) => ({
    tool_call: { id, name: "publish", input: { path } },
  });
  return {
    inference: { max_turns: 20 },
    extra: {
      tools: [
        { builtin: "publish" },
        { name: "make_files", description: "writes the files", command: make },
        {
          name: "stats",
          description: "prints JSON",
          command: `printf '{"rows":3,"ok":true}'`,
          output: "data",
        },
      ],
      ...extra,
    },
    script: {
      tasks: [{
        turns: [
          { steps: [{ tool_call: { id: "mk", name: "make_files", input: {} } }] },
          {
            steps: [
              publish("p1", "report.md"),
              publish("p2", "chart.png"),
              publish("p3", "big.bin"),
              publish("p4", "../outside.md"),
              publish("p5", "/etc/hostname"),
              publish("p6", "link.md"),
              publish("p7", "sub/up/report.md"),
              publish("p8", "missing.md"),
              { tool_call: { id: "s1", name: "stats", input: {} } },
            ],
          },
          { steps: [{ text: "published" }] },
        ],
      }],
    },
  };
}
