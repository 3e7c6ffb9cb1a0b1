/**
 * A test CA and a server certificate it signs for 127.0.0.1 / localhost, made with openssl
 * (`MUR_OPENSSL`, else openssl on PATH; `deno task test` provisions it) in `dir`: for the TLS
 * tests of the CLI's HTTP client and of `rediss://`.
 */
const OPENSSL = Deno.env.get("MUR_OPENSSL") ?? "openssl";

export async function makeTestCa(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(OPENSSL, { args, cwd: dir, stdout: "null", stderr: "piped" })
      .output();
    if (!out.success) {
      throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
    }
  };
  await run(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=mur test CA",
  );
  await run(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=localhost",
  );
  await Deno.writeTextFile(`${dir}/ext.cnf`, "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
  );
  return { ca: `${dir}/ca.pem`, cert: `${dir}/server.pem`, key: `${dir}/server.key` };
}
