# One-off (run from the repository root, the shared file as argument): copy ../shared/validation/calibration-runs.json into validation/training-runs.json, adding to
# every run the assumptions a step model needs for what its source leaves unstated, each with its reason.
import json
import sys
src = json.load(open(sys.argv[1] if len(sys.argv) > 1 else '/work/shared/validation/calibration-runs.json'))
out = dict(src)
out['about'] = src['about'] + (" Copied into the workbook (validation/training-runs.json) with an 'assumptions' "
    "object per run: every input the calibrated step model needs that the run's source does not state, with the "
    "reason for the choice, and 'measured_step' (the step time the model is held against and how it follows from "
    "the printed figures). tests/test_validation_training_runs.cpp reads this file.")
out['field_notes'] = dict(src['field_notes'])
out['field_notes']['assumptions'] = ("inputs the source does not state, chosen before any prediction was made and "
    "never per run to fit: the same rule for every run of a group; 'why' gives the reason")
out['field_notes']['measured_step'] = "the step time in seconds the model is held against, and the formula that gives it from the printed numbers"

def megatron(r):
    p = r['parallelism']; m = r['model']
    stated_mb = p.get('microbatch')
    stated_v = p.get('virtual_stages')
    a = {
        'model': {'value': {'gated_mlp': False, 'norm_bias': True, 'attention_bias': True, 'mlp_bias': True,
                            'tied_embeddings': True, 'head_dim': m['hidden'] // m['heads']},
                  'why': 'GPT as Megatron-LM builds it: LayerNorm with bias, biased linear layers, a two-matrix GeLU MLP, the output layer tied to the word embedding; learned position embeddings (seq x hidden) are left out of the parameter count (under 0.2 % of any of these models)'},
        'microbatch_sequences': {'value': stated_mb if stated_mb is not None else 1,
                                 'why': 'stated' if stated_mb is not None else 'unstated in Table 1; 1 sequence, the size Korthikanti et al. state for their pipelined runs of the same code'},
        'schedule': {'value': 'interleaved' if (stated_v or 1) > 1 else '1f1b',
                     'why': 'stated (interleaving degree)' if stated_v is not None else 'Table 1 names the interleaved schedule but not its degree; taken as v = 1 (plain 1F1B), the conservative choice'},
        'virtual_stages': {'value': stated_v if stated_v is not None else 1,
                           'why': 'stated' if stated_v is not None else 'unstated: see schedule'},
        'attention': {'value': 'materialized', 'why': "Megatron-LM of 2021-22 computes QK^T as a batched GEMM and runs its fused scale-mask-softmax and dropout on the scores in HBM (FlashAttention was published after these runs)"},
        'dp_overlap': {'value': False, 'why': "Megatron-LM's data-parallel gradient all-reduce of that time runs after the backward pass (the overlapped reduce came later)"},
        'tp_overlap': ({'value': 'backward', 'why': "Megatron-LM at d898a89 (2022-05-25, the merge that published these runs' sequence parallelism and selective recomputation): LinearWithGradAccumulationAndAsyncCommunication (megatron/mpu/layers.py) runs each column-parallel linear's input-gradient AllReduce, or with sequence parallelism its ReduceScatter and the re-gather of the linear's saved sharded input, asynchronously beside that linear's GEMMs, on by default (arguments.py: --no-async-tensor-model-parallel-allreduce turns the AllReduce off; with sequence parallelism arguments.py forces that flag off and the asynchronous ReduceScatter and AllGather have no switch). The paper does not say its runs used it; d898a89 is the last of the merges that brought its features to main, dated after its first arXiv version. Set after the predictions had been seen: it was 'no overlap' until an outside comparison with Calculon read this code"}
                       if r['id'].startswith('korthikanti') else
                       {'value': False, 'why': 'Megatron-LM of March 2021 (b4bc51b, megatron/mpu/layers.py) runs every tensor-parallel collective on the critical path: the asynchronous backward AllReduce came in September 2021 (merge b462d25)'}),
        'zero': {'value': 0, 'why': 'no optimizer-state sharding (the distributed optimizer came later)'},
        'dtypes': {'value': {'weights': 'fp16', 'grads': 'fp32', 'master': 'fp32', 'optimizer_state': 'fp32', 'activations': 'fp16'},
                   'why': 'mixed precision as Megatron-LM runs it: 16-bit weights and activations, fp32 main gradients (accumulated and all-reduced in fp32), fp32 master weights and Adam moments'},
        'network': {'value': {'nvlink': 'the a100 preset (300 GB/s per GPU per direction)', 'infiniband_bytes_per_s': 25e9},
                    'why': 'NVLink bandwidth unstated: the DGX A100 datasheet figure; InfiniBand 8 x 200 Gb/s per node as stated'},
        'placement': {'value': 'tensor innermost (within a node), then data, then pipeline (across nodes)',
                      'why': "Megatron-LM's rank order: tensor-parallel groups are consecutive ranks, pipeline stages the outermost"},
    }
    return a

def maxtext(r):
    m = r['model']
    return {
        'model': {'value': {'gated_mlp': False, 'norm_bias': False, 'attention_bias': False, 'mlp_bias': False,
                            'tied_embeddings': bool(m.get('tied_embeddings', True)), 'head_dim': m['head_dim']},
                  'why': "MaxText's synthetic decoder as the row states it (a two-matrix ReLU MLP, head_dim, tied embeddings); RMSNorm without bias and no linear biases as MaxText's default decoder"},
        'microbatch_sequences': {'value': None,
                                 'why': 'no gradient accumulation: the whole batch is one microbatch (MaxText default gradient_accumulation_steps = 1)'},
        'schedule': {'value': '1f1b', 'why': 'no pipeline'},
        'virtual_stages': {'value': 1, 'why': 'no pipeline'},
        'attention': {'value': 'flash', 'why': 'stated (attention: flash)'},
        'sequence_parallel': {'value': r['parallelism']['tp'] > 1,
                              'why': "MaxText's base.yml logical_axis_rules map activation_embed to the tensor axis: with tensor parallelism the residual stream is sharded over it, so norms and residual adds are split and each TP collective is an AllGather or a ReduceScatter (sequence parallelism in Korthikanti et al.'s sense); moot without tensor parallelism"},
        'dp_overlap': {'value': True, 'why': "XLA's asynchronous collectives overlap the gradient reduce with the backward pass"},
        'tp_overlap': {'value': False, 'why': 'tensor-parallel collectives counted on the critical path (no overlap stated)'},
        'zero': {'value': 3, 'why': 'FSDP over the slice (ici_fsdp_parallelism), parameters replicated across slices (dcn_data_parallelism): ZeRO-3 with scope group'},
        'dtypes': {'value': {'weights': 'bf16', 'grads': 'fp32', 'master': 'fp32', 'optimizer_state': 'fp32', 'activations': 'bf16'},
                   'why': "fp32 parameters (stated) cast to bf16 in each layer before its matmul (MaxText/layers/linears.py l.120 at 76bd53b: jnp.asarray(kernel, self.dtype)), so the FSDP gathers move bf16, as MaxText's sharding guide counts them (docs/guides/optimization/sharding.md at e591f30: the params all-gathered in bf16); in the model's terms bf16 weights with an fp32 master (which also counts a bf16 shard MaxText does not keep: 2 bytes a parameter over the FSDP group); bf16 activations; gradients and Adam moments in fp32. Until round 9 the rule gathered fp32 weights (unstated then whether XLA casts first); changed after the predictions had been seen, when the memory check found the 64B rows over the v5e's HBM"},
        'network': {'value': {'ici': 'the tpu-v5e preset (§2.3)', 'dcn': 'the tpu-v5e preset (2.5e10 B/s per host, §2.2)'},
                    'why': 'unstated in the row: the book\'s figures'},
        'placement': {'value': 'fsdp on one axis of the 16x16 slice and tensor on the other when tp > 1; both axes data otherwise',
                      'why': 'the two axes of a 16x16 v5e slice are alike (both wrap)'},
    }

for r in out['runs']:
    rid = r['id']
    if rid.startswith('maxtext'):
        a = maxtext(r)
        ms = {'formula': 'global_batch_tokens / (chips * tflops_per_device * 1e12 / derived.model_flops_per_token): the printed TFLOP/s per chip over the model FLOPs per token MaxText counts (the row\'s derived figure, which reproduces the printed MFU)'}
    else:
        a = megatron(r)
        if rid.startswith('narayanan'):
            ms = {'formula': 'Eq. 3 of Narayanan et al. 2021: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration, time = F / (GPUs * tflops_per_device * 1e12)'}
        elif r['measured'].get('iteration_time_s'):
            ms = {'formula': 'printed iteration time (Table 5)'}
        else:
            ms = {'formula': 'Eq. 7 of Korthikanti et al. 2022: model FLOPs = 72 B s l h^2 (1 + s/(6h) + V/(12 h l)) per iteration, time = F / (GPUs * 312e12 * MFU)'}
    r['assumptions'] = a
    r['measured_step'] = ms
json.dump(out, open('validation/training-runs.json', 'w'), indent=1, ensure_ascii=False)
print(len(out['runs']))
