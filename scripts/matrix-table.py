#!/usr/bin/env python3
"""The tests/programs matrix as a Markdown table for docs/programs.md: per
program, its run without rtl (peak memory, seconds) and, per policy, the
time ratio to that run and the peak memory (Pss of the process group).
  scripts/matrix-table.py build/programs-matrix.tsv
(the file make test-programs writes; MATRIX_LOG names another)."""
import sys

POLICIES = ["builtin", "init", "none-grant", "1k-read", "read-grant",
            "read-grant-epoch", "sample-7", "alias-epoch"]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: matrix-table.py MATRIX.tsv")
    rows, order = {}, []
    with open(sys.argv[1]) as f:
        for line in f:
            name, pol, base, run, why = (line.rstrip("\n").split("\t") +
                                         [""])[:5]
            if name not in rows:
                rows[name] = {"base": base}
                order.append(name)
            rows[name][pol] = (run, why)
    print("| program | without rtl | " + " | ".join(POLICIES) + " |")
    print("|---|---|" + "---|" * len(POLICIES))
    for name in order:
        bk, bs = rows[name]["base"].split()
        cells = ["%s MiB, %.2f s" % (int(bk) // 1024, float(bs))]
        for pol in POLICIES:
            if pol not in rows[name]:
                cells.append("")
                continue
            (rk, rs), why = rows[name][pol][0].split(), rows[name][pol][1]
            ratio = float(rs) / float(bs) if float(bs) > 0 else float("nan")
            cells.append("%.2f x, %d MiB%s" % (ratio, int(rk) // 1024,
                                              " **differs**" if why else ""))
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
