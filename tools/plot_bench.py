#!/usr/bin/python3
"""Charts from qlinear_bench JSON (--benchmark_out=FILE --benchmark_out_format=json).

  tools/plot_bench.py RESULT.json [OUTDIR]            elements/s vs size (one line per target and
                                                      peer) and a bar chart per output type
  tools/plot_bench.py A.json B.json --compare [OUTDIR] the two runs side by side (e.g. two CPUs)

Needs Debian's python3-matplotlib. Row names: Op/x->y/granularity/TARGET[/size].
"""
import json
import os
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_bench.py: needs matplotlib (Debian: apt install python3-matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" or "items_per_second" not in b:
            continue
        parts = b["name"].split("/")
        size = None
        for p in reversed(parts):
            if p.isdigit():
                size = int(p)
                break
        key = "/".join(p for p in parts if not p.isdigit() and p != "real_time")
        rows.setdefault(key, {})[size] = b["items_per_second"] / 1e9
    return data.get("context", {}), rows


def label_of(ctx, path):
    return "%s (%s)" % (ctx.get("cpu", os.path.basename(path)), ctx.get("date", "")[:10])


def size_chart(ctx, rows, out, title_extra=""):
    fig, ax = plt.subplots(figsize=(8, 5))
    prefixes = ("Quantize/float32->int8/tensor/", "Ceiling/load4store1/tensor/")
    for key, series in sorted(rows.items()):
        if not key.startswith(prefixes) or key.endswith(("-div", "-recip")) or "threads:" in key:
            continue
        if key.startswith("Ceiling") and not key.endswith("/" + best_target(ctx)):
            continue  # one ceiling: the dispatched target's
        pts = sorted((s, v) for s, v in series.items() if s)
        if len(pts) < 2:
            continue
        style = "--" if key.startswith("Ceiling") else "-"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                label=key.replace("Quantize/float32->int8/tensor/", "int8 ").replace("Ceiling/load4store1/tensor/", "ceiling "))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements")
    ax.set_ylabel("G elements/s")
    ax.set_title("QuantizeLinear float32->int8, per tensor, 1 thread\n" + ctx.get("cpu", "") + title_extra)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def best_target(ctx):
    return ctx.get("target_dispatched", "AVX3")


def type_chart(ctx, rows, out, size=65536):
    t = best_target(ctx)
    names, vals = [], []
    for key, series in sorted(rows.items()):
        parts = key.split("/")
        if len(parts) == 4 and parts[0] == "Quantize" and parts[2] == "tensor" and parts[3] == t and size in series:
            names.append(parts[1])
            vals.append(series[size])
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.bar(range(len(vals)), vals)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("G elements/s")
    ax.set_title("QuantizeLinear per output/input type, %s, %d elements\n%s" % (t, size, ctx.get("cpu", "")))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def compare_chart(a, b, out, size=65536):
    (ca, ra), (cb, rb) = a, b
    keys = [k for k in sorted(ra) if k in rb and size in ra[k] and size in rb[k]
            and k.split("/")[-1] in (best_target(ca), best_target(cb), "XNNPACK")]
    fig, ax = plt.subplots(figsize=(10, 5))
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [ra[k][size] for k in keys], 0.4, label=ca.get("cpu", "A"))
    ax.bar([x + 0.2 for x in xs], [rb[k][size] for k in keys], 0.4, label=cb.get("cpu", "B"))
    ax.set_xticks(list(xs))
    ax.set_xticklabels(keys, rotation=70, ha="right", fontsize=6)
    ax.set_ylabel("G elements/s at %d elements" % size)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if "--compare" in argv:
        if len(args) < 2:
            sys.exit(__doc__)
        outdir = args[2] if len(args) > 2 else "."
        os.makedirs(outdir, exist_ok=True)
        compare_chart(load(args[0]), load(args[1]), os.path.join(outdir, "compare.png"))
        print(os.path.join(outdir, "compare.png"))
        return
    if not args:
        sys.exit(__doc__)
    outdir = args[1] if len(args) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    ctx, rows = load(args[0])
    size_chart(ctx, rows, os.path.join(outdir, "quantize_int8_vs_size.png"))
    type_chart(ctx, rows, os.path.join(outdir, "quantize_by_type.png"))
    print(os.path.join(outdir, "quantize_int8_vs_size.png"))
    print(os.path.join(outdir, "quantize_by_type.png"))


if __name__ == "__main__":
    main(sys.argv[1:])
