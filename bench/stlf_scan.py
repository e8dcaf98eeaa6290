#!/usr/bin/env python3
"""Store-to-load forwarding suspects in a compiled function (a developer's aid, not run in CI).

    python3 bench/stlf_scan.py BINARY FUNCTION_SUBSTRING [WINDOW]

A load that reads bytes written by more than one store still in flight (a struct written field by
field, then copied with one 16- or 32-byte load) cannot be forwarded from the store queue and
waits until the stores reach the cache: 10–20 cycles that callgrind does not see (it counts
instructions) and perf shows as samples on the instruction after the load. On raypick's hot
paths each such copy cost 1–8 % of a camera ray.

This scan disassembles BINARY (objdump, AT&T syntax) and, in every function whose symbol contains
FUNCTION_SUBSTRING, reports each vector load of 16 or 32 bytes whose bytes overlap, without being
contained in it, a narrower store to the same base register within WINDOW (default 40)
instructions of it in address order: before it, or after it for code a jump leads back to the
load from (a collector's hit built below the copy that reads it). Address order is not execution
order, so a report is a place to look (with perf), not a verdict; copies across calls (a
callee's stores, the caller's loads) are not seen.
"""
import re
import subprocess
import sys

WIDE = {"vmovups", "vmovaps", "movups", "movaps", "vmovdqu", "vmovdqa", "movdqu", "movdqa"}
EIGHT = {"vmovlps", "vmovsd", "movsd", "vmovq", "movq", "movlps", "vmovlpd", "movlpd"}
FOUR = {"vmovss", "movss", "vmovd", "movd", "vextractps", "extractps"}
MEM = re.compile(r"(-?0x[0-9a-f]+)?\((%r[a-z0-9]+)\)")


def width(op, args):
    """Bytes moved by a store or load, or None for instructions the scan ignores."""
    if op.startswith("vbroadcast"):
        return 8 if op.endswith("sd") else 4
    if "%ymm" in args:
        return 32
    if op in WIDE:
        return 16
    if op in EIGHT:
        return 8
    if op in FOUR:
        return 4
    if op == "mov":
        return 8 if re.search(r"%r(?:[a-z]{2}|\d+)\b(?![dwb])", args) else 4
    return None


def offset(text):
    return -int(text[1:], 16) if text.startswith("-") else int(text or "0", 16)


def functions(binary, name):
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                         capture_output=True, text=True, check=True).stdout
    current, lines = None, []
    for line in dis.splitlines():
        if line.endswith(">:"):
            if current and lines:
                yield current, lines
            current, lines = (line if name in line else None), []
            continue
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if current and m:
            lines.append((int(m.group(1), 16), m.group(2), m.group(3)))
    if current and lines:
        yield current, lines


def main():
    binary, name = sys.argv[1], sys.argv[2]
    window = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    for symbol, lines in functions(binary, name):
        for i, (addr, op, args) in enumerate(lines):
            parts = args.split(",")
            if len(parts) != 2 or not MEM.fullmatch(parts[0].strip()):
                continue
            size = width(op, args)
            if not size or size < 16:
                continue
            src = MEM.fullmatch(parts[0].strip())
            start, base = offset(src.group(1) or ""), src.group(2)
            hits = []
            for b_addr, b_op, b_args in lines[max(0, i - window):i] + lines[i + 1:i + 1 + window]:
                b_parts = b_args.split(",")
                dst = MEM.fullmatch(b_parts[-1].strip()) if len(b_parts) >= 2 else None
                b_size = width(b_op, b_args)
                if not dst or dst.group(2) != base or not b_size:
                    continue
                s = offset(dst.group(1) or "")
                overlaps = s < start + size and start < s + b_size
                contains = s <= start and start + size <= s + b_size
                if overlaps and not contains:
                    where = "after" if b_addr < addr else "before (a jump back?)"
                    hits.append(f"{where} {b_addr:x}: {b_op} {b_args}")
            if hits:
                print(f"{symbol}\n  {addr:x}: {op} {args}\n    " + "\n    ".join(hits[:4]))


if __name__ == "__main__":
    main()
