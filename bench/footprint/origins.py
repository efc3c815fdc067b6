#!/usr/bin/env python3
"""Where a static program's bytes come from, read from its GNU ld map file (-Wl,-Map).

  origins.py PROGRAM.map [BASELINE.map]

Counts the input sections the linker kept in allocated, non-bss output sections (what `size` calls
text + data), by origin: deadbolt, asio (by the mangled namespace of a -ffunction-sections section),
libstdc++, libc (glibc, libgcc, crt), and the program itself. Prints one line per origin in KB, with
the difference to BASELINE when one is given, then the largest archive members and objects.
"""
import re
import sys
from collections import defaultdict

SKIP_OUTPUT = re.compile(r"^\.(debug|comment|note\.GNU-stack|gnu\.attributes|ARM\.attributes|symtab|strtab|shstrtab|bss|tbss)")
INPUT = re.compile(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
NAME_ONLY = re.compile(r"^ (\S+)$")
CONTINUED = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")


def origin(section, source):
    member = source.rsplit("/", 1)[-1]
    if "libstdc++" in member or "libsupc++" in member:
        return "libstdc++"
    if re.search(r"lib(c|m|pthread|dl|rt|resolv|nss_\w+|gcc|gcc_eh)\.a\(", member) or re.match(r"crt\w*\.o$", member):
        return "libc"
    if re.search(r"_ZN?K?\d*4asio|_ZN4asio|_ZNK4asio|asio", section):
        return "asio"
    if "deadbolt" in member or "_ZN8deadbolt" in section or "_ZNK8deadbolt" in section:
        return "deadbolt"
    return "program"


def read(path):
    by_origin = defaultdict(int)
    by_member = defaultdict(int)
    in_map = False
    output = ""
    pending = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("Linker script and memory map"):
                in_map = True
                continue
            if not in_map:
                continue
            if line and not line[0].isspace():
                output = line.split()[0]
                pending = None
                continue
            if SKIP_OUTPUT.match(output) or not output.startswith("."):
                continue
            m = INPUT.match(line)
            section = None
            if m:
                section, size, source = m.group(1), int(m.group(3), 16), m.group(4)
            elif pending:
                c = CONTINUED.match(line)
                if c:
                    section, size, source = pending, int(c.group(2), 16), c.group(3)
            pending = None
            if section is None:
                n = NAME_ONLY.match(line)
                if n and n.group(1).startswith("."):
                    pending = n.group(1)
                continue
            if size == 0 or section.startswith("*"):
                continue
            o = origin(section, source)
            by_origin[o] += size
            by_member[(o, source.rsplit("/", 1)[-1])] += size
    return by_origin, by_member


def kb(n):
    return n / 1024.0


def main():
    program, members = read(sys.argv[1])
    base, base_members = read(sys.argv[2]) if len(sys.argv) > 2 else (defaultdict(int), defaultdict(int))
    print(f"{'origin':<10} {'KB':>8} {'baseline':>9} {'extra':>8}")
    for o in ["deadbolt", "asio", "libstdc++", "libc", "program"]:
        print(f"{o:<10} {kb(program[o]):8.1f} {kb(base[o]):9.1f} {kb(program[o] - base[o]):+8.1f}")
    total, base_total = sum(program.values()), sum(base.values())
    print(f"{'total':<10} {kb(total):8.1f} {kb(base_total):9.1f} {kb(total - base_total):+8.1f}")
    print("largest extra objects (origin, archive member or object: KB more than the baseline):")
    extra = {k: v - base_members.get(k, 0) for k, v in members.items()}
    for (o, member), size in sorted(extra.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {o:<10} {member:<60} {kb(size):+7.1f}")


if __name__ == "__main__":
    main()
