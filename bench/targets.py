"""Prints the figures bench wrote to a targets file (one per line:
label, figure, measured, target, verdict; tab-separated) as one table,
and checks growth: a figure whose target is "linear" (a cost per node)
must stay within 1.5x of its smallest value over the sizes. A figure
measured more than once for one input (bench/run.sh --diff runs it three
times) is one row: the median, with the range.
Usage: targets.py FILE"""
import re
import sys


def main(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path)]
    rows = [r for r in rows if len(r) == 5]
    print("| input | figure | measured | target | verdict |")
    print("|---|---|---|---|---|")
    linear = {}
    repeated = {}
    for label, figure, measured, target, verdict in rows:
        if target == "linear":
            value = float(re.match(r"[0-9.]+", measured).group(0))
            linear.setdefault(figure, []).append((label, value))
            continue
        repeated.setdefault((label, figure, target), []).append(
            (measured, verdict))
    for (label, figure, target), runs in repeated.items():
        if len(runs) == 1:
            measured, verdict = runs[0]
        else:
            ordered = sorted(runs, key=lambda r: float(
                re.match(r"[0-9.]+", r[0]).group(0)))
            measured, verdict = ordered[len(ordered) // 2]
            measured = (f"{measured} (median of {len(runs)}: "
                        f"{ordered[0][0]}..{ordered[-1][0]})")
        print(f"| {label} | {figure} | {measured} | {target} | {verdict} |")
    for figure, values in linear.items():
        if len(values) < 2:
            continue
        low = min(v for _, v in values)
        high = max(v for _, v in values)
        spread = high / low if low > 0 else float("inf")
        each = ", ".join(f"{label}: {v:g} us" for label, v in values)
        verdict = "met" if spread <= 1.5 else "missed"
        print(f"| {values[0][0]} .. {values[-1][0]} | {figure} ({each}) | "
              f"{spread:.2f}x from least to most | linear (<= 1.5x) | "
              f"{verdict} |")


if __name__ == "__main__":
    main(sys.argv[1])
