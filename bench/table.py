"""What bench/report.py and bench/team_report.py share: how a figure and a target's verdict
are written, the Markdown table of rows, and the line that names the machine."""
import datetime
import subprocess


def ms(v):
    """A duration in milliseconds, two decimals below 100 ms."""
    return f"{v:.2f} ms" if v < 100 else f"{v:.0f} ms"


def mark(met):
    """The last column: nothing, met or missed."""
    return "" if met is None else ("met" if met else "**missed**")


def print_table(rows, ratio="×"):
    """Prints rows of (measure, median, p95, ratio, target, met or None) as one table."""
    print(f"| measure | median | p95 | {ratio} | target | |")
    print("|---|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {mark(r[5])} |")


def machine():
    """Today's date, the number of cores and the CPU model."""
    cpu = next((x.split(":", 1)[1].strip() for x in open("/proc/cpuinfo") if x.startswith("model name")), "?")
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return f"{datetime.date.today().isoformat()}, {cores} cores, {cpu}"
