#!/usr/bin/env python3
"""Hostile command lines across every subcommand of `scaling`, each under a memory cap (prlimit --as) and a
time limit (issue 19's contract). Every run must: exit 0, 1 or 2 (never a crash, a kill or a timeout);
on exit 1 or 2 print exactly one printable line on stderr and nothing on stdout; on exit 0 print stdout that
is valid UTF-8 without control characters (tab and newline aside), no digit run of 40 or more, and, with
--json, a document without null, inf or NaN where a number is expected.

usage: run_hostile.py SCALING [--all] [--seed N] [--no-memory-cap]   (default: a fixed sample of about 1,500 cases)

--no-memory-cap: for a build under AddressSanitizer, which reserves terabytes of address space for its shadow
memory before main runs, so no address-space cap can apply to it; the plain build's run checks the cap.
"""
import json, os, random, re, subprocess, sys, tempfile

SCALING = sys.argv[1]
ALL = "--all" in sys.argv
MEM = None if "--no-memory-cap" in sys.argv else str(2 << 30)   # 2 GiB of address space
TIME = 20            # seconds per case

VALUES = ["0", "-1", "0.5", "1e-300", "1e300", "1e400", "nan", "inf", "", "1e", "0x10", "\u0665", " 5", "+5",
          "9007199254740993", "1" * 40, "1e-320", "4\n4", "\x1b[31m", "\xc2\x85", "A" * 600, "8k", "-8k", "1.5"]
SHAPES = ["3x3x3x3", " 4x4", "+4x4", "4x4 ", "720720x720720x720720", "16x16x16", "4x4x4", "2x2", "0x4", "4x", "x",
          "1" * 40 + "x4", "4\tx4", "8x8"]
MESHES = ["X= 2,Y=4", "X=2,Y=100000", "X=1000,Y=1000", "X=+2,Y=4", "X=2,Y=4", "X=2,Y=-4", "X=2,Y=4,Z=2", "X=2"]


def base_commands(tmp):
    m = "--model llama2-13b "
    return {
        "matmul": ("matmul --chip tpu-v5e", {"--B": "8", "--D": "8", "--F": "8", "--hbm-bw": None, "--flops": None,
                                              "--lhs-dtype": None}),
        "collective": ("collective --chip tpu-v5e --op all-gather", {"--slice": "4x4", "--axes": "0", "--bytes": "1e6",
                                                                      "--ici-bw": None}),
        "simulate": ("simulate --op all-gather --direction uni", {"--devices": "4", "--elements": "16"}),
        "shard": ("shard 'A[I_X, J]'", {"--mesh": "X=2,Y=8", "--shape": "128,2048", "--dtype": None}),
        "params": ("params", {"--model": "llama2-13b", "--kv-dtype": None}),
        "collective-matmul": ("collective-matmul --kind all-gather --chip tpu-v5e",
                              {"--mesh": "X=2,Y=4", "--B": "8", "--D": "8", "--F": "8", "--hbm-bw": None}),
        "serve": ("serve " + m + "--chip tpu-v5e", {"--chips": "8", "--batch": "8", "--context": "1024",
                                                    "--decode-len": None, "--hbm-bw": None, "--flops": None}),
        "serve-slice": ("serve " + m + "--chip tpu-v5e --batch 8 --context 1024", {"--slice": "4x4"}),
        "train": ("train " + m + "--chip tpu-v5p", {"--slice": "4x4x4", "--batch-tokens": "1M", "--mfu": None,
                                                     "--pods": None, "--tokens": None, "--tp": None, "--vp": None}),
        # One degree given: the search with it fixed (round 7), each hostile value as that degree.
        "plan": ("plan " + m + "--chip tpu-v5p", {"--slice": "4x4x4", "--batch-tokens": "1M", "--top": None,
                                                   "--pods": None, "--seq": None, "--tp": None, "--pp": None,
                                                   "--dp": None}),
        "layout": ("layout", {"": "'bf16[4,8]{1,0:T(2,4)(2,1)}'", "--index": None}),
        "dot": ("dot 'bf,fd->db'", {"--shapes": "128,256 256,16"}),
    }

def hostile_layouts():
    return ["'pred[" + ",".join(["2"] * 32 + ["1"] * 32) + "]' --grid", "'pred[" + ",".join(["2"] * 64) + "]' --grid",
            "'f32[0," + ",".join(["1000000000"] * 5) + "]'", "'f32[4,\t8]'", "'f32[" + "9" * 40 + "]'",
            "'bf16[4,8]{1,0:T(2,4)(2,1)}' --grid --json", "'f32[1024,1024]' --grid"]

def files(tmp):
    out = {}
    def put(name, text):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
        out[name] = p
    # Chip files in the format `scaling chips --json` writes, with hostile names and figures.
    v5e = next(c for c in json.loads(subprocess.run([SCALING, "chips", "--json"], capture_output=True).stdout)
               if c["name"] == "tpu-v5e")
    put("chip_ctrl.json", json.dumps(dict(v5e, name="x\u001b[31m", display="TPU\nfake\u0085" + "A" * 600)))
    put("chip_big.json", json.dumps(dict(v5e, name="big", display="big", pod_shape=[1000, 1000])))
    put("chip_huge.json", json.dumps(dict(v5e, name="huge", display="huge", pod_shape=[720720, 720720, 720720])))
    put("chip_tiny.json", json.dumps(dict(v5e, name="tiny", display="tiny", hbm_bytes_per_s=1e-300,
                                          bf16_flops_per_s=1e-300, ici_oneway_bytes_per_s=1e-300,
                                          ici_bidi_bytes_per_s=2e-300)))
    put("chip_bytes.json", b'{"name": "\xff\xfe", "display": "\xc2\x9b"}')
    put("config_odd.json", json.dumps({"model_type": "llama", "hidden_size": 4096.5, "intermediate_size": 11008,
                                       "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000}))
    put("config_2p53.json", '{"model_type": "llama", "hidden_size": 9007199254740993, "intermediate_size": 8,'
                             '"num_hidden_layers": 1, "num_attention_heads": 1, "vocab_size": 8}')
    put("config_\udcff.json", open(os.path.join(os.path.dirname(__file__), "..", "data", "llama-2-7b.json")).read())
    put("config\x1b[31m.json", open(os.path.join(os.path.dirname(__file__), "..", "data", "llama-2-7b.json")).read())
    return out

def cases(tmp):
    out = []
    for name, (head, opts) in base_commands(tmp).items():
        for opt in opts:
            for v in VALUES + (SHAPES if opt == "--slice" else []) + (MESHES if opt == "--mesh" else []):
                args = [head]
                for o, d in opts.items():
                    val = v if o == opt else d
                    if val is None: continue
                    args.append((o + " " if o else "") + (val if o == "" and o != opt else shell(val)))
                out.append(" ".join(args) + (" --json" if len(out) % 2 else ""))
    for l in hostile_layouts(): out.append("layout " + l)
    f = files(tmp)
    for chip in ("chip_ctrl.json", "chip_big.json", "chip_huge.json", "chip_tiny.json", "chip_bytes.json"):
        p = shell(f[chip])
        out += [f"train --model llama2-13b --chip-file {p} --slice 16x16 --batch-tokens 1M --json",
                f"plan --model llama2-13b --chip-file {p} --slice 16x16 --batch-tokens 1M",
                f"matmul --chip-file {p} --B 8 --D 8 --F 8", f"matmul --chip-file {p} --B 8 --D 8 --F 8 --json",
                f"collective --chip-file {p} --slice 4x4 --op all-reduce --axes 0 --bytes 1e6",
                f"collective-matmul --kind ffn --chip-file {p} --mesh X=1000,Y=1000 --B 8000 --D 8 --F 8",
                f"collective-matmul --kind ffn --chip-file {p} --mesh X=2,Y=4 --B 8 --D 8 --F 8",
                f"serve --model llama2-13b --chip-file {p} --chips 8 --batch 8 --context 1024 --json",
                f"serve --model llama2-13b --chip-file {p} --slice 16x16 --batch 8 --context 1024"]
    for cfg in ("config_odd.json", "config_2p53.json", "config\x1b[31m.json", "config_\udcff.json"):
        p = shell(f[cfg])
        out += [f"params --config {p}", f"params --config {p} --json",
                f"serve --config {p} --chip tpu-v5e --chips 8 --batch 8 --context 1024 --json",
                f"serve --config {p} --chip tpu-v5e --chips 8 --batch 8 --context 1024",
                f"train --config {p} --chip tpu-v5e --slice 4x4 --batch-tokens 1M",
                f"plan --config {p} --chip tpu-v5e --slice 4x4 --batch-tokens 1M"]
    out += ["serve --model llama2-13b --chip h100 --slice 4x4 --batch 8 --context 8",
            "serve --model llama2-13b --chip tpu-v5e --slice 32x32 --batch 8 --context 8",
            "train --model llama2-13b --chip tpu-v5p --slice 4x4x4 --batch-tokens 1M --chips 1e300",
            "serve --model llama2-13b --chip tpu-v5e --chips 1e300 --batch 8 --context 8",
            "matmul --chip tpu-v5e --B 8 --D 8 --F 8 --mfu 2", "train --model llama2-13b --chip tpu-v5p --slice 4x4x4 "
            "--batch-tokens 1M --mfu 2", "serve --model llama2-13b --chip tpu-v5e --chips 8 --batch 8 --context 8 "
            "--prefill-len 8 --mfu 2", "plan --model llama2-13b --chip tpu-v5p --slice 4x4x4 --batch-tokens 1M --zero " +
            ",".join(["3"] * 60000), "serve --model llama2-13b --chip tpu-v5e --batch 8 --ctx 8 --chips 8",
            "collective-matmul --kind ffn --chip tpu-v5e --mesh X=1,Y=100000 --B 8 --D 8 --F 8"]
    out += ["plan --model llama2-7b --chip tpu-v5p --slice 16x16x16 --pods 1000000 --batch-tokens 1e15 --json",
            "train --model llama2-7b --chip tpu-v5p --slice 16x16x16 --pods 1000000 --batch-tokens 1e15 --json",
            "plan --model llama2-7b --chip tpu-v5p --slice 4x4x4 --pods 1000000 --batch-tokens 1e15"]
    # One slice check (cli::slice_on_chip) in every slice-taking subcommand, train and plan included.
    for head in ("serve --model llama2-13b --chip tpu-v5e --batch 8 --context 8",
                 "train --model llama2-13b --chip tpu-v5e --batch-tokens 1M",
                 "plan --model llama2-13b --chip tpu-v5e --batch-tokens 1M"):
        out += [head + " --slice 3x3x3x3", head + " --slice 32x32", head + " --slice ' 4x4'"]
    return out

def shell(v):
    return "'" + v.replace("'", "'\\''") + "'"

def check(cmd, r):
    problems = []
    if r is None: return ["timed out"]
    code, out, err = r
    if code not in (0, 1, 2): problems.append(f"exit {code}")
    if code != 0:
        if out: problems.append("stdout on refusal")
        if err.count(b"\n") != 1: problems.append("stderr is not one line")
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError:
        problems.append("stdout is not UTF-8"); text = out.decode("utf-8", "replace")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]", text): problems.append("control character on stdout")
    try:
        e = err.decode("utf-8")
        if re.search(r"[\x00-\x09\x0b-\x1f\x7f\x80-\x9f]", e): problems.append("control character on stderr")
    except UnicodeDecodeError:
        problems.append("stderr is not UTF-8")
    if re.search(r"\d{40}", text): problems.append("a 40-digit number on stdout")
    if code == 0 and "--json" in cmd and "--grid" not in cmd:
        problems += json_value_problems(text)
    if code == 0 and re.search(r"\b(nan|NaN|inf)\b", text): problems.append("NaN or inf in text with exit 0")
    return problems

# The only nulls the JSON documents (README; the same list as nullable() in fuzz/cli_fuzz.cpp): matmul's
# critical_batch when no batch is compute-bound, simulate's correct under --count-only (nothing was
# computed), and a chip figure the chip does not have in `chips --json`. Any other null, and NaN or Infinity
# anywhere, breaks the contract.
DOCUMENTED_NULLS = {"critical_batch", "correct", "int8_flops_per_s", "ici_oneway_bytes_per_s", "ici_bidi_bytes_per_s",
                    "ici_hop_latency_s", "pcie_bytes_per_s", "dcn_bytes_per_s_per_host", "fp4_flops_per_s",
                    "fp8_flops_per_s", "gpus_per_node", "nvlink_bytes_per_s", "ib_bytes_per_s", "anatomy",
                    "nvlink_node", "base_clock_hz", "boost_clock_hz", "tmem_bytes_per_sm"}

def json_value_problems(text):
    def reject(token):
        raise ValueError(token)
    try:
        doc = json.loads(text, parse_constant=reject)
    except ValueError as e:
        return ["NaN or Infinity in JSON with exit 0" if str(e) in ("NaN", "Infinity", "-Infinity")
                else "stdout with --json is not one JSON document"]
    found = []
    def walk(value, key):
        if value is None and key not in DOCUMENTED_NULLS:
            found.append(f"null at '{key}' in JSON with exit 0")
        elif isinstance(value, dict):
            for k, v in value.items(): walk(v, k)
        elif isinstance(value, list):
            for v in value: walk(v, key)
    walk(doc, "")
    return found[:1]

def run(cmd):
    try:
        cap = ["prlimit", "--as=" + MEM, "--"] if MEM else []
        p = subprocess.run(cap + ["timeout", "-s", "KILL", str(TIME), "sh", "-c",
                                  f"exec {shell(SCALING)} {cmd}"], capture_output=True, timeout=TIME + 10)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode in (124, 137): return None
    return p.returncode, p.stdout, p.stderr

def main():
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 19
    with tempfile.TemporaryDirectory() as tmp:
        all_cases = cases(tmp)
        chosen = all_cases if ALL else sorted(random.Random(seed).sample(all_cases, min(len(all_cases), 400)) +
                                              all_cases[-60:])
        failures = 0
        for cmd in chosen:
            problems = check(cmd, run(cmd))
            if problems:
                failures += 1
                print(f"FAIL {problems}: scaling {cmd[:300]!r}")
        print(f"{len(chosen)} hostile command lines, {failures} broke the contract")
        return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
