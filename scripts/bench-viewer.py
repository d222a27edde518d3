#!/usr/bin/env python3
"""Times `quire view` the way a reader meets it, for `make bench` (never a test).

The viewer runs on a pseudo-terminal of COLS×ROWS cells whose TIOCGWINSZ reports 8×16-pixel
cells. This script plays the terminal: it answers the start-up probe (primary device
attributes without sixel, and CSI 5n), so no time goes to the probe's timeout, as with a real
terminal. It reports the time from start to the first complete frame (status line showing
page 1), then per page turn the time from the key to the frame showing the next page number,
and the viewer's own CPU time (user+sys) and peak RSS from /proc.
Usage: bench-viewer.py QUIRE BOOK [--cols 160 --rows 50 --turns 40 --runs 5 --graphics symbols]
"""
import argparse, fcntl, os, pty, re, select, signal, statistics, struct, sys, tempfile, termios, time

STATUS = re.compile(rb"\x1b\[7m[^\x1b]*?\s(\d+)/(\d+|\S)")


def run_once(args):
    state = tempfile.mkdtemp(prefix="quire-bench-state-")
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "LANG": "en_US.UTF-8", "XDG_STATE_HOME": state})
        os.environ.pop("TMUX", None)
        os.execv(args.quire, [args.quire, "view", args.book, "--graphics", args.graphics, "--no-resume"])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", args.rows, args.cols, args.cols * 8, args.rows * 16))
    os.kill(pid, signal.SIGWINCH)
    start = time.perf_counter()
    buffer = b""
    last = None

    def pump(until_page, timeout=120.0, counted=False):
        """Reads output, answering probes, until a status line shows `until_page` (with the book's
        total, if `counted`). Returns the time."""
        nonlocal buffer, last
        if last and int(last[0]) == until_page and (not counted or last[1].isdigit()):
            return time.perf_counter()
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                raise SystemExit("bench-viewer: the viewer exited early")
            # Only the tail is searched: the status line comes last in a frame, and scanning a
            # whole 150 KB frame on every read would time this script, not the viewer.
            buffer = buffer[-512:] + chunk
            if b"\x1b[c" in buffer or b"\x1b[0c" in buffer:
                os.write(fd, b"\x1b[?62;22c")
                buffer = buffer.replace(b"\x1b[c", b"").replace(b"\x1b[0c", b"")
            if b"\x1b[5n" in buffer:
                os.write(fd, b"\x1b[0n")
                buffer = buffer.replace(b"\x1b[5n", b"")
            found = STATUS.findall(buffer)
            if found:
                last = found[-1]
            if found and int(found[-1][0]) == until_page and (not counted or found[-1][1].isdigit()):
                now = time.perf_counter()
                buffer = b""
                return now
        raise SystemExit(f"bench-viewer: page {until_page} not shown within {timeout} s")

    first = pump(1) - start
    turns = []
    for page in range(2, args.turns + 2):
        sent = time.perf_counter()
        os.write(fd, b" ")
        turns.append(pump(page) - sent)
    # Then as a reader meets it a little later: the book counted in the background, nothing else running.
    pump(args.turns + 1, counted=True)
    counted = []
    for page in range(args.turns + 2, 2 * args.turns + 2):
        sent = time.perf_counter()
        os.write(fd, b" ")
        counted.append(pump(page) - sent)
    # And as a reader turns: after reading a while (the next page is made ahead meanwhile).
    paused = []
    for page in range(2 * args.turns + 2, 3 * args.turns + 2):
        time.sleep(args.pause)
        sent = time.perf_counter()
        os.write(fd, b" ")
        paused.append(pump(page) - sent)
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    with open(f"/proc/{pid}/status") as f:
        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    os.close(fd)
    return first, turns, counted, paused, cpu, hwm


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("quire")
    parser.add_argument("book")
    parser.add_argument("--cols", type=int, default=160)
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--graphics", default="symbols")
    parser.add_argument("--pause", type=float, default=0.5, help="seconds of reading before each turn of the last phase")
    args = parser.parse_args()
    firsts, medians, worst, later, later_worst, read, read_worst, cpus, rss = [], [], [], [], [], [], [], [], []
    for _ in range(args.runs):
        first, turns, counted, paused, cpu, hwm = run_once(args)
        read.append(statistics.median(paused))
        read_worst.append(max(paused))
        firsts.append(first)
        medians.append(statistics.median(turns))
        worst.append(max(turns))
        later.append(statistics.median(counted))
        later_worst.append(max(counted))
        cpus.append(cpu)
        rss.append(hwm)
    print(f"   {args.cols}x{args.rows} cells, {args.graphics}, {args.runs} runs of 3x{args.turns} turns (medians over runs)")
    print(f"   first frame  {statistics.median(firsts) * 1000:7.1f} ms (target 150; runs {', '.join(f'{t * 1000:.0f}' for t in firsts)})")
    print(f"   page turn    {statistics.median(medians) * 1000:7.1f} ms median, {statistics.median(worst) * 1000:.1f} ms slowest, while the book is counted (target 30)")
    print(f"   page turn    {statistics.median(later) * 1000:7.1f} ms median, {statistics.median(later_worst) * 1000:.1f} ms slowest, once it is counted, back to back")
    print(f"   page turn    {statistics.median(read) * 1000:7.1f} ms median, {statistics.median(read_worst) * 1000:.1f} ms slowest, after {args.pause} s on each page")
    print(f"   viewer CPU   {statistics.median(cpus):7.2f} s user+sys per run (layout in the background included); peak RSS {statistics.median(rss) // 1024} MB")


if __name__ == "__main__":
    main()
