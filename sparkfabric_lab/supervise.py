"""Run one simulated tool on a lab node so that it ends as a real tool does (lab only).

    python -m sparkfabric_lab.supervise [--perftest] -- ARGV...

- Ending: the plugin ends a command by signalling its process group, and `timeout` passes the
  signal on again; a tool that cleans up in its signal handler can receive it twice. The tool
  runs here in a process group of its own: it gets the first signal once, and 2 s later
  SIGKILL if it is still there (and SIGKILL too if this process dies), so nothing the suite
  started can outlive the command.
- `--perftest`: a real perftest server (`ib_write_bw`, `ib_write_lat`, ...) listens on its TCP
  port (-p, default 18515) for the client's handshake, and the plugin waits until `ss` shows
  that listener. The simulator answers
  the client through its state file and opens no socket, so this binds the port in the node's
  namespace, for real, as long as a simulated server runs. A client (a peer address given) is
  run as is.
"""

from __future__ import annotations

# Only modules written in C, or already loaded at start-up: every simulated tool call starts
# this interpreter (`signal`, `socket` and `subprocess` would import enum, re and selectors).
import _signal  # type: ignore[import-not-found]  # signal's C half: no stub
import _socket
import os
import sys

DEFAULT_PORT = 18515
GRACE_S = 2.0
_PR_SET_PDEATHSIG = 1
# perftest options that take a value as the next word (the peer is the one positional).
_VALUED = frozenset(
    ("-d", "--ib-dev", "-i", "--ib-port", "-m", "--mtu", "-c", "--connection", "-s", "--size",
     "-n", "--iters", "-t", "--tx-depth", "-r", "--rx-depth", "-q", "--qp", "-D", "--duration",
     "-x", "--gid-index", "-S", "--sl", "-I", "--inline_size", "-u", "--qp-timeout",
     "-w", "--limit_bw", "-y", "--limit_msgrate", "-l", "--post_list", "-Q", "--cq-mod",
     "-T", "--tos", "-p", "--port", "-g", "--mcg", "-M", "--source_ip", "-J", "--dest_ip",
     "-j", "--dest_port", "-k", "--source_port", "-L", "--flows", "-W", "--flows_burst")
)  # fmt: skip


def server_port(args: list[str]) -> int | None:
    """The TCP port a perftest command line listens on, or None when it is a client."""
    port = DEFAULT_PORT
    i = 0
    while i < len(args):
        word = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if word in ("-p", "--port") and value.isdigit():
            port = int(value)
        elif word.startswith("--port=") and word[7:].isdigit():
            port = int(word[7:])
        if word in _VALUED:
            i += 2
            continue
        if not word.startswith("-"):
            return None  # a peer address: the client
        i += 1
    return port


def _own_group_dying_with_parent() -> None:
    os.setpgid(0, 0)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _listen(port: int) -> _socket.socket:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    sock.bind(("0.0.0.0", port))
    sock.listen(8)
    return sock


ENDINGS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)


def _spawn(argv: list[str]) -> int:
    # The ending signals wait (blocked) until the caller has its handlers: a tool quick to
    # start could otherwise be signalled while this process would still die of the signal.
    _signal.pthread_sigmask(_signal.SIG_BLOCK, ENDINGS)
    pid = os.fork()
    if pid == 0:
        try:
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, ENDINGS)
            _own_group_dying_with_parent()
            os.execvp(argv[0], argv)
        except OSError as err:
            os.write(2, f"{argv[0]}: {err.strerror}\n".encode())
        os._exit(127)
    return pid


def main(argv: list[str]) -> int:
    args = list(argv)
    perftest = args[:1] == ["--perftest"]
    if perftest:
        args = args[1:]
    child = args[1:] if args[:1] == ["--"] else args
    if not child:
        print("usage: python -m sparkfabric_lab.supervise [--perftest] -- ARGV...",
              file=sys.stderr)  # fmt: skip
        return 2
    sock = None
    if perftest:
        # The tool's own words follow the client's `--` and the tool name.
        tool_args = child[child.index("--") + 2 :] if "--" in child else child[1:]
        port = server_port(tool_args)
        if port is not None:
            try:
                sock = _listen(port)
            except OSError as err:
                print(f" Couldn't listen to port {port}: {err.strerror}", file=sys.stderr)
                return 1
    pid = _spawn(child)
    ending: list[int] = []

    def kill(_signum: int, _frame: object) -> None:
        try:  # noqa: SIM105 (contextlib imports functools and more)
            os.killpg(pid, _signal.SIGKILL)
        except ProcessLookupError:
            pass

    def end(signum: int, _frame: object) -> None:
        if ending:
            return  # the same ending again (timeout repeats it to the group): once is enough
        ending.append(signum)
        try:
            os.killpg(pid, signum)
        except ProcessLookupError:
            return
        _signal.signal(_signal.SIGALRM, kill)
        _signal.setitimer(_signal.ITIMER_REAL, GRACE_S)

    for sig in ENDINGS:
        _signal.signal(sig, end)
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, ENDINGS)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        if sock is not None:
            sock.close()
    kill(0, None)  # whatever the tool left in its group
    return (
        os.waitstatus_to_exitcode(status) % 256
        if os.WIFEXITED(status)
        else 128 + os.WTERMSIG(status)
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
