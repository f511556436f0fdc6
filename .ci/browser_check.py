#!/usr/bin/env python3
"""Opens an HTML report in headless Chromium, takes a screenshot and checks that it rendered.

Usage: browser_check.py REPORT.html SCREENSHOT.png

Checks: Chromium exits 0 and writes the screenshot; the PNG has the requested size; it is not
blank (many distinct pixel rows, not one colour); the page logged no console error or uncaught
exception. Exits non-zero with a message otherwise.
"""
import struct
import subprocess
import sys
import zlib

WIDTH, HEIGHT = 1280, 2400


def png_rows(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, colour = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
    channels = {2: 3, 6: 4, 0: 1, 4: 2}[colour]
    raw = zlib.decompress(idat)
    stride = w * channels * depth // 8
    rows, prev, i = [], bytearray(stride), 0
    bpp = max(1, channels * depth // 8)
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows


def main():
    report, shot = sys.argv[1], sys.argv[2]
    cmd = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--enable-logging=stderr", "--v=0", f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={shot}", "file://" + report,
    ]
    # Chromium itself now and then dies of a signal at start-up here (SIGSEGV, exit -11, seen once
    # in a CI run; the same report rendered at once when run again): up to three tries when it
    # is killed by a signal. A normal non-zero exit, console errors and a blank page still fail.
    for attempt in range(1, 4):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode >= 0:
            break
        print(f"chromium killed by signal {-p.returncode} (try {attempt} of 3)", file=sys.stderr)
    if p.returncode != 0:
        sys.exit(f"chromium failed ({p.returncode}): {p.stderr[-2000:]}")
    console = [l for l in p.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    errors = [l for l in console if "rror" in l or "Uncaught" in l]
    if errors:
        sys.exit("console errors:\n" + "\n".join(errors))
    w, h, rows = png_rows(shot)
    if (w, h) != (WIDTH, HEIGHT):
        sys.exit(f"screenshot is {w}x{h}, expected {WIDTH}x{HEIGHT}")
    distinct = len(set(rows))
    ink = sum(1 for r in rows if len(set(r)) > 8)
    if distinct < 200 or ink < h // 4:
        sys.exit(f"screenshot looks blank: {distinct} distinct rows, {ink} rows with content")
    print(f"rendered {report}: {w}x{h}, {distinct} distinct rows, {ink} rows with content, "
          f"{len(console)} console lines, no errors -> {shot}")


if __name__ == "__main__":
    main()
