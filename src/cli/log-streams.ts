/**
 * Logs never decide the fate of a document. A reader of the logs that leaves early
 * (`extract DIR/ -o out.csv 2>&1 | head -3`) makes the next write to stderr fail with EPIPE (EBADF
 * for a descriptor closed under us); unheard, that 'error' event ends the process between a charge
 * and its record. Heard here, it only ends the logging: Node leaves the stream destroyed and every
 * later write to it is dropped, so the run records every answer, writes its outputs and exits as it
 * would have without the pipe.
 *
 * stdout is heard the same way. When it is the output (`-o -`, the default JSON Lines), its writer
 * (outputs/stream.ts, outputs/write.ts) listens too and turns a reader gone into an output error,
 * exit 8: every listener of the event is called, so this one takes nothing from that one.
 *
 * Installed before a command's action, not at start-up: --help and --version never touch the
 * streams (cli/main.ts helpOutput), and getting process.stderr on a pipe loads Node's net module.
 */
export function keepRunningWhenLogsClose(streams: readonly NodeJS.WritableStream[]): void {
  for (const stream of streams) {
    if (listening.has(stream)) continue;
    listening.add(stream);
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'EBADF' || err.code === 'ERR_STREAM_DESTROYED') return;
      // Any other failure of a log is still a bug to report, as it was before this listener.
      throw err;
    });
  }
}

const listening = new WeakSet<NodeJS.WritableStream>();
