#!/usr/bin/env python3
"""Measure achieved matmul throughput and HBM bandwidth on the GPU at hand.

The calibrated step-time model (issue 17) needs, per chip, what a matmul of a given shape and dtype
really achieves and what the memory-bound non-matmul work (norms, softmax, elementwise, the optimizer
update) really moves per second. This script measures both on whatever CUDA GPU it finds and writes one
JSON file; validation/gemm/README.md says what each field means and how the model reads it.

Method, in short (the README has the whole of it):
  * every timed region is bracketed by CUDA events on the default stream; the CPU queues the work ahead,
    so the events measure GPU time, not Python launch overhead;
  * warm-ups first (cuBLAS picks its kernel and creates its handle on the first call of a shape);
  * the median over several timed repetitions, sized so each shape gets about TARGET_S of timed work;
  * before every GEMM repetition a buffer several times the L2 is overwritten, so the weights come from
    HBM as they do in a real layer; bandwidth kernels run over tensors far larger than the L2;
  * inputs are random (never zeros: zeros make the tensor cores run measurably faster).

Usage:
  python3 measure.py --out result.json            # on a CUDA machine
  python3 measure.py --dry-run                    # no GPU, no torch: print the grid and a time estimate
  python3 measure.py --smoke --out smoke.json     # tiny shapes on CPU (checks the code paths)
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

# ---------------------------------------------------------------------------------------------------
# The grid. Real layers: d_model and the MLP width d_ff of published models, one per d_model the
# issue names. A linear layer y = x W^T is a GEMM with M = tokens, K = its input width, N = its output
# width; tensor parallelism splits N of the column-parallel layers (QKV, MLP up) and K of the
# row-parallel ones (attention out, MLP down).
MODELS = [
    # (label, d_model, d_ff)
    ("gpt2-medium", 1024, 4096),
    ("llama-3.2-1b", 2048, 8192),
    ("llama-3-8b", 4096, 14336),
    ("llama-3-70b", 8192, 28672),
    ("gpt-3-175b", 12288, 49152),
    ("llama-3-405b", 16384, 53248),
]
# Every power of two from 1 to 32768: the M values (1, 8, 32, ..., 32768) and the ones between,
# so interpolation in log M has a point every factor of two.
M_GRID = [1 << i for i in range(16)]
TP_GRID = [1, 2, 4, 8]
ATTN_CONTEXTS = [2048, 4096, 8192, 16384, 32768]
HEAD_DIM = 128

TARGET_S = 0.020      # timed work per GEMM shape
MIN_REPS, MAX_REPS = 7, 50
WARMUPS = 2

# Dense (no sparsity) datasheet figures, leads only; the JSON stores them beside the measurements so
# "efficiency" can be read against a stated peak. Source: NVIDIA H100 and H200 product datasheets.
PEAKS = {
    "NVIDIA H100 80GB HBM3": {"bf16_flops_per_s": 989.4e12, "fp8_flops_per_s": 1978.9e12,
                              "hbm_bytes_per_s": 3.35e12, "source": "NVIDIA H100 SXM datasheet (dense)"},
    "NVIDIA H200": {"bf16_flops_per_s": 989.4e12, "fp8_flops_per_s": 1978.9e12,
                    "hbm_bytes_per_s": 4.8e12, "source": "NVIDIA H200 SXM datasheet (dense)"},
}


# Held-out layers: models and token counts that the grid above does not contain, measured only to test
# the interpolation of the grid (tests/test_gemm_efficiency.cpp), never used by the lookup itself.
HOLDOUT_MODELS = [
    ("llama-3.2-3b", 3072, 8192),
    ("gemma-2-9b", 3584, 14336),
    ("llama-2-13b", 5120, 13824),
    ("starcoder2-15b", 6144, 24576),
    ("qwen2-72b", 8192, 29568),
]
HOLDOUT_M = [3, 24, 48, 96, 384, 768, 1536, 3072, 6144, 12288, 24576]


def layer_shapes(models=None):
    """Unique (K, N) pairs with the layers they come from."""
    pairs = {}
    for label, d, ff in (models or MODELS):
        for tp in TP_GRID:
            for layer, k, n in (("mlp_up", d, ff // tp),        # column-parallel: N split
                                ("attn_proj", d, d // tp),      # d_model x d_model, N split (QKV, out)
                                ("mlp_down", ff // tp, d)):     # row-parallel: K split
                pairs.setdefault((k, n), []).append(f"{label}/{layer}/tp{tp}")
    return pairs


def fp8_pairs(pairs):
    """The fp8 subset: tp 1 and 8 of the three middle-to-large models."""
    keep = {}
    for (k, n), uses in pairs.items():
        if any(u.split("/")[0] in ("llama-3-8b", "llama-3-70b", "llama-3-405b")
               and u.endswith(("/tp1", "/tp8")) for u in uses):
            keep[(k, n)] = uses
    return keep


def attention_cases():
    """Attention as it runs: fused (scaled_dot_product_attention) at training and prefill contexts, and
    the two batched matmuls of unfused attention (QK^T and PV), for prefill and for decode."""
    cases = []
    tokens = 65536                                   # batch x context held fixed
    for s in ATTN_CONTEXTS:
        b, h = max(1, tokens // s), 16
        cases.append(("sdpa_fwd_causal", b, h, s, s))
        cases.append(("sdpa_fwd_bwd_causal", b, h, s, s))
        # Unfused prefill: the scores [bh, s, s] are materialised; keep them near 2 GiB.
        bh = max(1, (1 << 30) // (s * s))
        cases.append(("bmm_qk_prefill", bh, 1, s, s))
        cases.append(("bmm_pv_prefill", bh, 1, s, s))
        # Decode with grouped-query attention: 8 query heads share each KV head, 64 sequences x 8 KV heads.
        cases.append(("bmm_qk_decode_gqa8", 512, 1, 8, s))
        cases.append(("bmm_pv_decode_gqa8", 512, 1, 8, s))
    return cases


def gemm_flops(m, k, n):
    return 2.0 * m * k * n


def estimate(args):
    """A time estimate from nominal rates (no GPU): shows the grid fits the budget."""
    rate = {"bf16": 700e12, "fp8": 1200e12}
    bw = 3.5e12
    pairs = layer_shapes()
    total = 0.0
    per_section = {}
    for dtype, ps in (("bf16", pairs), ("fp8", fp8_pairs(pairs))):
        t_sec = 0.0
        for (k, n) in ps:
            for m in M_GRID:
                t = max(gemm_flops(m, k, n) / rate[dtype], (m * k + k * n + m * n) * 2 / bw) + 6e-6
                reps = min(MAX_REPS, max(MIN_REPS, math.ceil(TARGET_S / t)))
                t_sec += (reps + WARMUPS + 1) * (t + 150e-6) + 2e-3
        n_var = 2 if dtype == "fp8" else 1
        per_section[dtype] = t_sec * n_var
        total += t_sec * n_var
    print(f"(K, N) pairs: {len(pairs)} bf16, {len(fp8_pairs(pairs))} fp8; M values {len(M_GRID)}")
    print(f"GEMMs: {len(pairs) * len(M_GRID)} bf16, {2 * len(fp8_pairs(pairs)) * len(M_GRID)} fp8")
    for k, v in per_section.items():
        print(f"estimated {k}: {v:.1f} s")
    print(f"estimated GEMM total: {total:.1f} s (+ bandwidth ~10 s, attention ~15 s, start ~20 s)")


# ---------------------------------------------------------------------------------------------------
class Timer:
    """Median time of a callable: CUDA events on a GPU, perf_counter on the CPU (smoke runs only)."""

    def __init__(self, torch, device, flush_bytes):
        self.torch = torch
        self.device = device
        self.cuda = device.type == "cuda"
        self.flush = (torch.empty(flush_bytes // 4, dtype=torch.float32, device=device)
                      if flush_bytes else None)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def time(self, fn, reps, warmups=WARMUPS, flush=True):
        torch = self.torch
        for _ in range(warmups):
            fn()
        self.sync()
        times = []
        if self.cuda:
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for i in range(reps):
                if flush and self.flush is not None:
                    self.flush.fill_(float(i))    # evict the previous repetition's operands from L2
                starts[i].record()
                fn()
                ends[i].record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends)]
        else:
            for _ in range(reps):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return times

    def probe(self, fn):
        """One warm-up call, then one timed call: sizes the number of repetitions."""
        t = self.time(fn, reps=1, warmups=1)
        return t[0]


def reps_for(t_probe, target=TARGET_S):
    return int(min(MAX_REPS, max(MIN_REPS, math.ceil(target / max(t_probe, 1e-7)))))


def summarize(times):
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "reps": len(times)}


class Budget:
    def __init__(self, seconds):
        self.t0 = time.time()
        self.seconds = seconds

    def elapsed(self):
        return time.time() - self.t0

    def left(self):
        return self.seconds - (time.time() - self.t0)


def nvidia_smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode != 0:
            return {"error": out.stderr.strip()[:300]}
        vals = [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]
        return dict(zip(query.split(","), vals))
    except Exception as e:  # noqa: BLE001 - recorded, never fatal
        return {"error": repr(e)[:300]}


class ClockSampler:
    """nvidia-smi sampling SM/memory clocks and power once a second during the run (throttling shows)."""

    def __init__(self, path):
        self.path = path
        self.proc = None
        try:
            self.file = open(path, "w")
            self.proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu",
                 "--format=csv,noheader,nounits", "-lms", "1000"], stdout=self.file,
                stderr=subprocess.DEVNULL)
        except Exception:  # noqa: BLE001
            self.proc = None

    def stop(self):
        if self.proc is None:
            return []
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001
            self.proc.kill()
        self.file.close()
        rows = []
        with open(self.path) as f:
            for line in f:
                parts = [p.strip() for p in line.split(",")]
                if len(parts) == 5:
                    try:
                        rows.append({"t": parts[0], "sm_mhz": float(parts[1]), "mem_mhz": float(parts[2]),
                                     "power_w": float(parts[3]), "temp_c": float(parts[4])})
                    except ValueError:
                        pass
        return rows


# ---------------------------------------------------------------------------------------------------
def measure_bandwidth(torch, F, dev, timer, budget, smoke):
    """Memory-bound kernels over tensors far larger than the L2; bytes = each input read once plus each
    output written once (the fewest a kernel can move), so bytes/s here is an achieved-roofline figure."""
    res = []
    n = (1 << 12) if smoke else (1 << 29)        # 2^29 bf16 elements = 1 GiB per tensor
    rows_d = [256] if smoke else [4096, 8192]
    bf = torch.bfloat16
    x = torch.randn(n, device=dev, dtype=bf)
    y = torch.randn(n, device=dev, dtype=bf)
    z = torch.empty(n, device=dev, dtype=bf)
    x32 = torch.randn(n // 2, device=dev)          # same bytes in fp32
    y32 = torch.empty(n // 2, device=dev)
    eb = 2

    def record(op, shape, dtype, nbytes, fn, note=""):
        if budget.left() < 5:
            res.append({"op": op, "skipped": "time budget"})
            return
        try:
            t = timer.time(fn, reps=3 if smoke else 10, warmups=2, flush=False)
            s = summarize(t)
            s.update({"op": op, "shape": shape, "dtype": dtype, "bytes": nbytes, "t_start_s": round(budget.elapsed(), 2),
                      "bytes_per_s": nbytes / s["median_s"], "note": note})
            res.append(s)
        except Exception as e:  # noqa: BLE001
            res.append({"op": op, "shape": shape, "dtype": dtype, "error": repr(e)[:400]})

    record("copy", [n], "bf16", 2 * n * eb, lambda: z.copy_(x), "read n, write n")
    record("copy", [n // 2], "fp32", 2 * n * eb, lambda: y32.copy_(x32), "read n, write n")
    record("add", [n], "bf16", 3 * n * eb, lambda: torch.add(x, y, out=z), "read 2n, write n")
    record("scale_inplace", [n], "bf16", 2 * n * eb, lambda: z.mul_(1.0001), "read n, write n")
    record("gelu_tanh", [n], "bf16", 2 * n * eb, lambda: F.gelu(x, approximate="tanh"), "read n, write n")
    record("gelu_erf", [n], "bf16", 2 * n * eb, lambda: F.gelu(x), "read n, write n")
    record("silu_mul", [n // 2], "bf16", 3 * (n // 2) * eb,
           lambda: F.silu(x[: n // 2]) * y[: n // 2], "SwiGLU gate: two eager kernels, counted as one pass")
    for d in rows_d:
        r = n // d
        x2 = x.view(r, d)
        w = torch.randn(d, device=dev, dtype=bf)
        b = torch.randn(d, device=dev, dtype=bf)
        record("layernorm", [r, d], "bf16", 2 * n * eb, lambda: F.layer_norm(x2, (d,), w, b), "read x, write y")
        if hasattr(F, "rms_norm"):
            record("rmsnorm", [r, d], "bf16", 2 * n * eb, lambda: F.rms_norm(x2, (d,), w), "read x, write y")
        record("softmax", [r, d], "bf16", 2 * n * eb, lambda: torch.softmax(x2, dim=-1), "read x, write y")
    # Adam-like update: fp32 parameters, gradients and two moments; the fused optimizer reads p, g, m, v
    # and writes p, m, v: 28 bytes per parameter.
    try:
        p = torch.nn.Parameter(torch.randn(n // 4, device=dev))
        p.grad = torch.randn_like(p) * 1e-3
        opt = torch.optim.AdamW([p], lr=1e-4, **({"fused": True} if dev.type == "cuda" else {}))
        opt.step()     # creates the moment buffers
        record("adamw_fused_step", [n // 4], "fp32", 28 * (n // 4), lambda: opt.step(),
               "read p, g, m, v; write p, m, v (28 B/param)")
        del opt, p
    except Exception as e:  # noqa: BLE001
        res.append({"op": "adamw_fused_step", "error": repr(e)[:400]})
    del x, y, z, x32, y32
    return res


def measure_gemms(torch, dev, timer, budget, smoke, pairs, dtype, m_grid, fast_accum=False):
    """y = x W^T as a linear layer runs it: x [M, K] row-major, W [N, K] row-major."""
    res = []
    bf = torch.bfloat16
    max_a = max(m * k for (k, n) in pairs for m in m_grid)
    max_w = max(k * n for (k, n) in pairs)
    max_c = max(m * n for (k, n) in pairs for m in m_grid)
    pool = torch.randn(max_a + max_w, device=dev, dtype=bf)
    if dtype == "fp8":
        pool = pool.to(torch.float8_e4m3fn)    # values ~N(0,1) are well inside e4m3's range
        one = torch.ones((), device=dev, dtype=torch.float32)
    out = torch.empty(max_c, device=dev, dtype=bf)
    for (k, n), uses in pairs.items():
        for m in m_grid:
            entry = {"dtype": dtype, "M": m, "K": k, "N": n, "layers": uses,
                     "flops": gemm_flops(m, k, n), "t_start_s": round(budget.elapsed(), 2)}
            if dtype == "fp8":
                entry["fast_accum"] = fast_accum
            if budget.left() < 8:
                entry["skipped"] = "time budget"
                res.append(entry)
                continue
            a = pool[: m * k].view(m, k)
            w = pool[max_a: max_a + n * k].view(n, k)
            c = out[: m * n].view(m, n)
            if dtype == "bf16":
                def fn(a=a, w=w, c=c):
                    torch.mm(a, w.t(), out=c)
            else:
                def fn(a=a, w=w):
                    torch._scaled_mm(a, w.t(), scale_a=one, scale_b=one, out_dtype=bf,
                                     use_fast_accum=fast_accum)
            try:
                t1 = timer.probe(fn)
                times = timer.time(fn, reps=reps_for(t1) if not smoke else 2)
                s = summarize(times)
                s["flops_per_s"] = entry["flops"] / s["median_s"]
                # The fewest bytes: read x and W once, write y once.
                eb_in = 1 if dtype == "fp8" else 2
                s["bytes_min"] = eb_in * (m * k + n * k) + 2 * m * n
                entry.update(s)
            except Exception as e:  # noqa: BLE001
                entry["error"] = repr(e)[:400]
            res.append(entry)
    del pool, out
    return res


def measure_backward(torch, dev, timer, budget, smoke, pairs, tokens):
    """The two GEMMs of a linear layer's backward pass, laid out as autograd runs them.
    dgrad: dX[T, K] = dY[T, N] @ W[N, K]      -> GEMM M=T, K=N, N=K, both operands row-major;
    wgrad: dW[N, K] = dY[T, N]^T @ X[T, K]    -> GEMM M=N, K=T, N=K, the left operand transposed.
    The weight gradient contracts over the tokens, so its K is the token count: a shape the forward
    grid does not have."""
    res = []
    bf = torch.bfloat16
    max_t = max(tokens)
    big = max(max(t * k, t * n, n * k) for (k, n) in pairs for t in tokens)
    pool_a = torch.randn(big, device=dev, dtype=bf)
    pool_b = torch.randn(big, device=dev, dtype=bf)
    out = torch.empty(big, device=dev, dtype=bf)
    for (k, n), uses in pairs.items():
        for t in tokens:
            for pas in ("dgrad", "wgrad"):
                if pas == "dgrad":
                    gm, gk, gn = t, n, k
                    dy = pool_a[: t * n].view(t, n)
                    w = pool_b[: n * k].view(n, k)
                    c = out[: t * k].view(t, k)
                    fn = (lambda dy=dy, w=w, c=c: torch.mm(dy, w, out=c))
                else:
                    gm, gk, gn = n, t, k
                    dy = pool_a[: t * n].view(t, n)
                    x = pool_b[: t * k].view(t, k)
                    c = out[: n * k].view(n, k)
                    fn = (lambda dy=dy, x=x, c=c: torch.mm(dy.t(), x, out=c))
                entry = {"dtype": "bf16", "pass": pas, "layer_K": k, "layer_N": n, "tokens": t,
                         "M": gm, "K": gk, "N": gn, "layers": uses, "flops": gemm_flops(gm, gk, gn),
                         "t_start_s": round(budget.elapsed(), 2)}
                if budget.left() < 8:
                    entry["skipped"] = "time budget"
                    res.append(entry)
                    continue
                try:
                    t1 = timer.probe(fn)
                    s = summarize(timer.time(fn, reps=reps_for(t1) if not smoke else 2))
                    s["flops_per_s"] = entry["flops"] / s["median_s"]
                    entry.update(s)
                except Exception as e:  # noqa: BLE001
                    entry["error"] = repr(e)[:400]
                res.append(entry)
    del pool_a, pool_b, out
    return res


def measure_attention(torch, F, dev, timer, budget, smoke):
    res = []
    bf = torch.bfloat16
    d = 16 if smoke else HEAD_DIM
    for kind, b, h, sq, skv in attention_cases():
        if smoke:
            b, h, sq, skv = 1, 2, min(sq, 64), min(skv, 64)
        entry = {"op": kind, "batch": b, "heads": h, "s_q": sq, "s_kv": skv, "head_dim": d, "dtype": "bf16",
                 "t_start_s": round(budget.elapsed(), 2)}
        if budget.left() < 8:
            entry["skipped"] = "time budget"
            res.append(entry)
            continue
        try:
            if kind.startswith("sdpa"):
                q, k_, v = (torch.randn(b, h, sq, d, device=dev, dtype=bf) for _ in range(3))
                # Causal: half of the S x S score matrix (plus the diagonal) is computed.
                causal_pairs = sq * (sq + 1) / 2
                fwd = 4.0 * b * h * causal_pairs * d            # QK^T and PV, 2 FLOPs per multiply-add
                if kind == "sdpa_fwd_causal":
                    fn = lambda: F.scaled_dot_product_attention(q, k_, v, is_causal=True)  # noqa: E731
                    flops = fwd
                else:
                    q.requires_grad_(True), k_.requires_grad_(True), v.requires_grad_(True)
                    g = torch.randn(b, h, sq, d, device=dev, dtype=bf)

                    def fn():
                        o = F.scaled_dot_product_attention(q, k_, v, is_causal=True)
                        o.backward(g)
                    flops = fwd * 3.5        # backward = 2.5x forward (dQ, dK, dV, dP and the recomputed S)
                entry["flops_counted"] = "causal: 4*B*H*d*S(S+1)/2 forward; backward 2.5x forward"
            else:
                bh = b * h
                if kind.startswith("bmm_qk"):
                    q = torch.randn(bh, sq, d, device=dev, dtype=bf)
                    kt = torch.randn(bh, skv, d, device=dev, dtype=bf)
                    fn = lambda: torch.bmm(q, kt.transpose(1, 2))  # noqa: E731
                else:
                    p = torch.randn(bh, sq, skv, device=dev, dtype=bf)
                    v = torch.randn(bh, skv, d, device=dev, dtype=bf)
                    fn = lambda: torch.bmm(p, v)  # noqa: E731
                flops = 2.0 * bh * sq * skv * d
                entry["bytes_min"] = 2 * bh * (sq * d + skv * d + sq * skv)
            t1 = timer.probe(fn)
            times = timer.time(fn, reps=reps_for(t1, 0.02) if not smoke else 2)
            s = summarize(times)
            s["flops"] = flops
            s["flops_per_s"] = flops / s["median_s"]
            entry.update(s)
        except Exception as e:  # noqa: BLE001
            entry["error"] = repr(e)[:400]
        res.append(entry)
        for name in ("q", "k_", "v", "g", "kt", "p"):
            locals().pop(name, None)
    return res


# ---------------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="gemm.json")
    ap.add_argument("--budget-s", type=float, default=270.0,
                    help="wall-clock budget; what is left unmeasured is marked skipped")
    ap.add_argument("--dry-run", action="store_true", help="print the grid and a time estimate")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU (code paths only)")
    ap.add_argument("--sections", default="bandwidth,gemm_bf16,gemm_bf16_backward,attention,gemm_fp8,"
                                          "gemm_fp8_fast_accum,gemm_bf16_repeat",
                    help="comma-separated sections to run; gemm_bf16_holdout (layers and M values off the "
                         "grid, to test its interpolation) runs only when named")
    args = ap.parse_args()
    if args.dry_run:
        estimate(args)
        return 0

    budget = Budget(args.budget_s)
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda" if torch.cuda.is_available() and not args.smoke else "cpu")
    result = {
        "schema": "scaling-workbook gemm measurement v1",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "device": str(dev),
        "method": {
            "timer": "CUDA events around each repetition on the default stream; median over reps",
            "warmups": WARMUPS,
            "reps": f"{MIN_REPS}..{MAX_REPS}, sized for ~{TARGET_S * 1e3:.0f} ms of timed work per GEMM shape",
            "l2": "before each GEMM repetition a 512 MiB buffer is overwritten (several times the L2); "
                  "bandwidth kernels use 1 GiB tensors",
            "data": "random normal inputs (bf16; fp8 e4m3 converted from them), never zeros",
            "gemm": "y[M,N] = x[M,K] @ W[N,K]^T (torch.mm on W.t(), as nn.Linear); fp8 via torch._scaled_mm "
                    "with tensor-wise scales 1.0 and bf16 output",
            "flops": "2*M*K*N per GEMM (multiply and add counted separately)",
            "bytes": "the fewest a kernel must move: each input read once, each output written once",
        },
        "grid": {"models": [{"label": m[0], "d_model": m[1], "d_ff": m[2]} for m in MODELS],
                 "M": M_GRID, "tp": TP_GRID},
    }
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(0)
        name = torch.cuda.get_device_name(0)
        result["gpu"] = {"name": name, "sm_count": props.multi_processor_count,
                         "memory_bytes": props.total_memory,
                         "l2_bytes": getattr(props, "L2_cache_size", None),
                         "capability": f"{props.major}.{props.minor}"}
        result["nvidia_smi_before"] = nvidia_smi(
            "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,"
            "temperature.gpu,memory.total,persistence_mode,compute_mode")
        result["peak_reference"] = PEAKS.get(name)
        result["torch_flags"] = {
            "allow_bf16_reduced_precision_reduction":
                torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
            "cudnn": torch.backends.cudnn.version()}
    else:
        result["gpu"] = {"name": "cpu (smoke run)"}
        result["peak_reference"] = None
    sampler = ClockSampler(args.out + ".clocks.csv") if dev.type == "cuda" else None

    timer = Timer(torch, dev, 0 if args.smoke else 512 << 20)
    smoke = args.smoke

    def save():
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.out)

    pairs = layer_shapes()
    m_grid = [1, 8, 32] if smoke else M_GRID
    if smoke:
        pairs = {(64, 128): ["smoke"], (128, 32): ["smoke"]}
    sections = [
        ("bandwidth", lambda: measure_bandwidth(torch, F, dev, timer, budget, smoke)),
        ("gemm_bf16_holdout", lambda: measure_gemms(
            torch, dev, timer, budget, smoke, layer_shapes(HOLDOUT_MODELS) if not smoke else pairs, "bf16",
            HOLDOUT_M if not smoke else [3, 24])),
        ("gemm_bf16", lambda: measure_gemms(torch, dev, timer, budget, smoke, pairs, "bf16", m_grid)),
        ("gemm_bf16_backward", lambda: measure_backward(
            torch, dev, timer, budget, smoke, fp8_pairs(pairs) if not smoke else pairs,
            [512, 2048, 8192, 32768] if not smoke else [16, 32])),
        ("attention", lambda: measure_attention(torch, F, dev, timer, budget, smoke)),
        ("gemm_fp8", lambda: measure_gemms(torch, dev, timer, budget, smoke, fp8_pairs(pairs) if not smoke
                                           else pairs, "fp8", m_grid)),
        ("gemm_fp8_fast_accum", lambda: measure_gemms(
            torch, dev, timer, budget, smoke,
            {kn: u for kn, u in fp8_pairs(pairs).items() if any(x.endswith("/tp1") for x in u)}
            if not smoke else pairs, "fp8", m_grid, fast_accum=True)),
        # The same shapes timed again at the end: the spread between the two is the noise floor.
        ("gemm_bf16_repeat", lambda: measure_gemms(
            torch, dev, timer, budget, smoke,
            {kn: u for kn, u in pairs.items() if any(x.startswith("llama-3-8b/") and x.endswith("/tp1")
                                                     for x in u)} if not smoke else pairs, "bf16", m_grid)),
    ]
    wanted = args.sections.split(",")
    unknown = [w for w in wanted if w not in [name for name, _ in sections]]
    if unknown:
        ap.error(f"--sections: unknown section(s) {unknown}; known: {[name for name, _ in sections]}")
    for name, fn in sections:
        if name not in wanted:
            continue
        t0 = time.time()
        try:
            result[name] = fn()
        except Exception as e:  # noqa: BLE001 - a section that fails leaves the others standing
            result[name] = {"error": repr(e)[:600]}
        if dev.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        result.setdefault("section_seconds", {})[name] = round(time.time() - t0, 2)
        print(f"[{time.time() - budget.t0:6.1f} s] {name} done in {time.time() - t0:.1f} s", flush=True)
        save()

    if dev.type == "cuda":
        result["nvidia_smi_after"] = nvidia_smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
        result["nvidia_smi_after"]["throttle"] = nvidia_smi("clocks_event_reasons.active")
    if sampler:
        result["clock_samples"] = sampler.stop()
    result["wall_s"] = round(time.time() - budget.t0, 2)
    save()
    print_summary(result)
    return 0


def print_summary(r):
    hold = r.get("gemm_bf16_holdout")
    if isinstance(hold, list):
        ok = [e for e in hold if "flops_per_s" in e]
        print(f"gemm_bf16_holdout: {len(ok)} measured of {len(hold)}")
    print(f"\n{r['gpu'].get('name')}  torch {r['torch']}  cuda {r['cuda']}  wall {r['wall_s']} s")
    bw = r.get("bandwidth") or []
    if isinstance(bw, list):
        for e in bw:
            if "bytes_per_s" in e:
                print(f"  {e['op']:<18} {str(e['shape']):<16} {e['dtype']:<5} {e['bytes_per_s'] / 1e12:6.2f} TB/s")
    for sec in ("gemm_bf16", "gemm_bf16_backward", "gemm_fp8", "gemm_fp8_fast_accum"):
        g = r.get(sec, [])
        if not isinstance(g, list):
            print(sec, g)
            continue
        ok = [e for e in g if "flops_per_s" in e]
        bad = [e for e in g if "error" in e]
        skipped = [e for e in g if "skipped" in e]
        print(f"{sec}: {len(ok)} measured, {len(bad)} errors, {len(skipped)} skipped")
        if bad:
            print("   first error:", bad[0]["M"], bad[0]["K"], bad[0]["N"], bad[0]["error"][:200])
        if ok and sec == "gemm_bf16_backward":
            for e in ok:
                if e["layer_K"] == 4096 and e["layer_N"] == 14336:
                    print(f"   4096x14336 {e['pass']} T={e['tokens']:<6} {e['flops_per_s'] / 1e12:7.1f} TFLOP/s")
            continue
        if ok:
            best = max(ok, key=lambda e: e["flops_per_s"])
            print(f"   peak {best['flops_per_s'] / 1e12:.0f} TFLOP/s at M={best['M']} K={best['K']} N={best['N']}")
            for e in ok:
                if e["K"] == 4096 and e["N"] == 14336:
                    print(f"   4096x14336 M={e['M']:<6} {e['flops_per_s'] / 1e12:7.1f} TFLOP/s")
    at = r.get("attention", [])
    if not isinstance(at, list):
        print("attention", at)
        return
    for e in at:
        if "flops_per_s" in e:
            print(f"  {e['op']:<22} b={e['batch']:<4} h={e['heads']:<3} s_q={e['s_q']:<6} s_kv={e['s_kv']:<6} "
                  f"{e['flops_per_s'] / 1e12:6.1f} TFLOP/s")
        elif "error" in e:
            print(f"  {e['op']:<22} error {e['error'][:120]}")


if __name__ == "__main__":
    sys.exit(main())
