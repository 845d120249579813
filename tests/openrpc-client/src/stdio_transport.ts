// A client-js transport over a child process's stdin/stdout, one JSON-RPC message per line:
// what `rho rpc` speaks. The generated client offers only HTTP, WebSocket and postMessage
// transports; this is the one piece the test adds beneath it. It frames lines and hands every
// line rho writes to client-js, which matches responses to requests and passes notifications
// on; it interprets nothing itself. Every line either way is kept in `transcript`, so the test
// can check what went over the wire.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import { Transport } from "@open-rpc/client-js/build/transports/Transport.js";
import { getNotifications, type JSONRPCRequestData } from "@open-rpc/client-js/build/Request.js";

/** One line of the conversation: `">"` sent to rho, `"<"` received from it. */
export type TranscriptLine = [">" | "<", string];

export class StdioTransport extends Transport {
  public readonly transcript: TranscriptLine[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the exit code once rho has exited. */
  public readonly exited: Promise<number | null>;

  constructor(command: string, args: string[]) {
    super();
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.pipe(process.stderr);
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
  }

  public connect(): Promise<void> {
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      this.transcript.push(["<", line]);
      this.transportRequestManager.resolveResponse(line);
    });
    return Promise.resolve();
  }

  public sendData(data: JSONRPCRequestData, timeout: number | null = null): Promise<unknown> {
    const pending = this.transportRequestManager.addRequest(data, timeout);
    const line = JSON.stringify(this.parseData(data));
    this.transcript.push([">", line]);
    this.child.stdin.write(line + "\n");
    this.transportRequestManager.settlePendingRequest(getNotifications(data));
    return pending;
  }

  /** Closes rho's stdin: end of input, after which rho finishes what it received and exits. */
  public close(): void {
    this.child.stdin.end();
  }
}
