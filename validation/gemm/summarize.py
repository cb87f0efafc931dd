#!/usr/bin/env python3
"""Headline figures of the measured tables, as the Markdown that README.md carries between its markers.

  python3 summarize.py                 # print the summary
  python3 summarize.py --check README.md   # fail (exit 1) if README's block differs from what the JSON gives
  python3 summarize.py --write README.md   # rewrite README's block
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CARDS = [("h100", "h100.json"), ("h200", "h200.json")]
BEGIN, END = "<!-- summarize.py: begin -->", "<!-- summarize.py: end -->"


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)


def rate(e):
    return 2.0 * e["M"] * e["K"] * e["N"] / e["median_s"]


def bw(j, op, width=None):
    for e in j["bandwidth"]:
        if e.get("op") == op and "bytes_per_s" in e and (width is None or e["shape"][-1] == width):
            return e["bytes"] / e["median_s"]
    return float("nan")


def at(j, section, m, k, n):
    for e in j[section]:
        if (e["M"], e["K"], e["N"]) == (m, k, n):
            return rate(e)
    return float("nan")


def summary():
    runs = {card: load(f) for card, f in CARDS}
    out = []
    w = out.append
    w("| | " + " | ".join(f"{r['gpu']['name']}" for r in runs.values()) + " |")
    w("| --- | " + " | ".join("---" for _ in runs) + " |")

    def row(label, fn):
        w(f"| {label} | " + " | ".join(fn(r) for r in runs.values()) + " |")

    row("measured (UTC), torch / CUDA", lambda r: f"{r['date_utc'][:16]}, {r['torch']} / {r['cuda']}")
    row("driver; power limit", lambda r: f"{r['nvidia_smi_before'].get('driver_version')}; "
                                         f"{r['nvidia_smi_before'].get('power.limit')} W")
    def clocks(r):
        loaded = [c["sm_mhz"] for c in r["clock_samples"] if c["power_w"] > 300]
        return (f"{statistics.median(loaded):.0f} ({min(loaded):.0f}–{max(loaded):.0f}) MHz, "
                f"max {r['nvidia_smi_before'].get('clocks.max.sm')} MHz; "
                f"up to {max(c['power_w'] for c in r['clock_samples']):.0f} W")
    row("SM clock while drawing > 300 W: median (range) of 1 s samples", clocks)
    row("throttle reasons after the run", lambda r: r["nvidia_smi_after"].get("throttle", {}).get(
        "clocks_event_reasons.active", "n/a") + " (0x4: software power cap)")

    def best(r, sec):
        e = max(r[sec], key=rate)
        return f"{rate(e) / 1e12:.0f} TFLOP/s at M={e['M']}, K={e['K']}, N={e['N']}"
    row("best bf16 GEMM", lambda r: best(r, "gemm_bf16"))
    row("best fp8 GEMM (fast accumulation)", lambda r: best(r, "gemm_fp8_fast_accum"))
    for m in (1, 32, 512, 4096, 32768):
        row(f"bf16 4096×14336, M={m}: TFLOP/s (of peak)",
            lambda r, m=m: f"{at(r, 'gemm_bf16', m, 4096, 14336) / 1e12:.1f} "
                           f"({at(r, 'gemm_bf16', m, 4096, 14336) / r['peak_reference']['bf16_flops_per_s']:.1%})")
    def big_layers(r, lo, hi):
        pk = r["peak_reference"]["bf16_flops_per_s"]
        effs = [rate(e) / pk for e in r["gemm_bf16"] if lo <= e["M"] <= hi and e["K"] * e["N"] >= 4096 * 14336]
        return f"{statistics.median(effs):.1%} ({min(effs):.1%}–{max(effs):.1%})"
    row("bf16 of peak, layers of ≥ 4096×14336, M 2048–8192: median (range)", lambda r: big_layers(r, 2048, 8192))
    row("bf16 of peak, layers of ≥ 4096×14336, M ≥ 16384: median (range)", lambda r: big_layers(r, 16384, 1 << 40))

    def m1(r):
        rows = sorted((2 * e["K"] * e["N"], e["median_s"]) for e in r["gemm_bf16"] if e["M"] == 1)
        copy = bw(r, "copy")
        return (f"shortest {rows[0][1] * 1e6:.1f} µs; largest weights ({rows[-1][0] / 1e9:.2f} GB) "
                f"{rows[-1][1] / (rows[-1][0] / copy):.2f}× their time at the copy rate")
    row("bf16 M=1: time", m1)
    for m in (1, 32, 512, 4096):
        row(f"fp8 4096×14336, M={m}: TFLOP/s (of peak)",
            lambda r, m=m: f"{at(r, 'gemm_fp8', m, 4096, 14336) / 1e12:.1f} "
                           f"({at(r, 'gemm_fp8', m, 4096, 14336) / r['peak_reference']['fp8_flops_per_s']:.1%})")

    def backward(r, pas, t):
        for e in r["gemm_bf16_backward"]:
            if e["pass"] == pas and e["tokens"] == t and (e["layer_K"], e["layer_N"]) == (4096, 14336):
                return f"{rate(e) / 1e12:.0f} TFLOP/s (forward {at(r, 'gemm_bf16', t, 4096, 14336) / 1e12:.0f})"
        return "n/a"
    for t in (512, 8192):
        row(f"backward of 4096×14336 at {t} tokens: dgrad", lambda r, t=t: backward(r, "dgrad", t))
        row(f"backward of 4096×14336 at {t} tokens: wgrad", lambda r, t=t: backward(r, "wgrad", t))

    def backward_ratio(r, pas, t):
        fw = {(e["M"], e["K"], e["N"]): rate(e) for e in r["gemm_bf16"]}
        q = [rate(e) / fw[(t, e["layer_K"], e["layer_N"])] for e in r["gemm_bf16_backward"]
             if e["pass"] == pas and e["tokens"] == t]
        return f"{statistics.median(q):.2f} ({min(q):.2f}–{max(q):.2f})"
    for t in (512, 2048, 8192, 32768):
        row(f"backward / forward rate at {t} tokens, all layers: dgrad, median (range)",
            lambda r, t=t: backward_ratio(r, "dgrad", t))
        row(f"backward / forward rate at {t} tokens, all layers: wgrad, median (range)",
            lambda r, t=t: backward_ratio(r, "wgrad", t))

    def tb(x, r):
        return f"{x / 1e12:.2f} TB/s ({x / r['peak_reference']['hbm_bytes_per_s']:.0%})"
    for label, op, width in (("copy (read + write)", "copy", None), ("add", "add", None),
                             ("GeLU (tanh)", "gelu_tanh", None),
                             ("SiLU·gate (two eager kernels)", "silu_mul", None),
                             ("LayerNorm, rows of 4096", "layernorm", 4096),
                             ("LayerNorm, rows of 8192", "layernorm", 8192),
                             ("RMSNorm, rows of 4096", "rmsnorm", 4096),
                             ("softmax, rows of 4096", "softmax", 4096),
                             ("fused AdamW step (28 B/param)", "adamw_fused_step", None)):
        row(f"{label}: bytes/s (of datasheet HBM)", lambda r, op=op, width=width: tb(bw(r, op, width), r))

    def attn(r, op, s):
        for e in r["attention"]:
            if e["op"] == op and e["s_q"] == s:
                return f"{e['flops_per_s'] / 1e12:.0f} TFLOP/s"
        return "n/a"
    for s in (2048, 32768):
        row(f"flash attention (SDPA) causal fwd, S={s}, d=128", lambda r, s=s: attn(r, "sdpa_fwd_causal", s))
        row(f"flash attention (SDPA) causal fwd+bwd, S={s}", lambda r, s=s: attn(r, "sdpa_fwd_bwd_causal", s))

    def decode(r, op, s):
        for e in r["attention"]:
            if e["op"] == op and e["s_kv"] == s:
                return f"{e['flops'] / e['median_s'] / 1e12:.1f} TFLOP/s, " \
                       f"{e['bytes_min'] / e['median_s'] / 1e12:.2f} TB/s"
        return "n/a"
    row("decode QK^T, GQA 8, context 32768", lambda r: decode(r, "bmm_qk_decode_gqa8", 32768))

    # Run-to-run: the two H200 runs, shape by shape.
    first = load("h200-run1.json")
    a = {(e["M"], e["K"], e["N"]): e["median_s"] for e in first["gemm_bf16"]}
    d = sorted(abs(e["median_s"] / a[(e["M"], e["K"], e["N"])] - 1) for e in runs["h200"]["gemm_bf16"])
    w("")
    w(f"Two H200 runs ({first['date_utc'][:16]} and {runs['h200']['date_utc'][:16]}), {len(d)} bf16 shapes: "
      f"median |difference| {statistics.median(d):.1%}, 90th percentile {d[len(d) * 9 // 10]:.1%}, "
      f"largest {d[-1]:.1%}.")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check")
    ap.add_argument("--write")
    args = ap.parse_args()
    text = summary()
    path = args.check or args.write
    if not path:
        sys.stdout.write(text)
        return 0
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        print(f"{path}: no {BEGIN} ... {END} block", file=sys.stderr)
        return 1
    head, rest = doc.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    if args.check:
        if old.strip() != text.strip():
            print(f"{path}: the summary block differs from the JSON; run summarize.py --write {path}",
                  file=sys.stderr)
            return 1
        print(f"{path}: summary block matches the measured JSON")
        return 0
    with open(path, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
