#!/usr/bin/env python3
"""Helpers for bench/run.sh (standard library only).

  bench.py hf-seconds FILE.json      print the one wall time in a hyperfine --export-json file
  bench.py time (--shell CMD | -- ARGV..)
                                     fallback timer when hyperfine is missing: run the command
                                     once, stdout/stderr to /dev/null, print its wall seconds;
                                     exit with its exit code
  bench.py report OUTDIR             aggregate OUTDIR/raw/*.tsv into results.json + results.md,
                                     print the Markdown table

Raw files written by run.sh (tab-separated, one line each):
  raw/rows.tsv     key size label side_a side_b target_kind target mem_target status note
  raw/samples.tsv  key size side round seconds
  raw/mem.tsv      key size side peak_kib
  raw/commands.tsv key size side command
  raw/meta.tsv     name value
"""
import json
import os
import statistics
import subprocess
import sys
import time


def hf_seconds(path):
    with open(path) as f:
        data = json.load(f)
    print(repr(data["results"][0]["times"][0]))


def fallback_time(args):
    # --cpu: the user + system CPU seconds of the command and of every process it waited for
    # (wait4's usage), instead of the wall-clock time.
    cpu = bool(args) and args[0] == "--cpu"
    if cpu:
        args = args[1:]
    if args and args[0] == "--shell":
        argv = ["sh", "-c", args[1]]
    else:
        if args and args[0] == "--":
            args = args[1:]
        argv = args
    devnull = subprocess.DEVNULL
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=devnull, stdout=devnull, stderr=devnull)
    if cpu:
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        print(repr(usage.ru_utime + usage.ru_stime))
        sys.exit(p.returncode)
    rc = p.wait()
    t1 = time.perf_counter()
    print(repr(t1 - t0))
    sys.exit(rc)


def read_tsv(path, ncols):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            parts += [""] * (ncols - len(parts))
            rows.append(parts[:ncols])
    return rows


def fmt_ms(s):
    ms = s * 1000.0
    if ms >= 1000:
        return f"{ms:,.0f}"
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def fmt_mib(kib):
    return "—" if kib is None else f"{kib / 1024:.1f} MiB"


def stats(samples):
    if not samples:
        return None
    return {
        "runs": len(samples),
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "max_s": max(samples),
        "samples_s": samples,
    }


def report(outdir):
    raw = os.path.join(outdir, "raw")
    rows = read_tsv(os.path.join(raw, "rows.tsv"), 10)
    samples = {}
    for key, size, side, _round, secs in read_tsv(os.path.join(raw, "samples.tsv"), 5):
        samples.setdefault((key, size, side), []).append(float(secs))
    mem = {}
    for key, size, side, kib in read_tsv(os.path.join(raw, "mem.tsv"), 4):
        if kib.strip().isdigit():
            k = (key, size, side)
            mem[k] = max(mem.get(k, 0), int(kib))
    commands = {}
    for key, size, side, cmd in read_tsv(os.path.join(raw, "commands.tsv"), 4):
        commands.setdefault((key, size, side), cmd)
    meta = dict((a, b) for a, b in read_tsv(os.path.join(raw, "meta.tsv"), 2))

    results = []
    for key, size, label, side_a, side_b, kind, target, mem_target, status, note in rows:
        r = {
            "scenario": key,
            "label": label,
            "size": int(size) if size.isdigit() else size,
            "status": status,
            "note": note or None,
            "target_kind": kind,  # ratio | absolute_ms | delta_ms | reference
            "target": float(target) if target else None,
            "mem_target": float(mem_target) if mem_target else None,
        }
        if status == "ok":
            a = stats(samples.get((key, size, side_a), []))
            b = stats(samples.get((key, size, side_b), [])) if side_b else None
            ma = mem.get((key, size, side_a))
            mb = mem.get((key, size, side_b)) if side_b else None
            r["git_task"] = dict(side=side_a, command=commands.get((key, size, side_a)),
                                 peak_kib=ma, **(a or {}))
            if side_b:
                r["git"] = dict(side=side_b, command=commands.get((key, size, side_b)),
                                peak_kib=mb, **(b or {}))
            ratio = (a["median_s"] / b["median_s"]) if a and b and b["median_s"] > 0 else None
            r["ratio"] = ratio
            r["mem_ratio"] = (ma / mb) if ma and mb else None
            met = None
            if kind == "ratio" and ratio is not None and r["target"] is not None:
                met = ratio <= r["target"]
            elif kind == "absolute_ms" and a and r["target"] is not None:
                met = a["median_s"] * 1000.0 <= r["target"]
            elif kind == "delta_ms" and a and b and r["target"] is not None:
                r["delta_ms"] = (a["median_s"] - b["median_s"]) * 1000.0
                met = r["delta_ms"] <= r["target"]
            if met is not None and r["mem_target"] is not None:
                r["mem_met"] = r["mem_ratio"] is not None and r["mem_ratio"] <= r["mem_target"]
                met = met and r["mem_met"]
            r["met"] = met
        results.append(r)

    doc = {"meta": meta, "results": results}
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")

    md = []
    md.append("# git-task benchmark results")
    md.append("")
    for k in ("date", "host_cores", "cpu", "git_version", "git_task_commit", "timer",
              "runs", "warmup", "sizes"):
        if k in meta:
            md.append(f"- {k.replace('_', ' ')}: {meta[k]}")
    md.append("")
    md.append("Times in ms as median / min / max over the timed runs; ratio = git-task median ÷ git median "
              "(both measured in the same run, alternating). Peak memory is the maximum RSS "
              "(`/usr/bin/time -f %M`) of the command and its children in the warm-up run.")
    md.append("")
    md.append("| Scenario | Size | git-task ms (med / min / max) | git ms (med / min / max) | Ratio | Target | Met? "
              "| Peak mem git-task | Peak mem git |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        size = r["size"]
        if r["status"] != "ok":
            tgt = target_text(r)
            md.append(f"| {r['label']} | {size} | {r['status']} | | | {tgt} | — | | |")
            continue
        a = r.get("git_task") or {}
        b = r.get("git") or {}
        ta = (f"{fmt_ms(a['median_s'])} / {fmt_ms(a['min_s'])} / {fmt_ms(a['max_s'])}"
              if "median_s" in a else "—")
        tb = (f"{fmt_ms(b['median_s'])} / {fmt_ms(b['min_s'])} / {fmt_ms(b['max_s'])}"
              if "median_s" in b else "—")
        ratio = f"{r['ratio']:.2f}×" if r.get("ratio") is not None and r["target_kind"] != "absolute_ms" else "—"
        if r.get("delta_ms") is not None:
            ratio = f"{r['delta_ms']:+.2f} ms"
        if r.get("mem_ratio") is not None and r.get("mem_target") is not None:
            ratio += f" (mem {r['mem_ratio']:.2f}×)"
        met = {True: "yes", False: "**no**", None: "—"}[r.get("met")]
        md.append(f"| {r['label']} | {size} | {ta} | {tb} | {ratio} | {target_text(r)} | {met} "
                  f"| {fmt_mib(a.get('peak_kib'))} | {fmt_mib(b.get('peak_kib'))} |")
    notes = [r for r in results if r.get("note")]
    if notes:
        md.append("")
        md.append("Notes:")
        for r in notes:
            md.append(f"- {r['label']} ({r['size']}): {r['note']}")
    text = "\n".join(md) + "\n"
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(text)
    print(text)


def target_text(r):
    kind, t, mt = r["target_kind"], r["target"], r["mem_target"]
    if kind == "ratio" and t is not None:
        s = f"≤ {t:g}×"
        if mt is not None:
            s += f", mem ≤ {mt:g}×"
        return s
    if kind == "absolute_ms" and t is not None:
        return f"≤ {t:g} ms"
    if kind == "delta_ms" and t is not None:
        return f"≤ +{t:g} ms"
    return "reference"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "hf-seconds":
        hf_seconds(args[0])
    elif cmd == "time":
        fallback_time(args)
    elif cmd == "report":
        report(args[0])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
