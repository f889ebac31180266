"""Measured serving deployments through `whatif simulate --concurrency`: NVIDIA aiconfigurator's silicon set
(reference/aiconfigurator-serving/silicon_calibration.csv, Apache-2.0, aiconfigurator commit 095f58a51c:
2,969 deployments on H100-SXM and B200-SXM, TensorRT-LLM / vLLM / SGLang releases of 2025-2026, each a closed loop
of N clients at given input/output lengths (fixed, or drawn in [0.8 L, L]: client_range_ratio) with its measured
mean TTFT and TPOT).

Long because: the mapping rule is one file by design (written before scoring, read in one place): each
recorded field's and campaign's rule is a short function beside the run and report it feeds.

How the rows were measured (aiconfigurator's generator, src/aiconfigurator/generator/config/backend_templates/
benchmark/bench_run.sh.j2): `aiperf profile --streaming --concurrency N --num-requests 50N
--warmup-request-count 2N --isl ISL --osl OSL --extra-inputs ignore_eos:true`, synthetic prompts (no shared
prefix). aiperf's TTFT runs from the send to the first streamed token (HTTP, tokenization and the server's own
path included); its inter-token latency is (request latency - TTFT) / (output - 1), averaged over the requests
after the warm-up. Not established: which generator commit (launch settings) each row's deployment used, and the
KV-cache dtype it ran (the set has no kvcache column); the rule below states what is assumed.

The mapping rule, written before any row was scored and not tuned after:
- expressible = `whatif.api.simulate` accepts the mapped row; any WhatifError makes the row not expressible, its
  one-line text the recorded reason (so coverage grows as whatif learns models, layouts and precisions). Any other
  exception is recorded as `internal error: ...` (a bug, counted apart, never hidden). scored = the row was
  simulated and enters the figures. A row whose measurement or record cannot be scored (NotScored: a cold server, a
  launch measured two ways, no N, a cap outside the deployment, an unrecorded layout or pool size, a repeat) keeps
  that reason with scored 0, and is expressible where whatif accepts its model, GPU, layout and precision
  (whatif_refusal: a one-batch estimate of them; split from expressible in session 69, issue 38: until then such
  rows read expressible 0 as well; no figure moves);
- model: `model_path` as a Hugging Face id (`--model org/name`);
- hardware: system h100_sxm -> dgx-h100 (8-GPU HGX/DGX H100 node), b200_sxm -> dgx-b200 (8-GPU DGX B200);
  GPUs of one replica = tp x pp with tp = tp_size x attention_dp_size; `nodes` = ceil(GPUs / 8), passed only
  when over 1;
- layout: tp as above, pp = pp_size, attention_dp = attention_dp_size (passed when over 1), ep = moe_ep_size
  (passed when over 1) and moe_tp = moe_tp_size only where moe_tp_size x moe_ep_size = tp (the engines' MoE
  constraint, aiconfigurator's trtllm.rule; the dense models' rows carry 1/0 there, no MoE layout), which
  makes moe_tp whatif's default tp / ep, so it is never passed;
- a "TP T, EP E" layout recorded as a product (added after the first scoring, with its before/after in
  docs/accuracy.md): InferenceX-sourced rows store TP T with EP E as moe_tp_size T x moe_ep_size E and
  tp_size (x attention_dp_size) = T x E, so a TP8 EP8 deployment on one 8-GPU node reads as TP64 over 8 nodes.
  Where the row's id names the layout (`..._tp8_ep8_...`, T = moe_tp_size, E = moe_ep_size) or the row is
  from the db-dump whose measurements those rows repeat (71 of its 87 such rows are exact copies), it maps
  to tp = T, ep = E (moe_tp = T / E), attention_dp = T where attention_dp_size > 1; T GPUs; its batch_size,
  per recorded attention-DP rank (N / (T x E)), scaled to a real rank's (N / T, InferenceX's CONC / TP);
- speculative decoding (added after the first scoring, as above): TensorRT-LLM rows run on image
  tensorrt-llm/release:1.2.0rc6.post3 are InferenceX's `dsr1-*-b200-trt-mtp` configurations (its
  perf-changelog, PR #1489: "off: v1.2.0rc6.post2 / mtp: v1.2.0rc6.post3"; every such row is DeepSeek-R1,
  1.2-2.3x faster than the post2 row of the same layout and load), launched by
  benchmarks/dsr1_fp4_b200_trt_mtp.sh with speculative_config MTP, num_nextn_predict_layers 3 (1 under
  attention DP): mapped to whatif's `mtp:k=3` (`mtp:k=1`) with its default acceptance 0.85 per draft token
  (DeepSeek-V3 technical report: 85-90% for the second token; deeper drafts assumed alike), not tuned; since
  session 55 (added after scoring) at the acceptance length InferenceX reports for its chat-templated random
  prompts, 2.50 tokens a round at 3 drafts (PR #649; INFERENCEX_MTP_ACCEPT_LENGTH: 0.69 a draft). Rows on
  1.1.0rc2.post2 ran both ways (InferenceX used that image for the STP and the first MTP configurations) and
  nothing in the row says which: mapped without speculation. Added after scoring (session 56): Qwen3.5-397B FP8
  SGLang 0.5.9 rows at TP4 without EP are InferenceX's qwen3.5-fp8-b200-sglang-mtp key (the plain key never
  searched that layout: qwen35_mtp_key), EAGLE over the MTP layer, 3 steps top-1: `mtp:k=3` at that acceptance;
  added after scoring (session 63): SGLang 0.5.9 runs that EAGLE on its V1 workers, which turn the overlap
  scheduler off (sglang_spec_v1_overlap: scenario overlap_schedule false; the -mtp key's 63 rows TPOT MAPE 18.4 ->
  17.3%, TTFT 34.4 -> 36.4%: the first token leaves one step sooner, and the TTFT gap is elsewhere); added after
  scoring (session 71 L): vLLM releases before 0.14.0 schedule synchronously (vllm_sync_scheduling: scenario
  overlap_schedule false; the 90 0.12.0 rows TPOT 8.36 -> 4.54%, TTFT 22.89 -> 24.15%); added after scoring
  (session 71 M): their Qwen3-32B requests sample with the checkpoint's top-k and top-p through vLLM 0.11.1-0.12.0's
  full-vocabulary sort (vllm_sort_sampler: scenario topk_topp_sort; the 90 rows TPOT 4.54 -> 3.00%, TTFT 24.15 ->
  23.95%);
- precision: gemm_quant_mode -> quantization (fp8 -> fp8, fp8_block -> fp8-block, nvfp4 -> nvfp4, int4_wo ->
  w4a16, empty -> the checkpoint's 16-bit); moe_quant_mode -> expert_quantization when it differs from the
  gemm mode; KV cache fp8 where gemm_quant_mode is set (aiconfigurator pairs its quantized configurations
  with kvcache_quant_mode fp8, e.g. src/aiconfigurator/cli/exps/qwen3_32b_pertensor.yaml and the H20/6KD
  preset's trtllm defaults; the issue saw a bf16 KV cache hold 43 of the 64 sequences a deployment ran),
  else the checkpoint's bf16 (assumed). nvfp4 on h100_sxm (Hopper has no fp4 tensor cores) for a model whose
  released checkpoint is MXFP4 (openai/gpt-oss-120b: its config.json quantization_config, read by
  specs/checkpoint_quant.py) -> mxfp4, the checkpoint as stored: MXFP4 expert weights dequantized to 16-bit in
  the GEMM (vLLM on Hopper runs them through triton_kernels' matmul_ogs or Marlin's MXFP4 MoE, w4a16), attention
  16-bit; the set labels these 69 vLLM rows nvfp4 though no NVFP4 gpt-oss checkpoint is at that id (rule added
  before they were scored; the B200 rows keep nvfp4, where the engines run the MXFP4 experts on fp4/fp8 tensor
  cores);
- engine: the row's backend (trtllm, vllm, sglang) with whatif's spec of that engine (engine_profiles/); the
  row's version is reported, not mapped. Launched as aiconfigurator's generator launches an aggregated worker
  (launch_settings; added after the first scoring as the issue's first fix, with its before/after in
  docs/accuracy.md: the first rule had kept each spec's defaults); max batch and replicas by agg_pool: the
  row's batch_size per attention-DP rank, or per GPU in the TensorRT-LLM 1.3.0rc gap-analysis files (changed
  after the first scoring, see agg_pool);
- TensorRT-LLM 1.0.0rc3 rows the generator launched (added after scoring, session 52, trtllm_template_kv_fraction,
  with its before/after in docs/accuracy.md): KV cache free_gpu_memory_fraction 0.80, the default its
  extra_engine_args.1.0.0rc3.yaml.j2 writes (no rule sets it), where the spec has 0.9;
- SGLang rows the generator launched on a release with PR #10975's memory heuristic (0.5.3 on; added after scoring,
  session 53, sglang_default_mem_fraction, with its before/after in docs/accuracy.md): the static memory fraction
  SGLang derives itself, (gpu_mem - reserved) / gpu_mem, where the spec's table (fraction_by_tp) is the earlier
  releases' (0.841 where the spec had 0.88 on one H100 at batch 16);
- load: concurrency = N of `silicon_concurrency=N` in silicon_data_source (a row without it is not
  scored); prompt = isl, output = osl;
- disaggregated rows (rule written before the 59 rows it made expressible were scored; 6 rows with TP-only
  prefill pools had been scored under the first rule, which passed no prefill EP or attention-DP; the pools'
  own fields of simulator.config.ClusterConfig): decode pool = the scenario's layout (decode_* as above) with
  cluster.replicas = decode_num_workers; prefill pool = cluster.prefill_replicas = prefill_num_workers with
  prefill_tp = prefill_tp_size x prefill_attention_dp_size, prefill_pp, prefill_ep = prefill_moe_ep_size where
  moe_tp x moe_ep = tp (else 1) and prefill_dp_attention = (prefill_attention_dp_size > 1), always passed so the
  prefill pool never inherits the decode pool's EP or attention-DP; a prefill attention-DP over part of its TP
  group (1 < ranks < tp) is not expressible (prefill_dp_attention is on/off). `nodes` from both pools' GPUs
  together. The decode pool's limits: max batch = decode_batch_size, which the set records per attention-DP rank
  (every db-dump row has concurrency = decode workers x decode_batch_size x decode attention-DP ranks), so x the
  ranks for SGLang whose limits are the group's (simulator/rank_group.py GROUP_LIMITS); the token budget as an
  aggregated worker's below (the generator's decode max_num_tokens = batch is not mapped). The prefill pool's own
  limits (ClusterConfig.prefill_max_batch / prefill_token_budget; changed after the first scoring, which had one
  limit set for both pools, with its before/after in docs/accuracy.md): max batch = prefill_batch_size (1 in
  every expressible row; the generator's default 1 where none is recorded), x the ranks for SGLang, and the
  generator's prefill max_num_tokens ISL + 1500 (prefill_limits). The db-dump TensorRT-LLM rows whose srt-slurm
  recipe is established (added after scoring, session 54, srt_slurm_trtllm_recipe, with its before/after in
  docs/accuracy.md): that recipe's gen max_batch_size and ctx max_batch_size / max_num_tokens instead (InferenceX's
  nvidia-master.yaml names the recipe per concurrency list; e.g. 1, 2, 8, 16 decode slots per H100 worker at 6, 9,
  30, 60 clients on 3 workers, where N / workers gives 2, 3, 10, 20). The db-dump SGLang rows whose srt-slurm
  recipe is established (added after scoring, session 55, srt_slurm_sglang_recipe): that recipe's decode and
  prefill --max-running-requests and prefill --chunked-prefill-size, each the worker's (e.g. 2 x 128 decode slots
  for 288 clients in b200-fp8/8k1k_stp_maxtpt_0.yaml). The H100 ones of those TensorRT-LLM recipes set
  NCCL_NVLS_ENABLE=0 in the decode workers' environment (added after scoring, session 60, trtllm_nvls_off): the
  trtllm-nvls-off profile, whose TP16 all-reduces over two nodes pay the measured second node without NVLS.
  The deployments' own engine limits (the srt-slurm recipes the db-dump rows name, e.g. `..._batch128` at 137
  clients per rank) and whether they ran MTP are not in the rows. Rows without prefill_num_workers /
  decode_num_workers (the 393 `source_file=2026-03-25.csv` / `2026-04-06.csv` DeepSeek-R1 rows) are not
  scored: they are SemiAnalysis InferenceMAX-style runs whose configurations (nvidia-master.yaml
  `dsr1-*-dynamo-*`) pick 1-8 decode and 1-7 prefill workers per concurrency list at one per-worker TP/EP, with
  dp-attn on or off and MTP or not, none of which the row keeps (it records attention_dp_size 1 throughout);
  aiconfigurator's public docs and collector code give no rule for them either (added after scoring, session 54,
  inferencex_disagg_launch: the TensorRT-LLM rows whose image, lengths, N and prefill/decode TP match exactly one
  launch of those configurations, nvidia-master.yaml at 0004cf5, take its workers, layouts, MTP depth and decode
  batch: 100 of the 142; an MTP and a non-MTP launch at one N leave 42 unscored; the 159 SGLang rows' configurations
  are not mapped; their client is sa-bench's, sa_bench_client; off by default, INFERENCEX_DISAGG_MAPPED). 92 of them
  repeat a db-dump row that records the counts (the same engine, GPU, lengths and measured TTFT and TPOT to 9
  significant digits: repeated_measurement): their reason says so, and the measurement is scored once, on that row
  (added after scoring; no figure moves);
- a run that did not serve the load it records (added after scoring, capped_below_load): where all the rows of one
  aggregated run (engine and version, GPU, model, source, measurement date, N) at TP sizes 2x or more apart imply
  by Little's law (N x (OSL - 1) x TPOT / (TTFT + (OSL - 1) x TPOT)) fewer than N/2 requests in service, within
  25% of each other, the limit did not grow with the KV pool and the launch's max batch is N: a cap outside the
  deployment, so the rows are not scored, the reason saying so. It flags the 9 gpt-oss-120b vLLM rows on H100
  at 512 clients (InferenceX, 2025-12; ~100 in service at TP2, TP4 and TP8 alike, TTFT 20-462 s; the recipe,
  benchmarks/gptoss_fp4_h100.sh, launches --max-num-seqs $CONC), whose TPOT (3.6-27 ms) is that of ~100 sequences;
- the run: N clients in a closed loop (simulator/closed_loop.py) on an idle server, all N sent at t = 0, as
  aiperf starts its profiling phase: its warm-up is not handed over but drained ("By default, AIPerf waits
  indefinitely for all warmup responses before starting profiling", aiperf docs/tutorials/warmup.md; the
  timeline there shows "Warmup ends (wait for responses)"), so the measured 50 x N requests open with a burst of N
  and close with a last wave that drains (the first rule left 2N requests of one continuous run out, a hand-over
  aiperf does not do, and took 4 rounds' mean, which weighted the draining wave 1/4 instead of 1/50). Simulated:
  SIM_ROUNDS x N requests; the aiperf mean over PROFILE_ROUNDS rounds = (rounds 0 .. R-2 as simulated +
  (PROFILE_ROUNDS - R) rounds at the mean of rounds R-3 and R-2, the last two before the drain + round R-1, the
  drain) / PROFILE_ROUNDS, per request (profile_means). TTFT = the simulated TTFT plus the engine spec's front end
  (as the client sees it: `served_ttft_s`), TPOT = each request's (E2E - TTFT) / (output - 1);
- the disaggregated db-dump rows' client (added after scoring, with its before/after in docs/accuracy.md): those
  deployments are Dynamo frontends over prefill and decode workers (images ai-dynamo/*-runtime, lmsysorg/sglang),
  launched by srt-slurm, whose benchmark is sa-bench (NVIDIA/srt-slurm src/srtctl/benchmarks/scripts/sa-bench/
  bench.sh): per concurrency a warm-up run of 2N prompts that ends before `benchmark_serving.py --num-prompts 10N
  --max-concurrency N --request-rate inf --ignore-eos` starts, so its mean is over 10 rounds from an opening burst
  (profile_rounds: SA_BENCH_ROUNDS, the same extrapolation), its `--random-range-ratio 0.8` as the client's
  lengths (client_range_ratio, below; first left unmapped). Not mapped: its chat template's few tokens;
- InferenceX's aggregated runs (added after the first scoring, with the before/after in docs/accuracy.md; rows
  whose silicon_data_source is source_file=2026-03-25.csv / 2026-04-06.csv or db-dump/, INFERENCEX_SOURCES: its
  recipes and image tags; and, added after scoring, the rows of other files whose measurement repeats one of
  theirs, inferencex_run: the Qwen3.5 and Kimi-K2.5 gap-analysis files): their client is InferenceX's
  utils/bench_serving/benchmark_serving.py, not aiperf:
  2N warm-up requests gathered, then --num-prompts 10N behind a semaphore of N (benchmarks/benchmark_lib.sh
  run_benchmark_serving), so the mean is over 10 rounds (profile_rounds), the opening burst and the drain 1/10
  each; and their TensorRT-LLM recipes under DP attention set attention_dp_config (dsr1_fp4_b200_trt.sh,
  dsr1_fp4_b200_trt_mtp.sh: enable_balance, timeout_iters 60, batching_wait_iters 0; gptoss_fp4_b200_trt.sh:
  enable_balance, TensorRT-LLM's defaults 50 / 10), which holds new prompts until every rank has one
  (adp_balance; simulator/adp_balance.py). Their SGLang DeepSeek recipes (benchmarks/dsr1_fp4_b200.sh and
  dsr1_fp8_b200.sh at InferenceX 1fc5d73) launch `--scheduler-recv-interval` 10 below 16 clients and 30 from 16
  (dsr1_fp8_b200.sh at TP4: 10), no DP attention, and their GLM-5 NVFP4 recipe 10 (glm5_fp4_b200.sh; the fp8
  one none): the `engine` setting recv_interval (sglang_recv_interval;
  simulator/recv_interval.py; added after scoring, with its before/after in docs/accuracy.md; which recipe
  revision each row ran is not recorded, the stored one is taken);
- SGLang's per-token-count compile of its GDN prefill (added after scoring, session 55, sglang_l2norm_recompile; its
  before/after in docs/accuracy.md): on a release whose FLA L2-norm kernel specializes on the step's token count
  (l2norm_fwd_kernel `T: tl.constexpr` until sgl-project/sglang PR #31558, merged 2026-07-17), a model with Gated
  DeltaNet layers pays a Triton compile on every prefill step of a token count the server has not run before, the
  `engine` setting prefill_recompile_s (simulator/prefill_recompile.py) at L2NORM_COMPILE_S;
- SGLang 0.5.8.post1's NVFP4 dense GEMMs on cuDNN (added after scoring, session 70 J, sglang_fp4_cudnn_plans; its
  before/after in docs/accuracy.md): the release passes its default `--fp4-gemm-backend auto` to FlashInfer 0.6.1's
  mm_fp4, which on CUDA 13 runs cuDNN first and builds a graph and plans per exact token count; on the rows whose
  srt-slurm recipe leaves the eager prefill's backend unset (b200-fp4/1k1k.yaml STP), each prefill step of a token
  count new to a rank pays FP4_CUDNN_SHAPES x FP4_CUDNN_PLAN_S through prefill_recompile_s (FP4_CUDNN_PLANS_MAPPED,
  off: the runtime image's cuDNN version, the branch that puts cuDNN first, is not read);
- InferenceX's Llama-3.1-70B TensorRT-LLM recipes on B200 (added after scoring, session 51, llama70b_trt_recipe,
  trtllm_batch_wait; its before/after in docs/accuracy.md): --max_num_tokens 16384 as the token budget, and for
  1024/1024 below TP8 `batch_wait_timeout_iters: 20`, `batch_wait_max_tokens_ratio: 0.9` (simulator/batch_wait.py);
- InferenceX's DeepSeek-R1 fp8 TensorRT-LLM recipe of the 1.2.0rc6.post2 image (added after scoring, session 58,
  DSR1_FP8_TRT_BATCH_WAIT in trtllm_batch_wait; its before/after in docs/accuracy.md): dsr1_fp8_b200_trt.sh at
  0a919c5 sets DELAY_BATCHING at 1024/1024 from CONC 64, `batch_wait_timeout_iters: 40`,
  `batch_wait_max_tokens_ratio: 0.8`;
- InferenceX's DeepSeek TensorRT-LLM MoE backend (added after scoring, session 52, trtllm_moe_kernels; its
  before/after in docs/accuracy.md): where the recipe set `moe_config.backend:
  TRTLLM` (TRTLLM_GEN_MOE_IMAGES), `moe_kernels: trtllm-gen` prices the experts by the rows that timed those kernels
  (roofline/moe_kernels.py); at the fp8 recipes' DEEPGEMM points, which no table times, the same measured kernels
  stand in (added after scoring, session 59, DEEPGEMM_MOE_STANDIN: the recipes moved off DEEPGEMM to TRTLLM, PR #594);
- the srt-slurm TensorRT-LLM disaggregated recipes' MoE backend per worker (added after scoring, session 60,
  srt_slurm_trtllm_moe; its before/after in docs/accuracy.md): each recipe's ctx and gen `moe_config.backend`
  (connorcarpenter15/srt-slurm 5a156f6): TRTLLM as `moe_kernels: trtllm-gen` (the prefill pool's through the
  cluster's prefill_moe_kernels), DEEPGEMM as its stand-in, CUTLASS the per-class model;
- InferenceX's DeepSeek TensorRT-LLM launches (added after scoring, session 54, inferencex_dsr1_trt_launch; its
  before/after in docs/accuracy.md): the recipe's --max_num_tokens and free_gpu_memory_fraction by image (1.1.0rc2.post2
  at 6320e9b: CONC + ISL rounded up to 64-token blocks past +64, 0.8; 1.2.0rc6.post2: the same with an 8192 floor,
  the fp8 recipe's 0.7-0.8; the MTP image: (MTP + 1) x its max batch + ISL, 0.8), where the generator's rule had
  batch + ISL + 1500 and the spec's 0.9;
- DeepSeek's own FP8 checkpoints on TensorRT-LLM (added after scoring, session 54, trtllm_deepseek_fp8_checkpoint):
  stored with 128x128 block scales (config.json weight_block_size), which TensorRT-LLM loads as FP8_BLOCK_SCALES:
  quantization fp8-block where the set's "fp8" read per-tensor;
- TensorRT-LLM 1.0.0rc3's H100 Qwen3-32B "fp8" rows as Qwen's 128x128 block-scaled checkpoint (session 72 I2,
  trtllm_qwen3_32b_fp8_block, OFF: QWEN3_32B_TRT_RC3_FP8_BLOCK_MAPPED; the checkpoint is not established, its on / off
  figures in docs/accuracy.md);
- SGLang's MoE all-to-all backend in the B200 DeepSeek launches (added after scoring, session 53, sglang_moe_a2a,
  OFF: SGLANG_A2A_MAPPED; its before/after in docs/accuracy.md): no launch read (InferenceX dsr1_fp{4,8}_b200.sh,
  srt-slurm recipes/b200-fp{4,8}/*.yaml) names --moe-a2a-backend, so under DP attention SGLang all-gathers every
  rank's tokens for the MoE (communicator.py ScatterMode.FULL): the parallel setting moe_a2a "gather"; a launch
  naming deepep would take "deepep" (DeepEP's normal / low-latency kernels, kernel_models/deepep.py; none found);
- the prefill pool's half of it (added after scoring, session 62, sglang_prefill_moe_a2a, ON:
  SGLANG_PREFILL_A2A_MAPPED; its before/after in docs/accuracy.md): a disaggregated SGLang DeepSeek B200 row whose
  prefill pool runs DP attention takes the cluster setting prefill_moe_a2a "gather" (the recipes' prefill workers:
  DP attention with EP and no --moe-a2a-backend), its decode pool the rule above;
- InferenceX's SGLang DeepSeek launches (added after scoring, inferencex_sglang_launch, with its before/after in
  docs/accuracy.md): those rows ran the recipes, not aiconfigurator's generator, so their prefill token budget is
  the recipe's --chunked-prefill-size and their static memory fraction its --mem-fraction-static (dsr1_fp4_b200.sh
  16384 / 0.85; dsr1_fp8_b200.sh 32768 / 0.82 at TP8, 8192 / 0.95 at TP4, which makes its 10 TP4 rows fit); and
  (added after scoring, session 51) those of Qwen3.5-397B (32768 / 0.82 bf16 and fp8, 16384 / 0.8 NVFP4) and GLM-5
  (32768 / 0.85 fp8, 0.9 NVFP4), where the generator's rule had kept ISL + 1500 and the spec's fraction;
- a run measured on a cold server (added after scoring, cold_server): InferenceX's client had no warm-up before its
  PR #480 (opened 2026-01-17), so an SGLang DeepSeek run on B200 measured before then whose opening burst exceeds
  the recipe's chunked-prefill size ran its first chunked prefill in the measured window, whose FlashInfer kernels
  were fetched at first use (sgl-project/sglang#10933): a one-time download, not a cost whatif prices; those 61
  rows are not scored. The rule reads the date, the burst and the recipe, not the measured latency;
- a cold run on a recipe with symmetric memory (added after scoring, session 56, cold_symmetric_pool): InferenceX's
  dsr1_fp4_b200.sh (not its FP8 recipes) launches --enable-symm-mem, whose NCCL pool grows, a collective window
  registration per new segment (sglang#36943), on the first prefills larger than start-up ran; before the client's
  warm-up (PR #480) that growth fell in the measured window: those 72 NVFP4 rows (24 under the chunk) are not scored.
  The rule reads the date and the recipe, not the measured latency;
- one InferenceX SGLang launch measured two ways on one date (added after scoring, session 55, stp_or_mtp_unknown):
  InferenceX ran dsr1-fp8-b200-sglang and dsr1-fp8-b200-sglang-mtp (single_node/dsr1_fp8_b200_mtp.sh: EAGLE, 2 steps,
  3 draft tokens, top-1) on one image (v0.5.9-cu130, InferenceX issue #1154), so two different measurements of one
  launch (image, layout, precision, lengths, N, date) are one of each and the row does not say which: the 32 such
  DeepSeek-R1 FP8 TP8 rows are not scored. The rule counts measurements, it does not read their values;
- an InferenceX TensorRT-LLM DeepSeek run on the image it ran plain and with MTP (added after scoring, session 56,
  trt_stp_or_mtp_unknown): PR #392 (opened 2026-01-07) added dsr1-fp{4,8}-b200-trt-mtp on release 1.1.0rc2.post2,
  the plain keys' image until PRs #594 / #620 (PR #642 moved the fp4 MTP key "from release:1.1.0rc2.post2"), so the
  32 DeepSeek-R1 rows of that image measured from that date (2026-01-14) are not scored; the rule reads the image
  and the date;
- a gap-analysis row whose attention layout is not recorded (added after scoring, session 56,
  attention_layout_unrecorded): attention_dp_size empty with batch_size x tp_size = N, which the file's own
  convention (batch_size x attention_dp_size = N in 137 of the 138 rows that record attention DP) reads as attention
  DP over the TP ranks and agg_pool reads as a per-GPU batch of a TP replica: the 12 TensorRT-LLM 1.3.0rc rows
  (DeepSeek-R1 / V3.1 NVFP4 on B200, gpt-oss-120b on H100) are not scored;
- InferenceX's vLLM recipes (vllm_recipe, VLLM_RECIPES; added after scoring, session 50, its before/after in the
  commit and the closing note): an aggregated vLLM row from INFERENCEX_SOURCES of a model, precision and GPU whose
  recipe was read (benchmarks/single_node/minimaxm2.5_fp8_{h100,b200}.sh, minimaxm2.5_fp4_b200.sh,
  kimik2.5_{int4,fp4}_b200.sh, gptoss_fp4_{b200,h100}.sh, the stored revision of each; added after scoring,
  session 55: 70b_fp{8,4}_b200_docker.sh at bb4c7f9, whose checkpoint is not read, so those rows keep the rule's
  precision, VLLM_RULE_PRECISION) launches as that recipe:
  its --gpu-memory-utilization, its --max-num-seqs and --max-num-batched-tokens (vLLM's defaults where it sets
  none), and its KV cache dtype: none of them but gptoss_fp4_b200.sh passes --kv-cache-dtype, so vLLM's "auto"
  keeps the checkpoint's: 16-bit for the fp8-block and INT4 checkpoints (none declares a KV dtype) where the rule
  above pairs fp8; fp8 for NVFP4 (assumed declared). Which revision each row ran is not recorded;
  the stored one is taken, but where a recipe changed with its image (added after scoring, session 54,
  VLLM_RECIPE_RELEASES): InferenceX PR #947 moved minimaxm2.5-fp8-b200-vllm to v0.19.0 together with
  --kv-cache-dtype fp8, --max-num-batched-tokens 2 x ISL and --gpu-memory-utilization 0.90, so its 0.19.0
  rows launch that way; the same script at 07e171a tests `[ "$EP_SIZE" -ge 1 ]`, so its v0.17.0 rows (EP 1
  recorded) ran --enable-expert-parallel, EP = TP (added after scoring, session 55, VLLM_ALWAYS_EP; PR #947 made
  it -gt 1); the same script at 07e171a exports VLLM_USE_FLASHINFER_MOE_FP8=0 and VLLM_MOE_USE_DEEP_GEMM=0, so
  its v0.17.0 rows' experts ran vLLM's Triton fused MoE (added after scoring, session 72 B2,
  VLLM_RELEASE_MOE_KERNELS: moe_kernels triton; PR #947 removed both with v0.19.0); kimik2.5_fp4_b200.sh passes no
  --enable-expert-parallel in any launch its v0.17.0 rows ran (added after scoring, session 75 B, VLLM_NEVER_EP), so
  its rows recorded EP 4 run the experts tensor-parallel, as its EP 1 rows;
- the checkpoint those vLLM recipes served, as stored (added after scoring, session 51, vllm_checkpoint; its
  before/after in the commit and the closing note): the model is the recipe's checkpoint (NVIDIA's NVFP4 exports
  for the Kimi-K2.5 and MiniMax-M2.5 nvfp4 rows, InferenceX PR #862 and issue #951) and the rule's weight schemes
  give way to the checkpoint's own (specs/checkpoint_quant.py: attention 16-bit in gpt-oss-120b, both NVFP4 exports
  and Kimi's INT4 release; MiniMax's fp8 rows its 128x128 blocks), but for gpt-oss's experts on B200, which its
  recipe runs as MXFP4 x MXFP8 (the rule's nvfp4 stands in);
- the CUDA-graph mode a vLLM recipe launches with (added after scoring, session 54, VLLM_CUDAGRAPH_MODES): InferenceX's
  minimaxm2.5_fp8_h100.sh (stored revision 34bc7c4) passes --compilation-config '{"cudagraph_mode":"PIECEWISE"}', so
  its rows replay decode batches in graph pieces between eagerly run attention ops (scenario cudagraph_mode
  piecewise, roofline/piecewise_graph.py) instead of vLLM's default FULL_AND_PIECEWISE; gptoss_fp4_h100.sh and the
  other recipes read set no mode (the default); added in session 69: 70b_fp8_h100_slurm.sh at 2a205bb (fp8 KV, 8192
  tokens, --max-num-seqs $CONC) sets none on vllm-openai:v0.10.2 (.github/configs/master.yaml at 78f6b8d), whose
  default was PIECEWISE (vllm-project/vllm#25444 moved it to FULL_AND_PIECEWISE in 0.11.0);
- that H100 Llama-3.1-70B launch as vLLM parsed it (added after scoring, session 74 M, LLAMA70B_H100_AUTO_KV_MAPPED;
  its before/after in docs/accuracy.md): it passes `--config=config.yaml`, which vLLM 0.10.2 accepts but never
  expands (only a bare `--config` token is; vllm-project/vllm#43252), so its rows run the checkpoint's 16-bit KV
  cache and synchronous scheduling; the B200 Llama launches pass `--config config.yaml` and keep their fp8 cache;
- the CUDA-graph capture ceiling a vLLM recipe launches with (added after scoring, session 61, VLLM_CAPTURE_2048;
  its before/after in docs/accuracy.md): vLLM V1 runs a prefill or mixed step of more tokens than its largest
  capture size with no CUDA graph (vllm/v1/cudagraph_dispatcher.py; roofline/graphless_step.py), that size
  min(2 x max_num_seqs, 512) by default, so 8 tokens under a recipe's --max-num-seqs $CONC at 4 clients.
  minimaxm2.5_fp8_b200.sh on v0.19.0 (PR #947) and kimik2.5_fp4_b200.sh from PR #1047 (rows measured from
  2026-04-17) pass --max-cudagraph-capture-size 2048 and --max-num-batched-tokens 2 x ISL: those rows capture
  vLLM's list up to 2,048 tokens at that budget; added in session 69: minimaxm2.5_fp4_b200.sh's v0.19.0 rows (PR
  #996, the same two flags) and gptoss_fp4_b200.sh's v0.15.1 rows (its config.yaml: 2048 at 8,192 tokens a step,
  and fuse_allreduce_rms, VLLM_FUSION_RECIPE_RELEASES); added in session 71: its release-unrecorded 2025-11-02
  rows, whose v0.11-era launch revisions all set the same ceiling and budget, and gptoss_fp4_h100.sh's rows (its
  config.yaml: 2048 at 8,192 tokens a step beside --max-num-seqs $CONC);
- gpt-oss-120b's kernels as each launch picks them (added after scoring, session 53, with its before/after in
  docs/accuracy.md): TensorRT-LLM serves the MXFP4 checkpoint as stored (trtllm_gptoss_checkpoint: attention 16-bit),
  InferenceX's gptoss_fp4_b200_trt.sh with moe_config.backend TRTLLM (moe_kernels trtllm-gen, the nvfp4 stand-in)
  and its --max_num_tokens 20000 / free_gpu_memory_fraction 0.85 (trtllm_gptoss_recipe); vLLM's recipes run the
  TRTLLM-Gen MXFP4 x MXFP8 MoE on B200 (VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8) and the Marlin MoE on H100
  (VLLM_MXFP4_USE_MARLIN=1): VLLM_MOE_KERNELS; since session 61 (added after scoring) the B200 experts of both
  engines name moe_kernels trtllm-gen-mxfp8, those kernels priced by the fit of their own MXFP4 x MXFP8 rows rather
  than the nvfp4 stand-in's (gpt-oss slice, 249 rows: TTFT 30.6% -> 25.7%, TPOT 8.15% -> 11.57%, docs/accuracy.md);
- a vLLM "TP T, EP E" row of InferenceX's 2026-04-06 file recorded as tp_size T x attention_dp_size E with
  moe_ep_size T x E (its id names `_tpT_epE_`; added after scoring, session 51, _vllm_tp_ep_as_dp) maps to TP T,
  EP E on T GPUs, as its 2026-03-25 twin records it; so does a db-dump vLLM row of that shape (added after
  scoring, session 54: MiniMax-M2.5 configs 690/691 are InferenceX PR #1010's tp 2 ep 2 / tp 4 ep 4 entries);
- the client's lengths (client_range_ratio; changed after scoring, with its before/after in docs/accuracy.md):
  InferenceX's client and sa-bench draw every prompt and output length uniform in [0.8 L, L] (InferenceX:
  `--random-range-ratio $RANDOM_RANGE_RATIO`, RANDOM_RANGE_RATIO: 0.8 in .github/workflows/benchmark-tmpl.yml,
  the input's default '0.8', passed by every recipe read (benchmarks/dsr1_fp4_b200.sh, glm5_fp8_b200.sh,
  70b_fp8_h100_slurm.sh); srt-slurm's recipes `random_range_ratio: 0.8` with sa-bench), which the traffic's
  `range_ratio` runs. The first rule kept fixed lengths for them; a first trial of the ratio (a 296-row sample,
  TTFT MAPE 45.6% -> 54.0%) left it out because SGLang's rows fell to x0.2, which pointed at a cost the fixed
  lengths' lockstep had hidden, not at the client. aiperf's rows keep fixed lengths (its --isl / --osl with no
  spread given);
- nothing is fitted on these rows: the H100 and B200 tables are both out of sample (leave-one-GPU-out holds
  trivially; a fit on them would be made on one GPU and scored on the other).

`--subset` runs a deterministic stratified sample (three rows per engine x model x GPU x mode, the smallest
SHA-1s of their ids) in a few minutes (the length range of the InferenceX and sa-bench rows costs ~3x the CPU of
fixed lengths); `--jobs N` runs rows in N processes. Nothing is cached between runs.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import math
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "reference" / "aiconfigurator-serving" / "silicon_calibration.csv"
OUT = Path(__file__).resolve().parent / "data" / "serving_reference.csv"
SYSTEMS = {"h100_sxm": "dgx-h100", "b200_sxm": "dgx-b200"}
GPUS_PER_NODE = {"h100_sxm": 8, "b200_sxm": 8}
NO_FP4_TENSOR_CORES = {"h100_sxm"}
QUANT = {"fp8": "fp8", "fp8_block": "fp8-block", "nvfp4": "nvfp4", "int4_wo": "w4a16", "": None}
PROFILE_ROUNDS = 50        # aiperf --num-requests 50N after a drained warm-up (bench_run.sh.j2)
SA_BENCH_ROUNDS = 10       # srt-slurm sa-bench: --num-prompts 10N after a finished 2N warm-up (bench.sh)
INFERENCEX_ROUNDS = 10     # InferenceX's benchmark_serving.py --num-prompts 10N after 2N drained warm-ups
AIC_EVAL_ROUNDS = 10       # aiconfigurator's eval pipeline: --request-count 10N after --warmup-request-count 2N
SIM_ROUNDS = 6             # rounds of N requests simulated from the opening burst (the rest extrapolated)
SGLANG_CHUNK = 8192        # SGLang's chunked_prefill_size on 80+ GB GPUs (engine_profiles/sglang.yaml)
PER_STRATUM = 3            # --subset: rows per engine x model x GPU x mode
BANDS = ((1, 8, "1-8"), (9, 32, "9-32"), (33, 128, "33-128"), (129, 512, "129-512"), (513, 10 ** 9, ">512"))
COLUMNS = ("id", "model", "system", "engine", "version", "mode", "isl", "osl", "concurrency", "tp", "pp",
           "attention_dp", "ep", "gemm_quant", "moe_quant", "expressible", "scored", "reason",
           "measured_ttft_ms", "measured_tpot_ms", "predicted_ttft_ms", "predicted_tpot_ms", "preemptions",
           "kv_peak_fraction", "seconds")


class NotExpressible(Exception):
    """A row the mapping rule itself cannot state (before whatif is asked)."""


class NotScored(NotExpressible):
    """A row whose measurement or record is not scored (caught wherever NotExpressible is): whatif may still express
    its model, layout and precision (whatif_refusal says)."""


def load(path: Path = DATA) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _int(value: str, default: int = 1) -> int:
    return int(float(value)) if value not in ("", None) else default


def concurrency(row: dict) -> int:
    m = re.search(r"silicon_concurrency=(\d+)", row["silicon_data_source"])
    if not m:
        raise NotScored("no silicon_concurrency=N in silicon_data_source")
    return int(m.group(1))


def band(n: int) -> str:
    return next(name for lo, hi, name in BANDS if lo <= n <= hi)


def _quant(mode: str) -> str | None:
    if mode not in QUANT:
        raise NotExpressible(f"gemm/moe quant mode {mode!r} has no whatif scheme")
    return QUANT[mode]


def row_precision(row: dict) -> dict:
    """The estimate's precision keywords of a row: its gemm scheme (with an fp8 KV cache) and, where they differ, its
    experts' scheme."""
    gemm, moe = (_weight_only_fp4(row, _quant(row[k])) for k in ("gemm_quant_mode", "moe_quant_mode"))
    precision = {"quantization": gemm, "kv_dtype": "fp8"} if gemm else {}
    if moe != gemm:
        precision["expert_quantization"] = moe
    return precision


def _weight_only_fp4(row: dict, name: str | None) -> str | None:
    """nvfp4 on a GPU without fp4 tensor cores, for a model whose checkpoint is MXFP4: the checkpoint's mxfp4."""
    if name != "nvfp4" or row["system"] not in NO_FP4_TENSOR_CORES:
        return name
    from whatif.specs.checkpoint_quant import checkpoint_config, checkpoint_quant
    from whatif.specs.models import load_model
    path = checkpoint_config(row["model_path"])
    found = checkpoint_quant(str(path), load_model(row["model_path"])) if path is not None else None
    return "mxfp4" if found is not None and found.quantization == "mxfp4" else name


LAYOUT_IN_ID = re.compile(r"_tp(\d+)(?:_0)?_ep(\d+)(?:_0)?_")


def _tp_ep_as_product(row: dict, prefix: str, tp: int, moe_tp: int, ep: int) -> bool:
    """A "TP T, EP E" deployment of T GPUs recorded as moe_tp_size T x moe_ep_size E with tp_size (x
    attention_dp_size) = T x E: the row's id names the layout (..._tp8_ep8_...), or the row comes from the
    database dump whose measurements those rows repeat (db-dump, 71 of its 87 such rows are copies)."""
    if prefix or moe_tp <= 1 or ep <= 1 or tp != moe_tp * ep:
        return False
    named = LAYOUT_IN_ID.search(row["id"])
    return (named is not None and (int(named[1]), int(named[2])) == (moe_tp, ep)) or \
        row["silicon_data_source"].startswith("db-dump/")


def _vllm_tp_ep_as_dp(row: dict, prefix: str, tp_size: int, adp: int, moe_tp: int, ep: int) -> bool:
    """A vLLM "TP T, EP E" deployment of T GPUs recorded as tp_size T x attention_dp_size E with moe_ep_size T x E
    (InferenceX's 2026-04-06 file: 40 MiniMax-M2.5 and Kimi-K2.5 rows whose ids name `_tpT_epE_`; their 2026-03-25
    twins record TP T, EP E without attention DP and measure within ~1%, and the recipes launch
    --tensor-parallel-size T, no data parallelism; --enable-expert-parallel the MiniMax ones, none Kimi-K2.5's:
    VLLM_NEVER_EP, session 75 B). Added after scoring, session 51.
    The database dump (db-dump/2026-04-27) writes InferenceX's vLLM rows the same way (added after scoring,
    session 54): its MiniMax-M2.5 fp8 configs 690 (tp 2 x adp 2, moe_ep 4) and 691 (tp 4 x adp 4, moe_ep 16) are
    the "tp: 2, ep: 2" and "tp: 4, ep: 4" entries of InferenceX PR #1010's search space (no dp-attn entry; the
    fp8 recipe, benchmarks/single_node/fixed_seq_len/minimaxm2.5_fp8_b200.sh at 8eec0d4, has no data-parallel
    launch), which the rule had run on 4 and 16 GPUs; the NVFP4 and Kimi-K2.5 rows of that shape take the same
    reading (T GPUs; whether the NVFP4 ones ran --data-parallel-size T, the recipe's dp-attn launch, is not
    recorded: TP T is taken)."""
    if prefix or row["backend"] != "vllm" or adp <= 1 or moe_tp > 1:
        return False
    if row["silicon_data_source"].startswith("db-dump/"):
        return ep == tp_size * adp
    named = LAYOUT_IN_ID.search(row["id"])
    return named is not None and (tp_size, adp, ep) == (int(named[1]), int(named[2]), int(named[1]) * int(named[2]))


def _layout(row: dict, prefix: str = "") -> dict:
    """tp / pp / attention_dp / ep / moe_tp of the row's (or its prefill/decode pool's) layout, by the rule."""
    g = lambda k, d=1: _int(row.get(prefix + k, ""), d)   # noqa: E731
    adp = g("attention_dp_size")
    tp = g("tp_size") * adp
    ep, moe_tp = g("moe_ep_size"), g("moe_tp_size")
    if _tp_ep_as_product(row, prefix, tp, moe_tp, ep):
        tp, adp, moe_tp = moe_tp, (moe_tp if adp > 1 else 1), moe_tp // ep
    elif _vllm_tp_ep_as_dp(row, prefix, g("tp_size"), adp, moe_tp, ep):
        tp, adp, ep = g("tp_size"), 1, adp
    out = {"tp": tp, "pp": g("pp_size")}
    if adp > 1:
        out["attention_dp"] = adp
    if ep > 1 and ep * moe_tp == tp:   # (moe_tp is then the default tp / ep; no MoE layout otherwise)
        out["ep"] = ep
    return out


def launch_settings(row: dict, n: int, ranks_recorded: int = 1) -> dict:
    """The scheduler limits aiconfigurator's generator launches an aggregated worker with (rule_plugin/
    {trtllm,vllm,sglang}.rule and benchmark/*.rule): max batch = the configuration's batch size (agg_pool;
    disagg_max_batch), a token budget of max batch + ISL + 1500 (TensorRT-LLM max_num_tokens, rounded up to
    its 32-token blocks; vLLM --max-num-batched-tokens), so a whole prompt always fits beside the running
    decodes; SGLang: --max-prefill-tokens ISL + 1500 (within its 8192-token chunked-prefill size) for its
    prefill batches, which run apart from the decodes, SGLang's default. sglang.rule also asks for
    --enable-mixed-chunk, but two of the generator's SGLang templates (cli_args.j2 at aiconfigurator 5dc6d4f,
    cli_args.0.5.1.post1.j2) test sglang['enable-mix-chunk'], a key backend_config_mapping.yaml never writes (it
    maps enable_mixed_chunk to 'enable-mixed-chunk'), so with them the flag is not passed; later templates
    (cli_args.j2 at e1d216d, cli_args.0.5.6.post2.j2) pass it. Which one a row's deployment used is not
    recorded: the rule takes the release default. Changed after scoring (the first rule mixed the chunks), on
    the measured split of SGLang's rows, with its before/after in docs/accuracy.md. `ranks_recorded`: the
    attention-DP ranks a layout recorded as a product shows per real rank (the row's batch_size is per recorded
    rank: N / (T x E); a real rank's is N / T, InferenceX's CONC / TP)."""
    mbs = disagg_max_batch(row, n) if row["mode"] == "disagg" else agg_pool(row, n)[1] * ranks_recorded
    if row["backend"] not in ("trtllm", "vllm", "sglang"):
        return {}
    recipe = inferencex_sglang_launch(row)
    if recipe:
        return {"max_num_seqs": mbs, "max_num_batched_tokens": recipe[0], "memory_utilization": recipe[1]}
    out = {"max_num_seqs": mbs, "max_num_batched_tokens": token_budget(row["backend"], mbs, _int(row["isl"]))}
    fraction = trtllm_template_kv_fraction(row)
    if fraction is None:
        fraction = sglang_default_mem_fraction(row, mbs)
    if fraction is not None:
        out["memory_utilization"] = fraction
    return out


# aiconfigurator generator/config/backend_templates/trtllm/extra_engine_args.1.0.0rc3.yaml.j2 (commit 71a2b03):
# `free_gpu_memory_fraction: {{ kv_cache_config.free_gpu_memory_fraction | default(0.80) }}`; neither
# rule_plugin/trtllm.rule nor rule_plugin/benchmark/trtllm.rule sets it, so a 1.0.0rc3 worker got 0.80 (the spec: 0.9).
TRTLLM_TEMPLATE_KV_FRACTION = {"1.0.0rc3": 0.80}


def trtllm_template_kv_fraction(row: dict) -> float | None:
    """The KV-cache fraction of free memory the generator's extra-engine-args template of the row's TensorRT-LLM
    release writes by default (TRTLLM_TEMPLATE_KV_FRACTION), for an aggregated row the generator launched (not an
    InferenceX recipe's); None elsewhere (the spec's 0.9). Added after scoring (session 52), with its before/after
    in docs/accuracy.md; whether the gap-analysis launches overrode the default is not recorded."""
    if row["backend"] != "trtllm" or row["mode"] != "agg" or inferencex_run(row):
        return None
    return TRTLLM_TEMPLATE_KV_FRACTION.get(row.get("backend_version", ""))


# The GPU memory SGLang reads (get_device_memory_capacity, MiB): the driver totals of whatif's hardware profiles
# (hardware_profiles/h100-sxm.yaml 81559, b200.yaml 183359).
DRIVER_MIB = {"h100_sxm": 81559, "b200_sxm": 183359}
SGLANG_HEURISTIC_SINCE = (0, 5, 3)   # sgl-project/sglang PR #10975 (merged 2025-09-27), first in release 0.5.3


def _release(version: str) -> tuple[int, ...] | None:
    m = re.match(r"(\d+)\.(\d+)\.(\d+)", version or "")
    return tuple(int(x) for x in m.groups()) if m else None


def sglang_default_mem_fraction(row: dict, max_batch: int) -> float | None:
    """SGLang's own --mem-fraction-static where the launch passes none (added after scoring, session 53, issue 37):
    an aggregated SGLang row the generator launched (not an InferenceX recipe's, which set it) on a release with
    PR #10975's heuristic (python/sglang/srt/server_args.py _handle_gpu_memory_settings): reserved MiB = 512 +
    max(chunked_prefill_size, 2048) x 1.5 + cuda_graph_max_bs x 2 + tp x pp / 8 x 1024, at least 10 GiB on a GPU
    over 60 GiB, fraction = (gpu_mem - reserved) / gpu_mem (3 decimals). chunked_prefill_size is its default by GPU
    memory (8192 under 160 GiB, 16384 above; the generator passes none), cuda_graph_max_bs the largest of the
    --cuda-graph-bs 1..max batch sglang.rule passes. Not counted: the piecewise-CUDA-graph term (opt-in
    --enable-piecewise-cuda-graph; assumed off). None elsewhere (the spec's fraction_by_tp, the pre-0.5.3 table)."""
    release = _release(row.get("backend_version", ""))
    if row["backend"] != "sglang" or row["mode"] != "agg" or inferencex_run(row) or release is None \
            or release < SGLANG_HEURISTIC_SINCE or row["system"] not in DRIVER_MIB:
        return None
    gpu_mem = DRIVER_MIB[row["system"]]
    chunk = 8192 if gpu_mem < 160 * 1024 else 16384
    gpus = _int(row.get("tp_size", ""), 1) * (_int(row.get("attention_dp_size", ""), 1) or 1) \
        * _int(row.get("pp_size", ""), 1)
    reserved = 512 + max(chunk, 2048) * 1.5 + max_batch * 2 + gpus / 8 * 1024
    if gpu_mem > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mem - reserved) / gpu_mem, 3)


def token_budget(engine: str, batch: int, isl: int) -> int:
    """The generator's token budget: batch + ISL + 1500 (TensorRT-LLM's max_num_tokens rounded up to its 32-token
    blocks; vLLM's --max-num-batched-tokens); SGLang's --max-prefill-tokens ISL + 1500 within its chunk size."""
    if engine == "sglang":
        return min(SGLANG_CHUNK, isl + 1500)
    tokens = batch + isl + 1500
    return -(-tokens // 32) * 32 if engine == "trtllm" else tokens


def agg_pool(row: dict, n: int) -> tuple[int, int]:
    """(replicas, max batch per rank) of an aggregated row. batch_size is the concurrency each attention-DP rank
    serves (batch_size x ranks = N) in every source but the TensorRT-LLM 1.3.0rc gap-analysis files
    (DeepSeek-R1/V3.1-NVFP4, Qwen3-32B-NVFP4, gpt-oss-120b), where batch_size x the replica's GPUs divides N: a
    per-GPU figure, so a replica serves batch_size x its GPUs and N / that replicas run (1 for every such row but
    Qwen3-32B-NVFP4's, whose 416 clients of 15,500 tokens at 13 per GPU are 16 TP2 replicas; one TP2 replica could
    not hold their KV). Rule changed after the first scoring, which took batch_size as one replica's max batch
    and so queued 3/4 to 31/32 of those rows' clients."""
    bs = _int(row.get("batch_size", ""), 0)
    ranks = _int(row.get("attention_dp_size", ""), 1) or 1
    if not bs or bs * ranks >= n:
        return 1, max(bs, -(-n // ranks))
    per_replica = bs * _int(row.get("tp_size", ""), 1) * ranks * _int(row.get("pp_size", ""), 1)
    if n % per_replica:
        raise NotScored(f"batch_size {bs} x the replica's GPUs does not divide the concurrency {n}")
    return n // per_replica, per_replica // ranks


# The srt-slurm recipes the db-dump TensorRT-LLM disaggregated rows ran (added after scoring, session 54, with its
# before/after in docs/accuracy.md): InferenceX's .github/configs/nvidia-master.yaml (dsr1-fp4-b200-dynamo-trt,
# dsr1-fp8-b200-dynamo-trt) names a CONFIG_FILE per conc-list, and each recipe file states its container
# (tensorrtllm-runtime 0.8.1.post3 for H100), pools and `benchmark.concurrencies`; read at connorcarpenter15/srt-slurm
# 5a156f6 (recipes/trtllm/..., the sa-submission-q1-2026 files; ishandhanani/srt-slurm 51962c0 has the same H100 ones).
# The row's decode_batch_size is N / (workers x ranks) whatever the launch; the recipe's gen max_batch_size is what
# the engines ran (per attention-DP rank), e.g. h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch1: 3 slots for 6 clients.
# Key: (system, gemm quant, ISL, prefill workers, decode workers, decode attention DP) -> {concurrency: (decode
# max_batch_size, prefill max_batch_size, prefill max_num_tokens, recipe)}.
SRT_SLURM_TRTLLM = {
    ("b200_sxm", "nvfp4", 1024, 1, 5, False): dict.fromkeys(
        (10, 15, 25, 45, 90, 180), (32, 8, 10240, "b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0")),
    ("b200_sxm", "nvfp4", 1024, 1, 6, False): {
        450: (64, 8, 10240, "b200-fp4/1k1k/stp/ctx1_gen6_tep8_batch64_eplb0_mtp0")},
    ("b200_sxm", "nvfp4", 1024, 1, 2, True): {
        2192: (128, 8, 10240, "b200-fp4/1k1k/stp/ctx1_gen2_dep8_batch128_eplb0_mtp0")},
    ("b200_sxm", "nvfp4", 1024, 1, 1, True): {
        4096: (512, 8, 10240, "b200-fp4/1k1k/stp/ctx1_gen1_dep8_batch512_eplb0_mtp0")},
    ("b200_sxm", "nvfp4", 8192, 1, 5, False): dict.fromkeys(
        (10, 15, 25, 50, 100), (16, 2, 16896, "b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0")),   # (16 inside)
    ("b200_sxm", "nvfp4", 8192, 2, 5, False): {
        370: (64, 2, 16896, "b200-fp4/8k1k/stp/ctx2_gen5_tep8_batch64_eplb0_mtp0")},
    ("b200_sxm", "fp8", 1024, 1, 5, True): {
        1920: (48, 16, 16384, "b200-fp8/1k1k/stp/ctx1_gen5_dep8_batch48_eplb0_mtp0_1920")},
    ("b200_sxm", "fp8", 1024, 1, 1, True): {
        4096: (512, 16, 16384, "b200-fp8/1k1k/stp/ctx1_gen1_dep8_batch512_eplb0_mtp0_4096")},
    ("b200_sxm", "fp8", 8192, 1, 1, False): {
        1: (1, 64, 8320, "b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1")},
    ("b200_sxm", "fp8", 8192, 1, 4, False): {
        32: (8, 1, 8320, "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_32"),   # (8 inside)
        128: (32, 1, 8320, "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_128")},
    ("b200_sxm", "fp8", 8192, 1, 6, False): {
        96: (16, 1, 8320, "b200-fp8/8k1k/stp/ctx1_gen6_tp8_batch16_eplb0_mtp0_96")},
    ("b200_sxm", "fp8", 8192, 1, 2, True): {
        128: (64, 1, 8320, "b200-fp8/8k1k/stp/ctx1_gen2_dep8_batch64_eplb0_mtp0_128")},
    ("b200_sxm", "fp8", 8192, 1, 1, True): {
        128: (128, 1, 8320, "b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch128_eplb0_mtp0_128"),
        256: (256, 1, 8320, "b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch256_eplb0_mtp0_256")},
    ("b200_sxm", "fp8", 8192, 2, 1, True): {
        640: (640, 1, 8320, "b200-fp8/8k1k/stp/ctx2_gen1_dep8_batch640_eplb0_mtp0_640")},
    ("h100_sxm", "fp8", 1024, 1, 3, False): {
        6: (1, 2, 2048, "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch1_eplb0_mtp0"),
        9: (2, 2, 2048, "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch2_eplb0_mtp0"),
        30: (8, 2, 2048, "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch8_eplb0_mtp0"),
        60: (16, 2, 2048, "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch16_eplb0_mtp0")},
    ("h100_sxm", "fp8", 8192, 1, 3, False): {
        6: (1, 1, 8224, "h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch1_eplb0_mtp0"),
        9: (2, 1, 8224, "h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch2_eplb0_mtp0"),
        30: (8, 1, 8224, "h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch8_eplb0_mtp0")},
    ("h100_sxm", "fp8", 8192, 1, 2, False): {
        154: (64, 1, 8224, "h100-fp8/8k1k/stp/ctx1_gen2_tep16_batch64_eplb0_mtp0")},
}
SRT_SLURM_TRTLLM_MAPPED = True   # False: the generator's rule (decode_batch_size, prefill 1 x ISL + 1500) as before


def srt_slurm_trtllm_recipe(row: dict) -> tuple[int, int, int, str] | None:
    """(decode max_batch_size per rank, prefill max_batch_size per rank, prefill max_num_tokens, recipe) of the
    srt-slurm recipe a db-dump TensorRT-LLM disaggregated row ran (SRT_SLURM_TRTLLM; added after scoring, session 54),
    matched on GPU, precision, ISL, both pools' worker counts, decode attention DP and the recipe's concurrency; None
    for any other row (the generator's rule)."""
    if not SRT_SLURM_TRTLLM_MAPPED or row["backend"] != "trtllm" or row["mode"] != "disagg" \
            or not row["silicon_data_source"].startswith("db-dump/") or not row.get("prefill_num_workers"):
        return None
    key = (row["system"], row["gemm_quant_mode"], _int(row["isl"]), _int(row["prefill_num_workers"]),
           _int(row["decode_num_workers"]), (_int(row.get("decode_attention_dp_size", ""), 1) or 1) > 1)
    return SRT_SLURM_TRTLLM.get(key, {}).get(concurrency(row))


# The srt-slurm recipes the db-dump SGLang disaggregated rows ran (added after scoring, session 55, with its
# before/after in docs/accuracy.md): NVIDIA/srt-slurm at 5917791, recipes/b200-fp4/{1k1k,8k1k}.yaml (the STP
# variants: stp_maxtpt 1d / 2d at 512; override_stp_tp4 at 4-64; stp_lowlat[0] 1p1d at 64 / 128;
# override_stp_maxtpt_7p2d at 1024 / 2048) and recipes/b200-fp8/8k1k_stp_{lowlat_1,maxtpt_0..3}.yaml (1p4d TP8 at
# 128; dep8 1p2d at 288, 1p1d at 160 / 288, 2p1d at 512, 3p1d at 1024), matched on GPU, precision, ISL, both pools'
# worker counts, each pool's attention DP and the recipe's `benchmark.concurrencies`. The SGLang flags are the
# worker's (the whole attention-DP group's): SGLang divides --max-running-requests by dp_size per rank
# (model_runner: max_running_requests // dp_size) and --chunked-prefill-size by dp_size (server_args
# _handle_data_parallelism), as whatif's GROUP_LIMITS split them. The decode max-running-requests is below N /
# workers in two (cfg641 at 288 clients: 256 slots; cfg649: 2 x 128 at 288). The 1k fp8 row matches no file read and
# keeps the generator's rule. The Feb fp8 runs (measured 2026-02-07, v0.5.8.post1) are ishandhanani/srt-slurm's B200
# fp8 8k STP sweep (session 69 L): recipes/b200-fp8/8k1k-stp.yaml at 89654bc (prefill TP8 EP8, --max-running-requests
# 512, --chunked-prefill-size 32768; decode TP8 EP8 512; flashinfer_trtllm MoE, no --moe-a2a-backend;
# zip_override_scale 1p1d at "4x32x64" = cfg455, 1p4d at "64" = cfg453) and
# recipes/b200-fp8/8k1k/stp/max-tpt-dep8-1p1d.yaml at 4aa224c (both pools DP attention 8 with EP 8; prefill 16
# requests, chunk 131072, decode 1024; at "128" = cfg457). cfg459 (2p1d, prefill DP attention) matches neither (that
# file's 2p1d keeps a TP8 prefill) and keeps the rule.
# Key: (system, gemm quant, ISL, prefill workers, decode workers, prefill attention DP, decode attention DP) ->
# {concurrency: (decode max-running-requests, prefill max-running-requests, prefill chunked-prefill-size, recipe)}.
SRT_SLURM_SGLANG = {
    ("b200_sxm", "nvfp4", 1024, 1, 1, True, True): {512: (1024, 1024, 32768, "b200-fp4/1k1k.yaml stp_maxtpt[0]")},
    ("b200_sxm", "nvfp4", 1024, 1, 2, True, True): {512: (512, 512, 32768, "b200-fp4/1k1k.yaml stp_maxtpt[1]")},
    ("b200_sxm", "nvfp4", 8192, 1, 1, False, False): dict.fromkeys(
        (4, 8, 16, 64), (512, 512, 32768, "b200-fp4/8k1k.yaml override_stp_tp4")),
    ("b200_sxm", "nvfp4", 8192, 1, 1, True, False): dict.fromkeys(
        (64, 128), (512, 512, 32768, "b200-fp4/8k1k.yaml stp_lowlat[0]")),
    ("b200_sxm", "nvfp4", 8192, 7, 2, True, True): dict.fromkeys(
        (1024, 2048), (2048, 1024, 65536, "b200-fp4/8k1k.yaml override_stp_maxtpt_7p2d")),
    ("b200_sxm", "fp8", 8192, 1, 4, True, False): {128: (32, 8, 65536, "b200-fp8/8k1k_stp_lowlat_1.yaml")},
    ("b200_sxm", "fp8", 8192, 1, 2, True, True): {288: (128, 8, 65536, "b200-fp8/8k1k_stp_maxtpt_0.yaml")},
    ("b200_sxm", "fp8", 8192, 1, 1, True, True): {
        **dict.fromkeys((160, 288), (256, 8, 65536, "b200-fp8/8k1k_stp_maxtpt_1.yaml")),
        128: (1024, 16, 131072, "ishandhanani 4aa224c b200-fp8/8k1k/stp/max-tpt-dep8-1p1d.yaml")},
    ("b200_sxm", "fp8", 8192, 1, 1, False, False): dict.fromkeys(
        (4, 32, 64), (512, 512, 32768, "ishandhanani 89654bc b200-fp8/8k1k-stp.yaml scale[0] 1p1d")),
    ("b200_sxm", "fp8", 8192, 1, 4, False, False): {
        64: (512, 512, 32768, "ishandhanani 89654bc b200-fp8/8k1k-stp.yaml scale[1] 1p4d")},
    ("b200_sxm", "fp8", 8192, 2, 1, True, True): {512: (512, 8, 65536, "b200-fp8/8k1k_stp_maxtpt_2.yaml")},
    ("b200_sxm", "fp8", 8192, 3, 1, True, True): {1024: (1024, 8, 65536, "b200-fp8/8k1k_stp_maxtpt_3.yaml")},
}
SRT_SLURM_SGLANG_MAPPED = True   # False: the generator's rule (decode_batch_size x ranks, prefill 1 x ranks) as before


def srt_slurm_sglang_recipe(row: dict) -> tuple[int, int, int, str] | None:
    """(decode max-running-requests, prefill max-running-requests, prefill chunked-prefill-size, recipe) of the
    srt-slurm recipe a db-dump SGLang disaggregated row ran, each the worker's (its attention-DP group's) figure
    (SRT_SLURM_SGLANG; added after scoring, session 55); None for any other row (the generator's rule)."""
    if not SRT_SLURM_SGLANG_MAPPED or row["backend"] != "sglang" or row["mode"] != "disagg" \
            or not row["silicon_data_source"].startswith("db-dump/") or not row.get("prefill_num_workers"):
        return None
    key = (row["system"], row["gemm_quant_mode"], _int(row["isl"]), _int(row["prefill_num_workers"]),
           _int(row["decode_num_workers"]), (_int(row.get("prefill_attention_dp_size", ""), 1) or 1) > 1,
           (_int(row.get("decode_attention_dp_size", ""), 1) or 1) > 1)
    return SRT_SLURM_SGLANG.get(key, {}).get(concurrency(row))


def disagg_max_batch(row: dict, n: int) -> int:
    """A disaggregated row's max batch: decode_batch_size (per attention-DP rank), x the ranks for an engine whose
    limits are the whole group's (SGLang); N where the row has none; the gen max_batch_size of the srt-slurm recipe
    a db-dump TensorRT-LLM row ran (srt_slurm_trtllm_recipe; added after scoring, session 54)."""
    recipe = srt_slurm_trtllm_recipe(row) or srt_slurm_sglang_recipe(row)
    if recipe:   # (SGLang's is the worker's --max-running-requests, which GROUP_LIMITS split over its ranks)
        return recipe[0]
    per_rank = _int(row.get("decode_batch_size", ""), 0)
    if not per_rank:
        return n
    ranks = _int(row.get("decode_attention_dp_size", ""), 1) or 1
    return per_rank * ranks if row["backend"] == "sglang" else per_rank


def prefill_pool(row: dict) -> dict:
    """The prefill pool's ClusterConfig fields, by the rule (each given, so none is inherited from the decode pool)."""
    pre = _layout(row, "prefill_")
    adp = pre.get("attention_dp", 1)
    if 1 < adp < pre["tp"]:
        raise NotExpressible(f"prefill pool: attention-DP of {adp} ranks over a TP group of {pre['tp']} "
                             "(whatif's prefill_dp_attention is on/off: ranks = the TP group)")
    return {"prefill_replicas": _int(row["prefill_num_workers"]), "prefill_tp": pre["tp"],
            "prefill_pp": pre["pp"], "prefill_ep": pre.get("ep", 1), "prefill_dp_attention": adp > 1,
            **prefill_limits(row, adp)}


def prefill_limits(row: dict, ranks: int) -> dict:
    """The prefill workers' own limits as the generator launches them (benchmark/{trtllm,vllm,sglang}.rule):
    max_batch_size = the row's prefill_batch_size (the rules' default 1 where it has none; per attention-DP rank,
    so x the ranks for SGLang, whose limits are the group's), max_num_tokens ISL + 1500 (TensorRT-LLM's rounded up
    to its 32-token blocks; SGLang's --max-prefill-tokens within its 8192-token chunked-prefill size)."""
    recipe = srt_slurm_trtllm_recipe(row)
    if recipe:   # (the srt-slurm recipe's ctx max_batch_size and max_num_tokens, per rank; added after scoring)
        return {"prefill_max_batch": recipe[1], "prefill_token_budget": recipe[2]}
    recipe = srt_slurm_sglang_recipe(row)
    if recipe:   # (the srt-slurm recipe's prefill --max-running-requests and --chunked-prefill-size, the worker's;
        # added after scoring, session 55)
        return {"prefill_max_batch": recipe[1], "prefill_token_budget": recipe[2]}
    batch = _int(row.get("prefill_batch_size", ""), 0) or 1
    engine = row["backend"]
    return {"prefill_max_batch": batch * ranks if engine == "sglang" else batch,
            "prefill_token_budget": token_budget(engine, 0, _int(row["isl"]))}   # max_num_tokens ISL + 1500


# InferenceX's multi-node disaggregated DeepSeek-R1 search spaces (nvidia-master.yaml at 0004cf5f2577), one line per
# entry with its srt-slurm recipe's name (added after scoring, session 54; inferencex_disagg_launch)
INFERENCEX_DISAGG_LAUNCHES = Path(__file__).parent / "data" / "inferencex_disagg_launches.csv"
INFERENCEX_DISAGG_COMMIT = "0004cf5"
# Off by default (session 54): the 100 rows it launches (up to N = 10,860, ~1.4 CPU-hours together) would more than
# double the whole-file run; their figures with it on are in docs/accuracy.md (helper I)
INFERENCEX_DISAGG_MAPPED = False
_DISAGG_LAUNCHES: list = []
_LAUNCH_FIELDS = ("prefill_workers", "prefill_tp", "prefill_ep", "prefill_dp_attn", "decode_workers", "decode_tp",
                  "decode_ep", "decode_dp_attn", "mtp", "decode_batch")


def inferencex_disagg_launch(row: dict) -> dict:
    """The launch of a disaggregated InferenceX row that records no worker counts (added after scoring, session 54,
    issues 37/38): the entries of InferenceX's .github/configs/nvidia-master.yaml (SemiAnalysisAI/InferenceX at
    0004cf5; INFERENCEX_DISAGG_LAUNCHES) for the row's Dynamo image, ISL/OSL and N whose prefill and decode TP are
    the row's (its recorded EP is not compared: the NVFP4 rows record decode EP 4 where every entry runs EP 8, and the
    same fp8 entries' runs record EP 8 on 2026-02-12 and EP 1 on 2026-03-23). One launch where they all agree:
    prefill and decode workers, each pool's TP / EP / dp-attn, MTP next-n K and the decode max_batch_size from the
    entry's srt-slurm recipe name (..._batchB_..._mtpK); NotExpressible where none matches or the entries differ
    (an MTP and a non-MTP run at one N: the row does not say which it was)."""
    if not _DISAGG_LAUNCHES:
        with open(INFERENCEX_DISAGG_LAUNCHES, newline="") as f:
            _DISAGG_LAUNCHES.extend(csv.DictReader(line for line in f if not line.startswith("#")))
    n = str(concurrency(row))
    image = re.search(r"image=([^;]*)", row["silicon_data_source"])
    found = [e for e in _DISAGG_LAUNCHES if image and image[1].strip().endswith("/" + e["image"])
             and (e["isl"], e["osl"]) == (row["isl"], row["osl"]) and n in e["concurrencies"].split()
             and int(e["prefill_tp"]) == _int(row["prefill_tp_size"])
             and int(e["decode_tp"]) == _int(row["decode_tp_size"])]
    if not found and row["backend"] == "sglang":
        raise NotScored("the row records no prefill_num_workers / decode_num_workers: pool sizes unknown "
                        "(InferenceX's dsr1-*-dynamo-sglang search spaces, whose recipes' MTP depth and limits "
                        "were not read, are not mapped)")
    if not found:
        raise NotScored("the row records no prefill_num_workers / decode_num_workers, and InferenceX's "
                        f"nvidia-master.yaml ({INFERENCEX_DISAGG_COMMIT}) has no entry for its image, lengths, N "
                        "and TP: pool sizes unknown")
    launches = {tuple(int(e[k]) for k in _LAUNCH_FIELDS) for e in found}
    if len(launches) > 1:
        raise NotScored(f"InferenceX's nvidia-master.yaml ({INFERENCEX_DISAGG_COMMIT}) ran {len(found)} launches "
                        f"at N={n} ({', '.join(e['recipe'] for e in found)}); the row does not say which")
    return dict(zip(_LAUNCH_FIELDS, launches.pop()), recipe=found[0]["recipe"])


def disagg_launch_layout(launch: dict, pool: str) -> dict:
    """A pool's whatif layout from an InferenceX launch: TP over all its GPUs, attention DP over them with dp-attn,
    EP where the entry sets one."""
    tp, ep = launch[f"{pool}_tp"], launch[f"{pool}_ep"]
    out = {"tp": tp, "pp": 1}
    if launch[f"{pool}_dp_attn"]:
        out["attention_dp"] = tp
    if ep > 1:
        out["ep"] = ep
    return out


def launch_pools(row: dict, launch: dict) -> dict:
    """The prefill pool's ClusterConfig fields and the decode replicas of an InferenceX launch (prefill limits as
    prefill_limits: the recipes' own prefill max_batch_size / max_num_tokens are not mapped)."""
    pre = disagg_launch_layout(launch, "prefill")
    return {"prefill_replicas": launch["prefill_workers"], "prefill_tp": pre["tp"], "prefill_pp": 1,
            "prefill_ep": pre.get("ep", 1), "prefill_dp_attention": "attention_dp" in pre,
            **prefill_limits(row, pre.get("attention_dp", 1)), "replicas": launch["decode_workers"]}


_MEASURED: dict = {}


def _measurement(row: dict) -> tuple:
    measured = (f"{float(row[k]):.9g}" for k in ("silicon_ttft_ms", "silicon_tpot_ms"))   # (copies: last bit differs)
    return (row["backend"], row["system"], row["isl"], row["osl"], *measured)


def repeated_measurement(row: dict) -> str:
    """The id of the disaggregated db-dump row with worker counts whose engine, GPU, lengths and measured TTFT and
    TPOT (to 9 significant digits) this row repeats, or ''."""
    if not _MEASURED:
        _MEASURED.update({_measurement(r): r["id"] for r in load() if r["mode"] == "disagg"
                          and r["prefill_num_workers"] and r["silicon_data_source"].startswith("db-dump/")})
    return _MEASURED.get(_measurement(row), "")


def served_concurrency(row: dict) -> float:
    """Requests in service that a closed loop of N clients at the row's measured means implies (Little's law): each
    client spends TTFT waiting and D = (OSL - 1) x TPOT decoding, so N x D / (TTFT + D) are decoding at a time."""
    decode = (_int(row["osl"]) - 1) * float(row["silicon_tpot_ms"])
    return concurrency(row) * decode / (float(row["silicon_ttft_ms"]) + decode)


def _run_key(row: dict) -> tuple:
    measured = re.search(r"measured=([^;]*)", row["silicon_data_source"])
    return (row["backend"], row["backend_version"], row["system"], row["model_path"], row["mode"],
            row["silicon_data_source"].split(";")[0], measured[1] if measured else "", concurrency(row))


CAP_SPREAD = 1.25   # in-service counts within 25% of each other at TP sizes 2x apart: not the KV pool's limit
_RUNS: dict = {}


def capped_below_load(row: dict) -> str:
    """'' or why an aggregated row did not serve the load it records: the rows of one run (engine and version, GPU,
    model, source file, measurement date, N) at TP sizes at least 2x apart all imply (served_concurrency) fewer
    than N/2 requests in service, within CAP_SPREAD of each other. A deployment's own limits on requests in service
    are its launch's max batch (the row's batch_size) and its KV pool, which grows with TP; a count that stays put
    while the pool grows 2x is a cap outside the deployment (the client's), so the row's TTFT times a client queue
    and its TPOT a smaller batch than N. The rule flags one group: InferenceX's gpt-oss-120b vLLM rows on H100 at
    512 clients (2025-12, TP2/4/8, ~100 in service in all nine), whose recipe launched --max-num-seqs = CONC."""
    if row["mode"] != "agg":
        return ""
    if not _RUNS:
        for r in load():
            try:
                if r["mode"] == "agg":
                    _RUNS.setdefault(_run_key(r), []).append((_int(r["tp_size"]), served_concurrency(r)))
            except NotExpressible:
                continue
    n = concurrency(row)
    runs = _RUNS.get(_run_key(row), [])
    tps, served = {tp for tp, _ in runs}, [s for _, s in runs]
    if len(runs) < 2 or max(tps) < 2 * min(tps) or max(served) >= n / 2 or max(served) > CAP_SPREAD * min(served):
        return ""
    return (f"measured with ~{statistics.fmean(served):.0f} of its {n} clients in service (Little's law on its "
            f"TTFT and TPOT) at TP {'/'.join(map(str, sorted(tps)))} alike: a cap outside the deployment, not scored")


MTP_IMAGE = "tensorrt-llm/release:1.2.0rc6.post3"   # InferenceX's dsr1-*-b200-trt-mtp image (off: 1.2.0rc6.post2)
# The acceptance InferenceX's MTP runs see (added after scoring, session 55; before/after in docs/accuracy.md): its
# MTP recipes send random token ids wrapped in the chat template (dsr1_fp8_b200_trt_mtp.sh at 111f031 / 7506aee:
# run_benchmark_serving --use-chat-template), on which DeepSeek-R1's MTP drafts 2.50 tokens a round ("AR ~2.50",
# as on MT-Bench; ~3.55 without the template: InferenceX PR #649, 2026-02-05, the reason the flag was added),
# where whatif's default 0.85 a draft gives 3.19 at 3 drafts. Read as one acceptance per draft (chain_alpha: 0.69,
# the mtp technique's own assumption that deeper drafts accept alike), so 1.69 a round at 1 draft.
# Taken for Qwen3.5's -mtp key as well (session 56): the same client and draft count; no acceptance of Qwen3.5's MTP
# on that client is published (its "golden" 3.39 at 3 drafts is thinking-on agentic traffic, sglang PR #35194).
INFERENCEX_MTP_ACCEPT_LENGTH = (2.50, 3)   # (tokens a round, drafts) of PR #649's DeepSeek-R1 MTP runs
INFERENCEX_MTP_ACCEPTANCE_MAPPED = True


# InferenceX's Qwen3.5-397B FP8 B200 SGLang keys (added after scoring, session 56; before/after in docs/accuracy.md):
# the plain key qwen3.5-fp8-b200-sglang searched TP4 EP4 and TP8 EP1 (PR #804, 2026-02-26: 1k/1k TP4 EP4, 1k/8k and
# 8k/1k TP8 EP1 and TP4 EP4, conc 4-64; PR #918 "Replace FP8 with combination of TP4 and TP8 config", the 2026-03-24
# runs), while qwen3.5-fp8-b200-sglang-mtp (PR #898, perf-changelog: "EAGLE speculative decoding: num-steps 3,
# draft-tokens 4, topk 1", single_node/qwen3.5_fp8_b200_mtp.sh) searched TP4 EP1 alone at conc 4-512 (its WIP
# PR #897, nvidia-master.yaml: "{ tp: 4, ep: 1, conc-start: 4, conc-end: 512, spec-decoding: mtp }"). So a 0.5.9
# FP8 TP4 EP1 row (the 2026-03-20 run, 4-256 clients, and the gap-analysis rows copying it) is the -mtp key: a chain
# of 3 drafts of the checkpoint's MTP layer, at the acceptance InferenceX's chat-templated random prompts give.
QWEN35_MTP_KEY_MAPPED = True


def qwen35_mtp_key(row: dict, layout: dict) -> bool:
    """A row of InferenceX's qwen3.5-fp8-b200-sglang-mtp key (QWEN35_MTP_KEY_MAPPED): SGLang 0.5.9, Qwen3.5, fp8,
    TP4 without EP, InferenceX's run. Reads the launch fields, not the measurement."""
    return (QWEN35_MTP_KEY_MAPPED and row["backend"] == "sglang" and "qwen3.5" in row["model_path"].lower()
            and row["gemm_quant_mode"] == "fp8" and row.get("backend_version") == "0.5.9"
            and layout["tp"] == 4 and layout.get("ep", 1) == 1 and layout.get("attention_dp", 1) == 1
            and inferencex_run(row))


def speculation(row: dict, layout: dict) -> str | None:
    """The speculative decoding a row ran, where its record shows it: TensorRT-LLM DeepSeek rows on the
    InferenceX MTP image run MTP with num_nextn_predict_layers 3, or 1 under attention DP
    (benchmarks/dsr1_fp4_b200_trt_mtp.sh); Qwen3.5 FP8 SGLang rows of the -mtp key (qwen35_mtp_key) EAGLE over the
    MTP layer, 3 steps top-1; whatif's `mtp` technique with that k, at the acceptance InferenceX's
    chat-templated random prompts give (INFERENCEX_MTP_ACCEPT_LENGTH; whatif's default where not mapped)."""
    if qwen35_mtp_key(row, layout):
        spec = "mtp:k=3"
    elif row["backend"] != "trtllm" or MTP_IMAGE not in row["silicon_data_source"].replace("#", "/"):
        return None
    else:
        spec = f"mtp:k={1 if layout.get('attention_dp', 1) > 1 else 3}"
    if INFERENCEX_MTP_ACCEPTANCE_MAPPED:
        from whatif.roofline.speculation import chain_alpha
        spec += f",alpha={chain_alpha(*INFERENCEX_MTP_ACCEPT_LENGTH):.4f}"
    return spec


# SGLang's speculative decoding on its V1 workers runs without the overlap scheduler (added after scoring, session 63;
# before/after in docs/accuracy.md "Session 63 E"): server_args.py of the 0.5.8-0.5.9 releases warns "Overlap
# scheduler is disabled when spec v2 is off or using unsupported speculative algorithm. You can set env
# SGLANG_ENABLE_SPEC_V2=True to enable the experimental overlap scheduler" (SGLang's own docs notebooks, EAGLE
# launches built 2026-02-07..13); spec V2 for the hybrid GDN models came as opt-in (sgl-project/sglang PR #18808,
# 2026-02-13, run with `export SGLANG_ENABLE_SPEC_V2=1`) and V1 was retired only in PR #27964 (2026-06-11). The -mtp
# key's recipe (single_node/qwen3.5_fp8_b200_mtp.sh at 2ecc5ce: --speculative-algorithm EAGLE) sets no such env, so
# its 0.5.9 server ran every round with the host's work after the GPU's: the spec's own per-step CPU cost, unhidden.
SGLANG_SPEC_V1_OVERLAP_MAPPED = True
SGLANG_SPEC_V2_DEFAULT = (0, 5, 10)   # the first release read as possibly past the opt-in era: not mapped from here on


def sglang_spec_v1_overlap(row: dict, layout: dict) -> dict:
    """{"overlap_schedule": False} for an SGLang row that ran speculative decoding (speculation: the -mtp key's rows)
    on a release before SGLANG_SPEC_V2_DEFAULT without SGLANG_ENABLE_SPEC_V2 (SGLANG_SPEC_V1_OVERLAP_MAPPED); {}
    elsewhere. Reads the launch fields, not the measurement."""
    if not SGLANG_SPEC_V1_OVERLAP_MAPPED or row["backend"] != "sglang" or speculation(row, layout) is None:
        return {}
    release = _release(row.get("backend_version", ""))
    return {"overlap_schedule": False} if release is not None and release < SGLANG_SPEC_V2_DEFAULT else {}


# vLLM before 0.14.0 schedules synchronously unless the launch passes --async-scheduling (added after scoring, session
# 71 L; before/after in docs/accuracy.md "Session 71 L"): vllm/config/scheduler.py of the 0.11-0.13 line has
# `async_scheduling: bool = False` (vllm-project/vllm, stored revision 01230b4); vllm-project/vllm#27614 made it
# default-on, first released in 0.14.0 (torch-spyre/sendnn-inference#636, "Adds support for vllm 0.14.0 ... Disables
# async scheduling which is now enabled by default (#27614) ... backwards compat tests for v0.13.0"). The 0.12.0 rows
# ran aiconfigurator's generator launch (backend_templates/vllm/cli_args.0.12.0.j2 and cli_args.j2 at 11324a6 /
# 2cecd65: no --async-scheduling; run.sh.j2: python3 -m dynamo.vllm with those args), so the engine's host work per
# step (scheduling, input preparation, output processing) ran between GPU steps. Rows with no recorded release keep
# the spec's default (InferenceX launches of that era often set --async-scheduling themselves).
VLLM_SYNC_SCHEDULING_MAPPED = True
VLLM_ASYNC_DEFAULT = (0, 14, 0)   # vllm-project/vllm#27614's first release


def vllm_sync_scheduling(row: dict) -> dict:
    """{"overlap_schedule": False} for a vLLM row whose recorded release predates VLLM_ASYNC_DEFAULT (the launches
    scored here pass no --async-scheduling); {} elsewhere. Reads the launch fields, not the measurement."""
    if not VLLM_SYNC_SCHEDULING_MAPPED or row["backend"] != "vllm":
        return {}
    release = _release(row.get("backend_version", ""))
    return {"overlap_schedule": False} if release is not None and release < VLLM_ASYNC_DEFAULT else {}


# vLLM's top-k/top-p sampler sorted each sequence's whole vocabulary on the generator's Qwen3-32B rows (added after
# scoring, session 71 M; before/after in docs/accuracy.md "Session 71 M"). The request: the generator's bench_run.sh.j2
# (aiconfigurator at 00fe6de) runs `aiperf profile --endpoint-type chat` with only `--extra-inputs ignore_eos:true` (and
# nvext ignore_eos), and aiperf's chat converter (aiperf/clients/openai/openai_chat.py) sends messages, model, stream
# and max_completion_tokens: no temperature, top_k or top_p. The server: Dynamo's vLLM worker builds each request's
# SamplingParams from `engine_args.create_model_config().get_diff_sampling_param()` ("Load default sampling params from
# `generation_config.json`", components/backends/vllm/src/dynamo/vllm/main.py at 0552068;
# handlers.build_sampling_params overrides only the fields a request sets), and Qwen3's generation_config.json sets
# temperature 0.6, top_k 20, top_p 0.95 (Qwen3 model cards, "Best Practices"; tenstorrent/tt-inference-server#1066
# quotes Qwen3-8B's file). The release: vllm-project/vllm#26859 (merged 2025-10-15, first in 0.11.1) made the FlashInfer
# sampler opt-in ("Disable FlashInfer sampler by default"; #29415, 2025-11-25: "disabled by default and opt-in using
# VLLM_USE_FLASHINFER_SAMPLER"), so a 0.12.0 CUDA worker runs forward_native, whose apply_top_k_top_p sorts [batch,
# vocab] whenever top-p is set (#32558, 2026-01-18: "the current pytorch sort-based top-p/top-k implementation ...
# scales very poorly with vocab and batch sizes"). The launches set no VLLM_USE_FLASHINFER_SAMPLER (run.sh.j2 /
# cli_args.0.12.0.j2). Later releases replaced the path (#33538's Triton kernel, then #40376's FlashInfer default), so
# VLLM_SORT_SAMPLER_LAST caps the rule at the release read.
VLLM_SORT_SAMPLER_MAPPED = True
VLLM_SORT_SAMPLER_FIRST = (0, 11, 1)   # vllm-project/vllm#26859's first release
VLLM_SORT_SAMPLER_LAST = (0, 12, 0)    # the last release read to run it by default (later ones: not mapped)
GENERATION_CONFIG_TOPK_TOPP = frozenset({"Qwen/Qwen3-32B"})   # checkpoints whose generation_config sets both
# InferenceX's client sends "temperature": 0.0 in every OpenAI completions / chat request (utils/bench_serving/
# backend_request_func.py at 10081450 and b1c1a2c0; its tensorrt-llm backend 0.0 and top_p 1.0), which overrides the
# generation_config default, and vLLM V1 samples an all-greedy batch by argmax alone (no top-k/top-p): its rows never
# take the sort, whatever release or checkpoint (session 71 S, docs/accuracy.md).


def vllm_sort_sampler(row: dict) -> dict:
    """{"topk_topp_sort": True} for a vLLM row of a release from VLLM_SORT_SAMPLER_FIRST to VLLM_SORT_SAMPLER_LAST
    serving a checkpoint of GENERATION_CONFIG_TOPK_TOPP (its requests sampled with the model's top-k and top-p), not
    measured by InferenceX's greedy client; {} elsewhere. Reads the launch fields, not the measurement."""
    if not VLLM_SORT_SAMPLER_MAPPED or row["backend"] != "vllm" or row["model_path"] not in GENERATION_CONFIG_TOPK_TOPP:
        return {}
    if inferencex_run(row):   # greedy requests (temperature 0.0): argmax, not the sort
        return {}
    release = _release(row.get("backend_version", ""))
    sorts = release is not None and VLLM_SORT_SAMPLER_FIRST <= release <= VLLM_SORT_SAMPLER_LAST
    return {"topk_topp_sort": True} if sorts else {}


INFERENCEX_SOURCES = ("source_file=2026-03-25.csv", "source_file=2026-04-06.csv", "db-dump/")
# attention_dp_config of InferenceX's TensorRT-LLM recipes under DP attention: benchmarks/dsr1_fp4_b200_trt.sh and
# dsr1_fp4_b200_trt_mtp.sh (batching_wait_iters 0, enable_balance true, timeout_iters 60); gptoss_fp4_b200_trt.sh
# (enable_balance true alone: TensorRT-LLM's AttentionDpConfig defaults, timeout_iters 50, batching_wait_iters 10)
ADP_BALANCE = {"deepseek": (60, 0), "gpt-oss": (50, 10)}


_INFERENCEX_MEASURED: set = set()
_INFERENCEX_ROWS: dict = {}   # (the same key -> the InferenceX row itself)


def _rounded_measurement(row: dict) -> tuple:
    m = re.search(r"silicon_concurrency=(\d+)", row["silicon_data_source"])
    return (row["backend"], row["system"], row["model_path"], row["isl"], row["osl"], m and m.group(1),
            *(round(float(row[k]), 1) for k in ("silicon_ttft_ms", "silicon_tpot_ms")))


def inferencex_run(row: dict) -> bool:
    """An aggregated row InferenceX's client measured: its source is one of INFERENCEX_SOURCES or (added after
    scoring, with its before/after in docs/accuracy.md) its measurement repeats one of theirs, the same engine, GPU,
    model, lengths, N and TTFT and TPOT to 0.1 ms: aiconfigurator's qwen3.5-397b-gap-analysis.csv and
    kimi-k2.5-gap-analysis.csv copy 60 of their 61 and 31 of their 32 rows from InferenceX's (rounded to 0.01 ms),
    so those ran InferenceX's client and recipes, not aiperf."""
    if row["mode"] != "agg":
        return False
    if row["silicon_data_source"].startswith(INFERENCEX_SOURCES):
        return True
    if not _INFERENCEX_MEASURED:
        _INFERENCEX_ROWS.update((_rounded_measurement(r), r) for r in load() if r["mode"] == "agg"
                                and r["silicon_data_source"].startswith(INFERENCEX_SOURCES))
        _INFERENCEX_MEASURED.update(_INFERENCEX_ROWS)
    return _rounded_measurement(row) in _INFERENCEX_MEASURED


def adp_balance(row: dict, layout: dict) -> dict:
    """The scheduler fields of TensorRT-LLM's attention-DP context balancing where the row's launch turned it on:
    an aggregated TensorRT-LLM row under attention DP from InferenceX's runs (its recipes set attention_dp_config,
    ADP_BALANCE); aiconfigurator's generator templates set none (TensorRT-LLM's default: off)."""
    if row["backend"] != "trtllm" or layout.get("attention_dp", 1) <= 1 or not inferencex_run(row):
        return {}
    model = row["model_path"].lower()
    found = next((v for k, v in ADP_BALANCE.items() if k in model), None)
    if found is None:
        return {}
    return {"attention_dp_balance": True, "attention_dp_timeout_iters": found[0],
            "attention_dp_batching_wait_iters": found[1]}


# InferenceX's Llama-3.1-70B TensorRT-LLM recipes on B200 (benchmarks/70b_fp8_b200_trt_slurm.sh at a267b4b, and a
# revision of the same recipe without the slurm wrapper): trtllm-serve --max_num_tokens 16384. 70b_fp4_b200_trt_slurm.sh
# at 73ef922 passed $MAX_MODEL_LEN instead; which revision each row ran is not recorded, and 16384 is taken for both
# (under a ~2k budget the batch waiting below lets two 1k prompts in per 21 steps, which would have queued the 1k/1k
# runs at 64-128 clients for tens of seconds; their measured TTFT is ~0.3-1 s)
LLAMA70B_TRT_MAX_NUM_TOKENS = 16384


def llama70b_trt_recipe(row: dict) -> bool:
    """A Llama-3.1-70B TensorRT-LLM row of InferenceX's aggregated runs (its recipe's launch, not the generator's)."""
    return row["backend"] == "trtllm" and "llama-3.1-70b" in row["model_path"].lower() and inferencex_run(row)


# InferenceX's DeepSeek-R1 TensorRT-LLM recipes' `moe_config.backend` (added after scoring, session 52): "TRTLLM"
# (TRTLLM-Gen kernels) from the 1.2.0rc6.post2 image on (perf-changelog PR #594 dsr1-fp8-b200-trt and PR #620
# dsr1-fp4-b200-trt: "Change default MOE backend from DEEPGEMM to TRTLLM"), but for (benchmarks/dsr1_fp8_b200_trt.sh
# at 0a919c5) fp8 1024/1024 and 1024/8192 at CONC >= 256 (DEEPGEMM) and (dsr1_fp4_b200_trt.sh at 111f031) NVFP4
# 1024/* at CONC >= 256 and 8192/1024 at CONC > 32 (CUTLASS); the MTP image (1.2.0rc6.post3) NVFP4 without DP
# attention (dsr1_fp4_b200_trt_mtp.sh at 13dd0c2: TRTLLM; CUTLASS under DP attention). Not mapped: 1.1.0rc2.post2
# fp8 (DEEPGEMM, the changelog's "from"; its NVFP4 rows: TRTLLM_GEN_MOE_FP4_IMAGES). The fp8 MTP rows (added after
# scoring, session 55; docs/accuracy.md): InferenceX
# PR #632 (2026-02-05, "dsr1 fp8 b200 trt agg mtp update", the move to the 1.2 release image) switched "most of the
# tests" to the TRTLLM backend, DEEPGEMM for the data-parallel-attention points (the recipe at 8eec0d4: TRTLLM;
# 111f031 / 7506aee, DEEPGEMM throughout, are older): TRTLLM without DP attention (FP8_MTP_MOE_MAPPED)
TRTLLM_GEN_MOE_IMAGES = ("1.2.0rc6.post2", "1.2.0rc6.post3")
FP8_MTP_MOE_MAPPED = True
# The NVFP4 recipe of the 1.1.0rc2.post2 image (benchmarks/dsr1_fp4_b200_trt.sh at 6320e9b, the revision with that
# image's max_num_tokens) already set MOE_BACKEND="TRTLLM", CUTLASS at TP4 / TP8 for 1024/* at CONC >= 256 and 8192/1024
# at CONC > 32: the post2 rule's points (PR #620's "from DEEPGEMM" is the fp8 recipe's; added after scoring, session 56)
TRTLLM_GEN_MOE_FP4_IMAGES = ("1.1.0rc2.post2",)
# On: the rows ran these kernels. It moves their TPOT the wrong way (the 109 rows it maps, scored on the session-52
# merge: TTFT MAPE 49.9% -> 41.1%, x0.48 -> x0.58, off by 3x 18 -> 11; TPOT 12.7% -> 14.7%; docs/accuracy.md): the
# rule follows the launch, not the score
MOE_KERNELS_MAPPED = True
# The DEEPGEMM launches of those recipes (added after scoring, session 59, helper F; its before/after in
# docs/accuracy.md): 1.1.0rc2.post2 fp8 throughout (dsr1_fp8_b200_trt.sh at 6320e9b), post2 fp8 1k at CONC >= 256
# (0a919c5) and the MTP image's fp8 points under DP attention (PR #632) ran TensorRT-LLM's DeepGEMM fused MoE
# (fused_moe_deepgemm.py: fp8-block masked grouped GEMMs), which no table here times, and whatif has no fit of
# TensorRT-LLM's fp8 experts on Blackwell: the per-class roofline priced them at 0.36 ms a layer at EP 8 and 8,192
# tokens, ~3x under the fp8-block fused MoE measured on B200 at that shape (moe.parquet, 1.23 ms by its fit). That
# measured kernel (trtllm-gen) stands in, as a lower bound: InferenceX moved these recipes off DEEPGEMM to it
# (perf-changelog PR #594, "Change default MOE backend from DEEPGEMM to TRTLLM")
DEEPGEMM_MOE_STANDIN = "trtllm-gen"
DEEPGEMM_MOE_STANDIN_MAPPED = True
DEEPGEMM_FP8_IMAGES = ("1.1.0rc2.post2",)   # fp8 recipes that ran DEEPGEMM at every point


# SGLang's MoE all-to-all backend in the B200 DeepSeek launches read (added after scoring, session 53, sglang_moe_a2a;
# its before/after in docs/accuracy.md): no recipe read names --moe-a2a-backend / --enable-deepep-moe, all run
# --moe-runner-backend flashinfer_trtllm (InferenceX benchmarks/dsr1_fp4_b200.sh at 1fc5d73 and
# single_node/dsr1_fp8_b200.sh: no DP attention; srt-slurm recipes/b200-fp8/{1k1k,8k1k}.yaml and
# recipes/b200-fp4/{1k1k,8k1k}.yaml, NVIDIA/srt-slurm 5917791 and ishandhanani/srt-slurm 3b69129, the dynamo-sglang
# launches of the db-dump disaggregated rows: DP attention with no a2a backend). SGLang's default backend "none"
# gives the MoE layer ScatterMode.FULL under DP attention (layers/communicator.py _compute_mlp_mode: SCATTERED only
# with an a2a backend or the flashinfer-cutlass fp4 all-gather), every rank's tokens all-gathered and the outputs
# reduce-scattered: "gather". A recipe naming `moe-a2a-backend: deepep` would map to "deepep" (none found).
SGLANG_A2A_RECIPES = {"none": "gather", "deepep": "deepep"}
# Off: scored on the 120 dsr1_b200_sglang rows (session 53, helper J; docs/accuracy.md) it moves only the 13
# disaggregated rows under DP attention, TTFT 70.9% -> 71.2% and TPOT 18.2% -> 20.2% (the decode pool's gather and
# reduce-scatter cost more than the all-to-all where TPOT is already over, x1.20): kept off until the decode step's
# over-prediction is found (ground rules: a change that scores worse stays off by default, reported)
SGLANG_A2A_MAPPED = False


def sglang_moe_a2a(row: dict, layout: dict) -> dict:
    """The parallel setting moe_a2a of an SGLang DeepSeek B200 row whose launch was read (SGLANG_A2A_RECIPES: "none"
    for every one read) where its layout has DP attention; {} elsewhere (the NCCL all-to-all, as before)."""
    if (not SGLANG_A2A_MAPPED or row["backend"] != "sglang" or row["system"] != "b200_sxm"
            or "deepseek" not in row["model_path"].lower()
            or not row["silicon_data_source"].startswith(INFERENCEX_SOURCES)):
        return {}
    disagg = row["mode"] == "disagg"
    adp = max(_int(row.get(f"{p}attention_dp_size", "")) for p in (("prefill_", "decode_") if disagg else ("",)))
    return {"moe_a2a": SGLANG_A2A_RECIPES["none"]} if adp > 1 else {}


# The prefill pool's half of that rule (added after scoring, session 62, sglang_prefill_moe_a2a; its before/after in
# docs/accuracy.md): the prefill workers of those launches run DP attention with EP and no --moe-a2a-backend
# (recipes/b200-fp4/{1k1k,8k1k}.yaml prefill: tensor-parallel-size 4, data-parallel-size 4, expert-parallel-size 4,
# enable-dp-attention, moe-runner-backend flashinfer_trtllm), so their MoE gathers every rank's tokens as the decode
# pool's does (ScatterMode.FULL); the decode pool keeps the all-to-all (SGLANG_A2A_MAPPED, off: its TPOT was worse)
SGLANG_PREFILL_A2A_MAPPED = True


def sglang_prefill_moe_a2a(row: dict) -> dict:
    """The cluster setting prefill_moe_a2a of a disaggregated SGLang DeepSeek B200 row whose prefill pool runs DP
    attention (SGLANG_A2A_RECIPES["none"]: its launch names no a2a backend); {} elsewhere (the decode pool's)."""
    if (not SGLANG_PREFILL_A2A_MAPPED or row["backend"] != "sglang" or row["mode"] != "disagg"
            or row["system"] != "b200_sxm" or "deepseek" not in row["model_path"].lower()
            or not row["silicon_data_source"].startswith(INFERENCEX_SOURCES)):
        return {}
    return {"prefill_moe_a2a": SGLANG_A2A_RECIPES["none"]} if _int(row.get("prefill_attention_dp_size", "")) > 1 else {}


def trtllm_moe_kernels(row: dict, layout: dict, n: int) -> dict:
    """`moe_kernels: trtllm-gen` where an InferenceX DeepSeek TensorRT-LLM row's recipe ran `moe_config.backend:
    TRTLLM` (TRTLLM_GEN_MOE_IMAGES): its experts priced by the fused-MoE rows that timed those kernels
    (roofline/moe_kernels.py); the same kernels stand in for its fp8 recipes' DEEPGEMM points (DEEPGEMM_MOE_STANDIN);
    {} elsewhere (the per-class model, as before). Added after scoring, with its before/after in docs/accuracy.md."""
    version, quant = row["backend_version"], row["gemm_quant_mode"]
    fp4_image = version in TRTLLM_GEN_MOE_FP4_IMAGES and quant == "nvfp4"
    deepgemm_image = version in DEEPGEMM_FP8_IMAGES and quant == "fp8"
    if (row["backend"] != "trtllm" or "deepseek" not in row["model_path"].lower() or not inferencex_run(row)
            or (version not in TRTLLM_GEN_MOE_IMAGES and not fp4_image and not deepgemm_image)):
        return {}
    isl, adp = _int(row["isl"]), layout.get("attention_dp", 1) > 1
    if deepgemm_image:
        trtllm = False
    elif version == "1.2.0rc6.post3":
        trtllm = not adp and (quant == "nvfp4" or FP8_MTP_MOE_MAPPED)
    elif quant == "fp8":
        trtllm = not (isl == 1024 and n >= 256)
    else:
        trtllm = not ((isl == 1024 and n >= 256) or (isl == 8192 and n > 32))
    if trtllm:
        return {"moe_kernels": "trtllm-gen"}
    # the fp8 recipes' other backend is DEEPGEMM; the NVFP4 recipes' is CUTLASS (left to the per-class model)
    return {"moe_kernels": DEEPGEMM_MOE_STANDIN} if quant == "fp8" and DEEPGEMM_MOE_STANDIN_MAPPED else {}


# The srt-slurm recipes' MoE backend per pool (added after scoring, session 60, helper D; its before/after in
# docs/accuracy.md): each recipe in SRT_SLURM_TRTLLM sets `moe_config.backend` for its prefill (ctx) and decode (gen)
# workers (read at connorcarpenter15/srt-slurm 5a156f6, recipes/trtllm/b200-*): TRTLLM in every B200 ctx worker but
# the fp8 1k1k ones (DEEPGEMM), and in the gen workers but the NVFP4 1k1k dep8 ones (CUTLASS) and the fp8 1k1k ones
# (DEEPGEMM). TRTLLM runs the trtllm-gen kernels (moe_kernels `trtllm-gen`); DEEPGEMM takes their stand-in as the
# InferenceX rule does (DEEPGEMM_MOE_STANDIN); CUTLASS is left to the per-class model. The H100 recipes (Hopper: no
# trtllm-gen kernels) are not mapped. Key: recipe -> (ctx backend, gen backend).
SRT_SLURM_TRTLLM_MOE = {
    "b200-fp4/1k1k/stp/ctx1_gen1_dep8_batch512_eplb0_mtp0": ("TRTLLM", "CUTLASS"),
    "b200-fp4/1k1k/stp/ctx1_gen2_dep8_batch128_eplb0_mtp0": ("TRTLLM", "CUTLASS"),
    "b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0": ("TRTLLM", "TRTLLM"),
    "b200-fp4/1k1k/stp/ctx1_gen6_tep8_batch64_eplb0_mtp0": ("TRTLLM", "TRTLLM"),
    "b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0": ("TRTLLM", "TRTLLM"),
    "b200-fp4/8k1k/stp/ctx2_gen5_tep8_batch64_eplb0_mtp0": ("TRTLLM", "TRTLLM"),
    "b200-fp8/1k1k/stp/ctx1_gen1_dep8_batch512_eplb0_mtp0_4096": ("DEEPGEMM", "DEEPGEMM"),
    "b200-fp8/1k1k/stp/ctx1_gen5_dep8_batch48_eplb0_mtp0_1920": ("DEEPGEMM", "DEEPGEMM"),
    **dict.fromkeys(("b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch128_eplb0_mtp0_128",
                     "b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch256_eplb0_mtp0_256",
                     "b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1",
                     "b200-fp8/8k1k/stp/ctx1_gen2_dep8_batch64_eplb0_mtp0_128",
                     "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_128",
                     "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_32",
                     "b200-fp8/8k1k/stp/ctx1_gen6_tp8_batch16_eplb0_mtp0_96",
                     "b200-fp8/8k1k/stp/ctx2_gen1_dep8_batch640_eplb0_mtp0_640"), ("TRTLLM", "TRTLLM")),
}
SRT_SLURM_MOE_MAPPED = True   # False: the per-class model prices both pools' experts, as before


def srt_slurm_moe_kernels(backend: str) -> str | None:
    """whatif's moe_kernels for a TensorRT-LLM moe_config.backend of an srt-slurm recipe (None: the per-class model)."""
    if backend == "TRTLLM":
        return "trtllm-gen"
    return DEEPGEMM_MOE_STANDIN if backend == "DEEPGEMM" and DEEPGEMM_MOE_STANDIN_MAPPED else None


def srt_slurm_trtllm_moe(row: dict) -> tuple[dict, dict]:
    """(the scenario's moe_kernels, the cluster's prefill_moe_kernels) of a db-dump TensorRT-LLM disaggregated row
    whose srt-slurm recipe is established (srt_slurm_trtllm_recipe) and mapped in SRT_SLURM_TRTLLM_MOE: the gen
    workers' backend prices the decode pool's experts, the ctx workers' the prefill pool's; ({}, {}) elsewhere."""
    recipe = srt_slurm_trtllm_recipe(row) if SRT_SLURM_MOE_MAPPED else None
    if not recipe or recipe[3] not in SRT_SLURM_TRTLLM_MOE:
        return {}, {}
    ctx, gen = (srt_slurm_moe_kernels(b) for b in SRT_SLURM_TRTLLM_MOE[recipe[3]])
    return ({"moe_kernels": gen} if gen else {}), ({"prefill_moe_kernels": ctx} if ctx else {})


# InferenceX's DeepSeek-R1 TensorRT-LLM launches (added after scoring, session 54, inferencex_dsr1_trt_launch; its
# before/after in docs/accuracy.md): trtllm-serve --max_num_tokens MAX_NUM_TOKENS = (CONC + ISL + 64 + 63) / 64 * 64
# and kv_cache_config free_gpu_memory_fraction 0.8 on the 1.1.0rc2.post2 image (benchmarks/dsr1_fp8_b200_trt.sh and
# dsr1_fp4_b200_trt.sh at 6320e9b); from the 1.2.0rc6.post2 image (perf-changelog PR #594 / #620) the same budget with
# an 8192-token floor (dsr1_fp8_b200_trt.sh at 0a919c5, dsr1_fp4_b200_trt.sh at 111f031), the fp8 recipe's fraction 0.7
# for 1k prompts at CONC >= 256 and 0.75 for 8k/1k at TP4 ("dynamic KV cache memory fraction tuning (0.7-0.8)", PR
# #594); the MTP image (1.2.0rc6.post3: dsr1_fp8_b200_trt_mtp.sh at 111f031, dsr1_fp4_b200_trt_mtp.sh at 13dd0c2)
# ((MTP + 1) x MAX_BATCH_SIZE + ISL + 64 + 63) / 64 * 64 with MAX_BATCH_SIZE = CONC (CONC / TP under DP attention),
# MTP 3 (1 under DP attention), fraction 0.8. The rule had the generator's batch + ISL + 1500 and the spec's 0.9.
INFERENCEX_DSR1_TRT_LAUNCH_MAPPED = True

# The image of InferenceX DeepSeek TensorRT-LLM rows that record no release (added after scoring, session 71 P; its
# before/after in docs/accuracy.md "Session 71 P"): the 43 B200 rows of configs 75 / 82 / 91 and source_file
# 2026-04-06.csv, all measured 2025-11-02. SemiAnalysisAI/InferenceX .github/configs/master.yaml at 78f6b8d (the
# InferenceMAX-era config: its Llama-70B keys, removed by PR #149 of 2025-10-30, still there) gives dsr1-fp4-b200-trt
# and dsr1-fp8-b200-trt `image: nvcr.io#nvidia/tensorrt-llm/release:1.1.0rc2.post2`; perf-changelog.yaml (at
# 000de6d) records no image change to those keys from its first entry (PR #95) until PRs #594 (fp8) and #620 (fp4),
# both "Update TensorRT-LLM container from release:1.1.0rc2.post2 to release:1.2.0rc6.post2"; the recipe of that era,
# benchmarks/dsr1_fp4_b200_trt_slurm.sh at b5ebafa and dsr1_fp8_b200_trt_slurm.sh at f560513, launches as the
# mapped 1.1.0rc2.post2 recipe (fraction 0.8, budget CONC + ISL + 64; NVFP4: CUTLASS MoE at 1k CONC >= 256 / 8k
# CONC > 32, TRTLLM elsewhere; fp8: DEEPGEMM at every point). Window: the master.yaml read to the day the -trt-mtp
# keys joined that image (INFERENCEX_TRT_MTP_KEYS_FROM; from then trt_stp_or_mtp_unknown holds).
INFERENCEX_DSR1_TRT_UNRECORDED_IMAGE = ("1.1.0rc2.post2", "2025-10-30", "2026-01-07")
INFERENCEX_DSR1_TRT_UNRECORDED_MAPPED = True   # off: those rows run the generator's rule, as before session 71 P


def unrecorded_inferencex_dsr1_trt(row: dict) -> bool:
    """An InferenceX DeepSeek TensorRT-LLM B200 row that records no release, measured in
    INFERENCEX_DSR1_TRT_UNRECORDED_IMAGE's window (the 43 rows session 71 P sourced). Reads the engine, GPU, model,
    source and date, not the measurement."""
    _, since, until = INFERENCEX_DSR1_TRT_UNRECORDED_IMAGE
    if (row.get("backend_version") or row["backend"] != "trtllm" or row["system"] != "b200_sxm"
            or "deepseek" not in row["model_path"].lower() or not inferencex_run(row)):
        return False
    date = measured_date(row)
    return bool(date and since <= date < until)


def sourced_release(row: dict) -> dict:
    """The row with the release its launch is sourced to have run where it records none
    (unrecorded_inferencex_dsr1_trt); every other row unchanged."""
    if not INFERENCEX_DSR1_TRT_UNRECORDED_MAPPED or not unrecorded_inferencex_dsr1_trt(row):
        return row
    return {**row, "backend_version": INFERENCEX_DSR1_TRT_UNRECORDED_IMAGE[0]}


# The same rows' layout by that config (added after scoring, session 71 U; its before/after in docs/accuracy.md
# "Session 71 U"): master.yaml at 78f6b8d gives each (ISL/OSL, TP, CONC) point of dsr1-fp4-b200-trt and
# dsr1-fp8-b200-trt its `ep` and `dp-attn` in `seq-len-configs[].bmk-space` (CONC doubling from conc-start to
# conc-end, utils/matrix-logic/generate_sweep_configs.py; an entry without `ep` / `dp-attn` runs EP 1 / TP attention);
# the recipes of that era read them (dsr1_fp4_b200_trt_slurm.sh at b5ebafa, dsr1_fp8_b200_trt_slurm.sh at f560513,
# dsr1_fp4_b200_trt.sh at 6320e9b: `trtllm-serve --tp_size=$TP --ep_size=$EP_SIZE`, `enable_attention_dp:
# $DP_ATTENTION`, and under DP attention `attention_dp_config` enable_balance / timeout_iters 60 / batching_wait_iters
# 0). Key: gemm quant (config key) -> (ISL, OSL) -> bmk-space entries (tp, ep, dp-attn, conc-start, conc-end).
# Against it: every one of the 43 rows records EP 1 and no attention DP, and InferenceX's ingest (InferenceX-app
# packages/db/src/etl/topology.ts: `ep = parseInt2(src.ep) ?? 1`) reads them from the result file, which
# utils/process_result.py (00e51cc, the format without `image`) writes from EP_SIZE / DP_ATTENTION: the recorded
# layout may be what ran on 2025-11-02 if the config changed after 78f6b8d (its date is not in the index).
INFERENCEX_DSR1_TRT_78F6B8D_SPACE = {
    "nvfp4": {
        (1024, 1024): ((4, 1, False, 4, 32), (4, 4, False, 64, 128), (4, 4, True, 256, 256),
                       (8, 1, False, 4, 8), (8, 8, False, 16, 128), (8, 8, True, 256, 256)),
        (1024, 8192): ((4, 1, False, 4, 32), (4, 4, False, 64, 128), (4, 4, True, 256, 256),
                       (8, 1, False, 4, 16), (8, 8, False, 32, 128), (8, 8, True, 256, 256)),
        (8192, 1024): ((4, 4, False, 4, 32), (4, 4, True, 64, 256),
                       (8, 1, False, 4, 32), (8, 8, True, 64, 256)),
    },
    "fp8": {
        (1024, 1024): ((8, 8, False, 4, 32), (8, 8, True, 64, 64)),
        (1024, 8192): ((8, 8, False, 4, 64),),
        (8192, 1024): ((8, 8, False, 4, 64),),
    },
}
INFERENCEX_DSR1_TRT_LAYOUT_MAPPED = True   # off: those rows as recorded (EP 1, TP attention), as before session 71 U


def _sweep_concs(start: int, end: int) -> set:
    """The CONC values one bmk-space entry runs: start, doubled up to end (end itself as the last)."""
    out, conc = set(), start
    while conc < end:
        out.add(conc)
        conc *= 2
    return out | {end}


def config_layout_entries(row: dict, tp: int, n: int) -> list:
    """The 78f6b8d bmk-space entries (tp, ep, dp-attn, conc-start, conc-end) whose TP and CONC hold the row's."""
    space = INFERENCEX_DSR1_TRT_78F6B8D_SPACE.get(row["gemm_quant_mode"], {})
    entries = space.get((_int(row["isl"]), _int(row["osl"])), ())
    return [e for e in entries if e[0] == tp and n in _sweep_concs(e[3], e[4])]


def sourced_layout(row: dict, layout: dict, n: int) -> dict:
    """The layout of an unrecorded_inferencex_dsr1_trt row as master.yaml at 78f6b8d ran its point (EP, and
    attention DP over the TP ranks) where exactly one bmk-space entry holds it; every other row's unchanged."""
    if not INFERENCEX_DSR1_TRT_LAYOUT_MAPPED or not unrecorded_inferencex_dsr1_trt(row):
        return layout
    found = config_layout_entries(row, layout["tp"], n)
    if len(found) != 1:
        return layout
    tp, ep, dp_attn = found[0][:3]
    out = {k: v for k, v in layout.items() if k not in ("ep", "attention_dp")}
    return {**out, **({"ep": ep} if ep > 1 else {}), **({"attention_dp": tp} if dp_attn else {})}


def _blocks64(tokens: int) -> int:
    return (tokens + 63) // 64 * 64


def inferencex_dsr1_trt_launch(row: dict, layout: dict, n: int) -> dict:
    """The token budget and KV fraction an InferenceX DeepSeek TensorRT-LLM row's recipe launched with, by its image
    (INFERENCEX_DSR1_TRT_LAUNCH_MAPPED); {} elsewhere (the generator's rule)."""
    version = row["backend_version"]
    if (not INFERENCEX_DSR1_TRT_LAUNCH_MAPPED or row["backend"] != "trtllm" or row["system"] != "b200_sxm"
            or not row["model_path"].lower().startswith("deepseek-ai/") or not inferencex_run(row)
            or version not in ("1.1.0rc2.post2", "1.2.0rc6.post2", "1.2.0rc6.post3")):
        return {}
    isl, adp = _int(row["isl"]), layout.get("attention_dp", 1) > 1
    if version == "1.2.0rc6.post3":
        batch = n // layout["tp"] if adp else n
        return {"max_num_batched_tokens": _blocks64(((1 if adp else 3) + 1) * batch + isl + 64),
                "memory_utilization": 0.8}
    tokens = _blocks64(n + isl + 64)
    if version == "1.1.0rc2.post2":
        return {"max_num_batched_tokens": tokens, "memory_utilization": 0.8}
    fraction = 0.8
    if row["gemm_quant_mode"] == "fp8":
        if isl == 1024 and n >= 256:
            fraction = 0.7
        elif isl == 8192 and _int(row["osl"]) == 1024 and layout["tp"] == 4:
            fraction = 0.75
    return {"max_num_batched_tokens": max(tokens, 8192), "memory_utilization": fraction}


# InferenceX's DeepSeek-R1 fp8 TensorRT-LLM recipe of the 1.2.0rc6.post2 image (added after scoring, session 58,
# helper M; its before/after in docs/accuracy.md): benchmarks/dsr1_fp8_b200_trt.sh at 0a919c5 (the revision whose
# budget and fractions inferencex_dsr1_trt_launch maps; its single_node copy reads the same) sets DELAY_BATCHING for
# ISL = OSL = 1024 at CONC >= 64 and then writes `batch_wait_timeout_iters: 40` and `batch_wait_max_tokens_ratio:
# 0.8`; dsr1_fp4_b200_trt.sh (111f031) and the 1.1.0rc2.post2 revision (6320e9b) never do
DSR1_FP8_TRT_BATCH_WAIT = {"batch_wait_timeout_iters": 40, "batch_wait_max_tokens_ratio": 0.8}
DSR1_FP8_TRT_BATCH_WAIT_MAPPED = True


def trtllm_batch_wait(row: dict, layout: dict) -> dict:
    """TensorRT-LLM's batch waiting where the row's launch turned it on (added after scoring, with its before/after
    in docs/accuracy.md): InferenceX's Llama-3.1-70B TensorRT-LLM recipes (LLAMA70B_TRT_MAX_NUM_TOKENS) write
    `batch_wait_max_tokens_ratio: 0.9` and `batch_wait_timeout_iters: 20` into the extra LLM API options "for
    1k/1k" only, when ISL = OSL = 1024 and TP < 8 ("by default they are all zeros"); every other configuration of
    the recipe runs without it (simulator/batch_wait.py). Its DeepSeek-R1 fp8 recipe on the 1.2.0rc6.post2 image:
    DSR1_FP8_TRT_BATCH_WAIT at 1k/1k from 64 clients (session 58)."""
    one_k = _int(row["isl"]) == 1024 and _int(row["osl"]) == 1024
    if (DSR1_FP8_TRT_BATCH_WAIT_MAPPED and one_k and row["backend"] == "trtllm"
            and row.get("backend_version") == "1.2.0rc6.post2" and row["gemm_quant_mode"] == "fp8"
            and row["model_path"].lower().startswith("deepseek-ai/") and inferencex_run(row)
            and concurrency(row) >= 64):
        return dict(DSR1_FP8_TRT_BATCH_WAIT)
    if not llama70b_trt_recipe(row) or not one_k or layout["tp"] >= 8:
        return {}
    return {"batch_wait_timeout_iters": 20, "batch_wait_max_tokens_ratio": 0.9}


# InferenceX's vLLM recipes (benchmarks/single_node/*.sh, the stored revision of each): (model, gemm quant mode,
# GPU) -> (--kv-cache-dtype, --gpu-memory-utilization, --max-num-seqs, --max-num-batched-tokens). No recipe but
# gptoss_fp4_b200.sh passes --kv-cache-dtype; vLLM's "auto" then takes the checkpoint's declared KV dtype (a ModelOpt
# hf_quant_config kv_cache_quant_algo since vllm-project/vllm#29980, v0.13), else the model's: None = 16-bit (the
# fp8-block and INT4 checkpoints declare none), "fp8" for the NVFP4 (ModelOpt) checkpoints, whose FP8 declaration is
# assumed (NVIDIA's NVFP4 exports carry one; nvidia/MiniMax-M2.5-NVFP4's hf_quant_config.json, read in session 54:
# kv_cache_quant_algo FP8); max_num_seqs "conc": $CONC; a None limit: not passed,
# vLLM's default for the GPU (the engine spec's large_gpu_* on H100/B200: 1024 sequences, 8192 tokens).
VLLM_RECIPES = {
    ("minimax-m2.5", "fp8", "h100_sxm"): (None, 0.90, 256, None),       # minimaxm2.5_fp8_h100.sh
    ("minimax-m2.5", "fp8", "b200_sxm"): (None, 0.95, None, None),      # minimaxm2.5_fp8_b200.sh
    ("minimax-m2.5", "nvfp4", "b200_sxm"): ("fp8", 0.90, "conc", None),  # minimaxm2.5_fp4_b200.sh
    ("kimi-k2.5", "int4_wo", "b200_sxm"): (None, 0.97, None, None),     # kimik2.5_int4_b200.sh
    ("kimi-k2.5", "nvfp4", "b200_sxm"): ("fp8", 0.90, "conc", None),    # kimik2.5_fp4_b200.sh
    ("gpt-oss-120b", "nvfp4", "b200_sxm"): ("fp8", 0.90, 512, 8192),    # gptoss_fp4_b200.sh (+ its config.yaml)
    ("gpt-oss-120b", "nvfp4", "h100_sxm"): (None, 0.90, "conc", 8192),  # gptoss_fp4_h100.sh (+ its config.yaml)
    # added after scoring (session 55): benchmarks/70b_fp{8,4}_b200_docker.sh at bb4c7f9, config.yaml
    # kv-cache-dtype fp8, max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 --max-num-seqs 512
    ("llama-3.1-70b", "fp8", "b200_sxm"): ("fp8", 0.90, 512, 8192),     # 70b_fp8_b200_docker.sh
    ("llama-3.1-70b", "nvfp4", "b200_sxm"): ("fp8", 0.90, 512, 8192),   # 70b_fp4_b200_docker.sh
    # added after scoring (session 69): benchmarks/70b_fp8_h100_slurm.sh at 2a205bb, config.yaml kv-cache-dtype fp8,
    # max-num-batched-tokens 8192; --gpu-memory-utilization 0.9 --max-num-seqs $CONC
    ("llama-3.1-70b", "fp8", "h100_sxm"): ("fp8", 0.90, "conc", 8192),  # 70b_fp8_h100_slurm.sh
}
# Recipes whose served checkpoint was not read keep the rule's precision (no vllm_checkpoint): the Llama-3.1-70B
# scripts take $MODEL from the workflow, not stored here (added after scoring, session 55).
VLLM_RULE_PRECISION = ("llama-3.1-70b",)
# The H100 Llama-3.1-70B fp8 launch of the InferenceMAX era ran a bf16 KV cache (session 74 M; on/off figures in
# docs/accuracy.md "Session 74 M"). Its config.yaml sets `kv-cache-dtype: fp8` (InferenceX benchmarks/
# 70b_fp8_h100_slurm.sh at 2a205bb, lines 21-27; the docker twin of InferenceX PR #43, 2025-09-23, as kept at
# jyothisambolu/InferenceMAX af4ccd0), but both pass it as `--config=config.yaml` (2a205bb line 36), and vLLM's
# FlexibleArgumentParser.parse_args expands the YAML only when the bare token is present (`if '--config' in args:`,
# vllm/utils/__init__.py at 003e2f9, the 0.10.x line; vllm-project/vllm#43252 reproduces it on 0.21.0: "accepts the
# config path but does not expand the YAML"). `--config` is itself a declared serve option, so the run starts with the
# YAML ignored: kv-cache-dtype "auto" = the checkpoint's bf16 on vLLM 0.10.2 (74 I: the model dtype;
# ModelOpt's kv_cache_quant_algo is read only from vllm-project/vllm#29980). Every B200 Llama-70B launch read writes
# `--config config.yaml` (70b_fp8_b200_docker.sh / 70b_fp4_b200_docker.sh at bb4c7f9) or passes --kv-cache-dtype fp8
# (70b_b200_slurm.sh at 2caa5e5): fp8 there. The earlier H100 revisions (b9cb938, 4e3c32e) pass no --kv-cache-dtype:
# bf16 as well. The same ignored YAML held `async-scheduling: true`, so those runs scheduled synchronously (vLLM
# 0.10.2's async_scheduling defaults to False; see VLLM_SYNC_SCHEDULING_MAPPED's sources); its max-num-batched-tokens
# 8192 equals vLLM's API-server default on a >= 70 GiB GPU (EngineArgs.get_batch_defaults), and its
# no-enable-prefix-caching does not matter to random prompts. Not traced: austenstone/InferenceMAX c99f2e6 writes
# `--config config.yaml` in both H100 scripts (undated fork edit; its gptoss H100 scripts keep `--config=`).
LLAMA70B_H100_AUTO_KV = ("llama-3.1-70b", "fp8", "h100_sxm")
LLAMA70B_H100_AUTO_KV_MAPPED = True
# The revision a row's release pins, where the recipe changed with the image (added after scoring, session 54):
# InferenceX PR #947 (merged 2026-04-03) moved minimaxm2.5-fp8-b200-vllm from v0.17.0 to v0.19.0 and in the same
# change added --kv-cache-dtype fp8, --max-num-batched-tokens $((ISL * 2)) and --max-cudagraph-capture-size 2048 and
# lowered --gpu-memory-utilization 0.95 -> 0.90 (its description; the script as stored at 8eec0d4), so its 0.19.0
# rows ran those and its 0.17.0 rows the stored 07e171a launch above. "2isl": twice the row's ISL.
VLLM_RECIPE_RELEASES = {
    ("minimax-m2.5", "fp8", "b200_sxm", "0.19.0"): ("fp8", 0.90, None, "2isl"),   # PR #947
    # added after scoring (session 69): minimaxm2.5-fp4-b200-vllm's v0.19.0 rows ran InferenceX PR #996's launch
    # (single_node/minimaxm2.5_fp4_b200.sh at a52c31a, fixed_seq_len/ at 45c4f91: --kv-cache-dtype fp8,
    # --max-num-batched-tokens $((ISL * 2)), no --max-num-seqs); its earlier nightly rows the PR #951 one above
    ("minimax-m2.5", "nvfp4", "b200_sxm", "0.19.0"): ("fp8", 0.90, None, "2isl"),  # PR #996
}


# The checkpoint each InferenceX vLLM recipe serves where the row's model_path is another (its config key's
# `model`, InferenceX PR #862 kimik2.5-fp4-b200-vllm: nvidia/Kimi-K2.5-NVFP4; issue #951 minimaxm2.5-fp4-b200-vllm:
# nvidia/MiniMax-M2.5-NVFP4); the others serve the row's model_path (PR #735 kimik2.5-int4: moonshotai/Kimi-K2.5).
VLLM_CHECKPOINTS = {("kimi-k2.5", "nvfp4"): "nvidia/Kimi-K2.5-NVFP4",
                    ("minimax-m2.5", "nvfp4"): "nvidia/MiniMax-M2.5-NVFP4"}
# Experts a recipe runs on another kernel than the checkpoint's scheme says: gptoss_fp4_b200.sh exports
# VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (MXFP4 weights x MXFP8 activations on the tensor cores), which the rule's
# nvfp4 stands in for (whatif's mxfp4 scheme is 16-bit activations, the Hopper path).
VLLM_EXPERT_KERNEL = {("gpt-oss-120b", "nvfp4", "b200_sxm"): "nvfp4"}
# ... and the kernels those experts run (added after scoring, session 53, its before/after in docs/accuracy.md): with
# VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8 on SM100 vLLM's MXFP4 MoE picks SM100_FI_MXFP4_MXFP8_TRTLLM (quantization/
# mxfp4.py get_mxfp4_backend), FlashInfer's trtllm_fp4_block_scale_moe: the TRTLLM-Gen kernels (moe_kernels.py);
# gptoss_fp4_h100.sh exports VLLM_MXFP4_USE_MARLIN=1 (both revisions read, 1fc5d73 and 34bc7c4): Mxfp4Backend.MARLIN,
# the Marlin MoE vLLM runs INT4 experts with (moe_kernels marlin: its weight-only fit)
# Session 61: trtllm-gen-mxfp8, the same kernels priced by their own MXFP4 x MXFP8 rows (moe_kernels.py).
VLLM_MOE_KERNELS = {("gpt-oss-120b", "nvfp4", "b200_sxm"): "trtllm-gen-mxfp8",
                    ("gpt-oss-120b", "nvfp4", "h100_sxm"): "marlin"}
# ... and per release, where a recipe's image changed them (added after scoring, session 72 B2):
# minimaxm2.5_fp8_b200.sh at 07e171a (InferenceX; the v0.17.0 image) exports VLLM_USE_FLASHINFER_MOE_FP8=0 and
# VLLM_MOE_USE_DEEP_GEMM=0 (PR #947, 8eec0d4, removes both with the move to v0.19.0; vllm-project/recipes#272: "FP8
# serving on B200 GPUs with FlashInfer MoE FP8 and DeepGEMM MoE disabled"), so vLLM's fp8 MoE oracle
# (model_executor/layers/fused_moe/oracle/fp8.py, stored revision 001a058: the variable set false drops
# FLASHINFER_TRTLLM and FLASHINFER_CUTLASS, VLLM_MOE_USE_DEEP_GEMM false DEEPGEMM, VLLM_CUTLASS off unless allowed)
# picks TRITON (TritonExperts): moe_kernels triton. Its decode tile is not the fit's (docs/accuracy.md session 72 B2:
# vllm#34846's BLOCK_SIZE_M 16 at <= 64 tokens, the corpus rows SGLang's 64). Key: (model, gemm quant, GPU, release).
VLLM_RELEASE_MOE_KERNELS = {("minimax-m2.5", "fp8", "b200_sxm", "0.17.0"): "triton"}
VLLM_RELEASE_MOE_KERNELS_MAPPED = True   # off: those rows' experts as FlashInfer's TRTLLM-Gen (v0.19.0's), as before
# The cudagraph_mode a recipe's --compilation-config sets (added after scoring, session 54): minimaxm2.5_fp8_h100.sh
# at 34bc7c4 launches `--compilation-config '{"cudagraph_mode":"PIECEWISE"}'`; recipes not listed set none (vLLM's
# FULL_AND_PIECEWISE: decode batches as whole graphs).
VLLM_CUDAGRAPH_MODES = {("minimax-m2.5", "fp8", "h100_sxm"): "piecewise",   # minimaxm2.5_fp8_h100.sh
                        # session 69: 70b_fp8_h100_slurm.sh sets no mode and its image is vllm-openai:v0.10.2
                        # (.github/configs/master.yaml at 78f6b8d, 70b-fp8-h100-vllm), whose default was PIECEWISE:
                        # vllm-project/vllm#25444 made FULL_AND_PIECEWISE the default from 0.11.0 (InferenceX PR #159:
                        # "since vLLM 0.11.0 now defaults to FULL_AND_PIECEWISE")
                        ("llama-3.1-70b", "fp8", "h100_sxm"): "piecewise"}
VLLM_CUDAGRAPH_MAPPED = True   # off: every vLLM row in the engine spec's mode, as before session 54

# Recipes that pass --enable-expert-parallel at the row's TP whatever its EP_SIZE (added after scoring, session 55):
# minimaxm2.5_fp8_b200.sh as stored at 07e171a tests `[ "$EP_SIZE" -ge 1 ]`, true for EP_SIZE 1, so its v0.17.0
# rows ran the experts expert-parallel over the TP ranks; InferenceX PR #947 ("good catch") made it -gt 1 together
# with the v0.19.0 image, so the 0.19.0 rows ran as recorded. (model, gemm quant mode, GPU, release).
VLLM_ALWAYS_EP = {("minimax-m2.5", "fp8", "b200_sxm", "0.17.0")}   # minimaxm2.5_fp8_b200.sh at 07e171a
VLLM_ALWAYS_EP_MAPPED = True   # off: those rows as recorded (EP 1), as before
# ... and recipes that never pass it whatever EP the row records (added after scoring, session 75 B): InferenceX's
# benchmarks/single_node/kimik2.5_fp4_b200.sh at both stored revisions (04107b3, 7a83b90; PR #862's launch, the rows
# of 2026-03-11 / 03-27) neither checks nor reads EP_SIZE and passes no --enable-expert-parallel, and PR #1047's
# launch (the 2026-04-20 rows) added none (perf-changelog.yaml; fixed_seq_len/kimik2.5_fp4_b300.sh at 3274c53, PR
# #1100's "as-is" copy of it, has none); the `EP_ARGS=(--enable-expert-parallel)` block appears only in the
# v0.20.2-era fixed_seq_len/kimik2.5_fp4_b200.sh (380b685), after every row. vLLM then shards every expert over the
# TP ranks (FusedMoEParallelConfig.make: use_ep needs parallel_config.enable_expert_parallel; else ep_size 1, tp_size
# = the flattened TP), so the rows recorded "tp4 ep4" ran the MoE as the "tp4 ep1" ones.
VLLM_NEVER_EP = {("kimi-k2.5", "nvfp4", "b200_sxm", "0.17.0")}   # kimik2.5_fp4_b200.sh before its EP_ARGS
VLLM_NEVER_EP_MAPPED = True   # off: those rows at their recorded EP, as before


def _recipe_in(row: dict, recipes: set) -> bool:
    """Whether the row's (model, gemm quant mode, GPU, release) is one of `recipes`."""
    model = row["model_path"].lower()
    return any(m in model and q == row["gemm_quant_mode"] and g == row["system"] and r == row["backend_version"]
               for m, q, g, r in recipes)


def vllm_recipe_ep(row: dict, layout: dict) -> dict:
    """The layout with the experts expert-parallel over the TP ranks where the row's recipe passed
    --enable-expert-parallel though the row records EP 1 (VLLM_ALWAYS_EP), tensor-parallel where it passed none
    though the row records EP > 1 (VLLM_NEVER_EP); other rows' layout unchanged."""
    if row["backend"] != "vllm" or row["mode"] != "agg" or not inferencex_run(row) or layout["tp"] <= 1 \
            or layout.get("attention_dp", 1) > 1:
        return layout
    if VLLM_NEVER_EP_MAPPED and layout.get("ep", 1) > 1 and _recipe_in(row, VLLM_NEVER_EP):
        return {k: v for k, v in layout.items() if k != "ep"}
    if not VLLM_ALWAYS_EP_MAPPED or layout.get("ep", 1) > 1 or not _recipe_in(row, VLLM_ALWAYS_EP):
        return layout
    return {**layout, "ep": layout["tp"]}


def vllm_checkpoint(row: dict, kw: dict) -> None:
    """Load the checkpoint the recipe served as it is stored (added after scoring, session 51, its before/after in
    the commit): the row's gemm_quant_mode names the deployment's precision, but vLLM runs each module as the
    checkpoint stores it, its ignore list included (specs/checkpoint_quant.py): gpt-oss-120b's MXFP4 covers the
    routed experts alone (modules_to_not_convert: attention, router, embeddings, LM head), nvidia/MiniMax-M2.5-NVFP4
    likewise, and nvidia/Kimi-K2.5-NVFP4 leaves its MLA attention 16-bit. The rule's --quantization on every linear
    layer priced their attention in NVFP4. So the model is the recipe's checkpoint (VLLM_CHECKPOINTS) and the rule's
    weight schemes are dropped, whatif then running the checkpoint's precision (inputs.scenario_from_inputs), but
    for experts a recipe runs on another kernel (VLLM_EXPERT_KERNEL). Kimi INT4 and gpt-oss on H100 (MXFP4) named
    the checkpoint's own scheme and so ran as stored already (checkpoint_quant.own_scheme_named); MiniMax's "fp8"
    rows now run its checkpoint's 128x128 block scales (fp8-block) where the rule read per-tensor fp8."""
    model = row["model_path"].lower()
    quant = row["gemm_quant_mode"]
    kw["model"] = next((c for (m, q), c in VLLM_CHECKPOINTS.items() if m in model and q == quant), row["model_path"])
    experts = next((e for (m, q, g), e in VLLM_EXPERT_KERNEL.items()
                    if m in model and q == quant and g == row["system"]), None)
    kw.pop("quantization", None)
    kw.pop("expert_quantization", None)
    if experts is not None:
        kw["expert_quantization"] = experts
    kernels = next((k for (m, q, g), k in VLLM_MOE_KERNELS.items()
                    if m in model and q == quant and g == row["system"]), None)
    if VLLM_RELEASE_MOE_KERNELS_MAPPED:
        kernels = next((k for (m, q, g, r), k in VLLM_RELEASE_MOE_KERNELS.items() if m in model and q == quant
                        and g == row["system"] and r == row["backend_version"]), kernels)
    if kernels is not None:
        kw["moe_kernels"] = kernels


# The checkpoint InferenceX's SGLang and TensorRT-LLM DeepSeek-R1 FP4 configurations serve (nvidia-master.yaml:
# dsr1-fp4-b200-sglang and dsr1-fp4-b200-trt `model: nvidia/DeepSeek-R1-0528-FP4-V2`; the multi-node srt-slurm
# recipes' dsr1-fp4 model path deepseek-r1-0528-fp4-v2); the set's DeepSeek-V3 db-dump rows repeat those runs.
SGLANG_TRTLLM_CHECKPOINTS = {("deepseek", "nvfp4"): "nvidia/DeepSeek-R1-0528-FP4-V2"}
# GLM-5's NVFP4 rows: glm5_fp4_b200.sh (fixed_seq_len/ at 8eec0d4) launches `--quantization modelopt_fp4`, a ModelOpt
# export; NVIDIA's nvidia/GLM-5-NVFP4 (hf_quant_config.json exclude_modules: every layer's q_a/q_b/kv_a/kv_b/o_proj and
# indexer) keeps attention 16-bit. Tried after scoring (session 56): TPOT of the 10 rows 24.4% -> 26.2% (their gap is
# not in attention), TTFT 54.9% -> 53.8%; off by default, docs/accuracy.md "B200 TPOT under load (session 56)".
SGLANG_GLM5_CHECKPOINTS = {("glm-5", "nvfp4"): "nvidia/GLM-5-NVFP4"}
GLM5_NVFP4_CHECKPOINT_MAPPED = False   # on: the GLM-5 NVFP4 rows load nvidia/GLM-5-NVFP4 as stored
# On (session 53, helper L): the MLA module fit now prices o_proj at its own format (module_fits.py); what the rows ran
# (the checkpoint is sourced), though SGLang's TPOT gets worse (8.1% -> 10.9% over 118 rows; docs/accuracy.md)
NVIDIA_FP4_CHECKPOINTS_MAPPED = True


def sglang_trtllm_checkpoint(row: dict, kw: dict) -> None:
    """Load the NVFP4 checkpoint an InferenceX SGLang / TensorRT-LLM row served as it is stored (added after scoring,
    session 53, its before/after in docs/accuracy.md): both engines read the ModelOpt hf_quant_config.json and leave
    its exclude_modules 16-bit (SGLang modelopt_quant.py ModelOptFp4Config.get_quant_method, TensorRT-LLM's
    exclude_modules, issue #5766's load log), so MLA's q_a/q_b/kv_a/kv_b run in bf16, o_proj and the MLPs in NVFP4
    (specs/checkpoint_quant.py), where the rule's --quantization nvfp4 priced every linear layer in NVFP4."""
    if not NVIDIA_FP4_CHECKPOINTS_MAPPED or row["backend"] not in ("sglang", "trtllm") \
            or not row["silicon_data_source"].startswith(INFERENCEX_SOURCES):
        return
    model, quant = row["model_path"].lower(), row["gemm_quant_mode"]
    checkpoints = {**SGLANG_TRTLLM_CHECKPOINTS, **(SGLANG_GLM5_CHECKPOINTS if GLM5_NVFP4_CHECKPOINT_MAPPED else {})}
    found = next((c for (m, q), c in checkpoints.items() if m in model and q == quant), None)
    if found is None or row["moe_quant_mode"] != quant:
        return
    kw["model"] = found
    kw.pop("quantization", None)   # the checkpoint's own scheme, its exclude list included
    kw.pop("expert_quantization", None)


# DeepSeek's own FP8 checkpoints (deepseek-ai/DeepSeek-R1, -V3: config.json quantization_config fp8 with
# weight_block_size [128, 128]; InferenceX's dsr1-fp8-b200-trt serves deepseek-ai/DeepSeek-R1-0528, the same format)
# are stored with 128x128 block scales; TensorRT-LLM loads them so (FP8_BLOCK_SCALES: modeling_deepseekv3.py reads
# each linear's weight_scale_inv, "In the case of Deepseek FP8 recipe, it's 128"), so its "fp8" rows ran the block-scale
# GEMMs and their 1x128 activation quantize (fp8_quantize_1x128), where the rule read per-tensor fp8. Added after
# scoring (session 54), its before/after in docs/accuracy.md.
TRTLLM_DEEPSEEK_FP8_BLOCK_MAPPED = True


def trtllm_deepseek_fp8_checkpoint(row: dict, kw: dict) -> None:
    """A TensorRT-LLM row of DeepSeek's own FP8 checkpoint (gemm and MoE modes fp8) runs its 128x128 block scales."""
    if (not TRTLLM_DEEPSEEK_FP8_BLOCK_MAPPED or row["backend"] != "trtllm"
            or not row["model_path"].lower().startswith("deepseek-ai/deepseek-")
            or (row["gemm_quant_mode"], row["moe_quant_mode"]) != ("fp8", "fp8")):
        return
    kw["quantization"] = "fp8-block"
    kw.pop("expert_quantization", None)


# TensorRT-LLM 1.0.0rc3's H100 Qwen3-32B "fp8" rows as Qwen's block-scaled checkpoint (Qwen/Qwen3-32B-FP8: config.json
# quantization_config fp8, weight_block_size [128, 128]), which 1.0.0rc3 loads as FP8_BLOCK_SCALES and runs through
# FP8BlockScalesLinearMethod (tensorrt_llm/_torch/modules/linear.py: on SM 90 torch.ops.trtllm.fp8_quantize_1x128 then
# torch.ops.trtllm.fp8_block_scaling_gemm). OFF: the campaign's file is Qwen_Qwen3-32B.csv (its 235B file names the
# -FP8 repo and says fp8_block), and the one source pairing QWEN3_32B / 1.0.0rc3 with Qwen/Qwen3-32B-FP8
# (aiconfigurator tools/automation/README.md at b77a0be) is an H200 disagg example whose container runs
# tensorrt-llm 1.0.0rc6 (1.0.0rc3 there is the perf database version): the checkpoint is not established.
# Session 72 I2, its on / off figures in docs/accuracy.md.
QWEN3_32B_TRT_RC3_FP8_BLOCK_MAPPED = False


def trtllm_qwen3_32b_fp8_block(row: dict, kw: dict) -> None:
    """A TensorRT-LLM 1.0.0rc3 Qwen3-32B fp8 row run as the 128x128 block-scaled checkpoint (the switch above)."""
    if (not QWEN3_32B_TRT_RC3_FP8_BLOCK_MAPPED or row["backend"] != "trtllm"
            or row.get("backend_version") != "1.0.0rc3" or row["model_path"] != "Qwen/Qwen3-32B"
            or row["gemm_quant_mode"] != "fp8"):
        return
    kw["quantization"] = "fp8-block"
    kw.pop("expert_quantization", None)


def vllm_recipe(row: dict, n: int, kw: dict) -> None:
    """The KV-cache dtype, memory fraction and scheduler limits an InferenceX vLLM row's (inferencex_run) recipe
    launched with (VLLM_RECIPES), in place of the rule's aiconfigurator pairing (fp8 KV with any quantized GEMM), the
    spec's 0.9 and the generator's limits (batch_size per attention-DP rank, batch + ISL + 1500 tokens); rows of
    other sources and recipes not read are left as the rule maps them."""
    if row["backend"] != "vllm" or not inferencex_run(row):
        return
    model = row["model_path"].lower()
    found = next((v for (m, q, g, r), v in VLLM_RECIPE_RELEASES.items() if m in model and q == row[
        "gemm_quant_mode"] and g == row["system"] and r == row["backend_version"]), None) or next(
        (v for (m, q, g), v in VLLM_RECIPES.items() if m in model and q == row["gemm_quant_mode"]
         and g == row["system"]), None)
    if found is None:
        return
    if not any(m in model for m in VLLM_RULE_PRECISION):
        vllm_checkpoint(row, kw)
    mode = VLLM_CUDAGRAPH_MODES.get(next((k for k in VLLM_CUDAGRAPH_MODES if k[0] in model and k[1] == row[
        "gemm_quant_mode"] and k[2] == row["system"]), None)) if VLLM_CUDAGRAPH_MAPPED else None
    if mode:
        kw["cudagraph_mode"] = mode
    kv, kw["memory_utilization"], seqs, tokens = found
    m, q, g = LLAMA70B_H100_AUTO_KV
    if LLAMA70B_H100_AUTO_KV_MAPPED and m in model and q == row["gemm_quant_mode"] and g == row["system"]:
        kv = None   # the YAML (kv-cache-dtype fp8) was never read: vLLM 0.10.2's "auto" = the checkpoint's bf16
        kw["overlap_schedule"] = False   # and nor was its async-scheduling: true (0.10.2's default: synchronous)
    tokens = 2 * _int(row["isl"]) if tokens == "2isl" else tokens
    for key, value in (("kv_dtype", kv), ("max_num_seqs", n if seqs == "conc" else seqs),
                       ("max_num_batched_tokens", tokens)):
        if value is None:
            kw.pop(key, None)
        else:
            kw[key] = value


# InferenceX vLLM launches that raise the CUDA-graph capture ceiling (added after scoring, session 61, with its
# before/after in docs/accuracy.md): --max-cudagraph-capture-size 2048, so prefill and mixed steps of up to 2,048
# tokens replay piecewise graphs where vLLM's default, min(2 x max_num_seqs, 512), leaves every 1k prompt's step
# with no graph (roofline/graphless_step.py). minimaxm2.5-fp8-b200-vllm from its v0.19.0 image (PR #947, merged
# 2026-04-03, with --max-num-batched-tokens 2 x ISL: VLLM_RECIPE_RELEASES); kimik2.5-fp4-b200-vllm from InferenceX
# PR #1047 ("Add kv-cache-dtype fp8, max-cudagraph-capture-size 2048, max-num-batched-tokens, and stream-interval
# 20", perf-changelog.yaml, the B300 twin PR #1698: --max-num-batched-tokens $((ISL * 2))), on the same v0.17.0
# image: the changelog lists it between PR #1043 and PR #1072 (the latter cites 2026-04-17), and no Kimi NVFP4 row
# was measured between 2026-03-28 and 2026-04-19, so rows measured from 2026-04-17 ran it. (model, gemm quant mode,
# GPU) -> (release, or None: any; first measurement date, or None: any; --max-num-batched-tokens, "2isl").
VLLM_CAPTURE_2048 = {
    ("minimax-m2.5", "fp8", "b200_sxm"): ("0.19.0", None, "2isl"),      # PR #947
    ("minimax-m2.5", "nvfp4", "b200_sxm"): ("0.19.0", None, "2isl"),    # PR #996 (session 69)
    # gptoss_fp4_b200.sh's config.yaml: max-cudagraph-capture-size 2048 with max-num-batched-tokens 8192, in the
    # revision before PR #789 moved it to v0.15.1 (1fc5d73, async-scheduling still set) and after (34bc7c4): its
    # v0.15.1 rows (2026-02-25) ran it (session 69). Session 71 K: so did the 2025-11-02 rows (release unrecorded):
    # every stored v0.11-era revision of the B200 launch sets the same ceiling and budget, the earliest as
    # `cuda-graph-sizes: 2048` (FULL_AND_PIECEWISE, enable_fi_allreduce_fusion + enable_attn_fusion, --max-num-seqs
    # 512), gptoss_fp4_b200_slurm.sh at e55faff and gptoss_fp4_b200_docker.sh at b5a8902 as
    # `max-cudagraph-capture-size: 2048` (enable_fi_allreduce_fusion, the pass's pre-v0.13 name); v0.11's list for
    # `cuda-graph-sizes: 2048` steps by 8 to 2,048 where this one steps by 16 above 256 (<= 16 tokens of padding)
    ("gpt-oss-120b", "nvfp4", "b200_sxm"): (None, None, 8192),
    # session 71 K: gptoss_fp4_h100.sh's config.yaml (1fc5d73: max-cudagraph-capture-size 2048, max-num-batched-tokens
    # 8192, beside --max-num-seqs $CONC; the 2025 Hopper revisions `cuda-graph-sizes: 2048` with the same budget):
    # its 1k prefills replay graphs, where vLLM's default ceiling, min(2 x $CONC, 512), left them with none (v0.11 on
    # Hopper's FA3 held gpt-oss at 992, InferenceX issue #117: the 2 release-unrecorded rows' longest 1k steps may not)
    ("gpt-oss-120b", "nvfp4", "h100_sxm"): (None, None, 8192),
    ("kimi-k2.5", "nvfp4", "b200_sxm"): (None, "2026-04-17", "2isl"),   # PR #1047
}
VLLM_CAPTURE_SIZES_2048 = [1, 2, 4, [8, 248, 8], [256, 2048, 16]]   # vLLM's list at max_cudagraph_capture_size 2048
VLLM_CAPTURE_MAPPED = True   # off: every vLLM row at vLLM's default capture sizes, as before session 61


def vllm_capture_size(row: dict, kw: dict) -> None:
    """The capture list (and token budget) of an InferenceX vLLM row whose launch set --max-cudagraph-capture-size
    2048 (VLLM_CAPTURE_2048); other rows keep vLLM's default capture sizes."""
    if not VLLM_CAPTURE_MAPPED or row["backend"] != "vllm" or not inferencex_run(row):
        return
    model = row["model_path"].lower()
    found = next((v for (m, q, g), v in VLLM_CAPTURE_2048.items() if m in model and q == row["gemm_quant_mode"]
                  and g == row["system"]), None)
    if found is None:
        return
    release, since, tokens = found
    date = measured_date(row)
    if (release is not None and row["backend_version"] != release) or \
            (since is not None and (date is None or date < since)):
        return
    kw["cuda_graph_sizes"] = VLLM_CAPTURE_SIZES_2048
    kw["max_num_batched_tokens"] = 2 * _int(row["isl"]) if tokens == "2isl" else tokens


# TensorRT-LLM's gpt-oss MoE backend where its launch is read: InferenceX's gptoss_fp4_b200_trt.sh sets
# `moe_config.backend: TRTLLM` (MXFP4 weights x MXFP8 activations on Blackwell, TensorRT-LLM's gpt-oss deployment
# guide's support matrix: the TRTLLM-Gen kernels, which take the router logits and route themselves:
# moe_kernels trtllm-gen; the rule's nvfp4 stands in for the format, as for vLLM's MXFP4 x MXFP8 on B200)
# Session 61: trtllm-gen-mxfp8, those kernels priced by their own MXFP4 x MXFP8 rows (moe_kernels.py)
TRTLLM_GPTOSS_EXPERTS = {"b200_sxm": ("nvfp4", "trtllm-gen-mxfp8")}
TRTLLM_GPTOSS_MAPPED = True   # off: every linear layer in the rule's precision, as before session 53


def trtllm_gptoss_checkpoint(row: dict, kw: dict) -> None:
    """Serve gpt-oss-120b on TensorRT-LLM as its checkpoint stores it (added after scoring, session 53, its
    before/after in docs/accuracy.md): openai/gpt-oss-120b is the only checkpoint at the row's id (trtllm-serve
    $MODEL in gptoss_fp4_b200_trt.sh), MXFP4 routed experts whose quantization_config leaves attention, router,
    embeddings and LM head 16-bit (GptOssForCausalLM applies its exclude_modules: modeling_gpt_oss.py __post_init__),
    where the rule's nvfp4 / fp8 quantized every linear layer. The experts run the kernels of the launch where it
    was read (TRTLLM_GPTOSS_EXPERTS, B200); elsewhere (the H100 gap-analysis rows, whose launch is not recorded) the
    checkpoint's MXFP4 with 16-bit activations, the format aiconfigurator's collector times TensorRT-LLM's gpt-oss
    MoE in on H100 (moe table: w4a16_mxfp4). The KV cache stays as the rule maps it (the recipe's fp8)."""
    if row["backend"] != "trtllm" or "gpt-oss" not in row["model_path"].lower():
        return
    kw.pop("quantization", None)
    kw.pop("expert_quantization", None)
    found = TRTLLM_GPTOSS_EXPERTS.get(row["system"]) if inferencex_run(row) else None
    if found is not None:
        kw["expert_quantization"], kw["moe_kernels"] = found


# gptoss_fp4_b200_trt.sh's launch (added after scoring, session 53, its before/after in docs/accuracy.md): trtllm-serve
# --max_num_tokens 20000 (MAX_NUM_TOKENS) and kv_cache_config free_gpu_memory_fraction 0.85, where the generator's
# rule had batch + ISL + 1500 tokens and the spec's 0.9; its --max_batch_size 512 is above every row's clients
TRTLLM_GPTOSS_LAUNCH = {"max_num_batched_tokens": 20000, "memory_utilization": 0.85}


# ... and its cuda_graph_config (enable_padding true, max_batch_size $CONC; SemiAnalysisAI/InferenceX
# benchmarks/gptoss_fp4_b200_trt.sh @1825e7f): TensorRT-LLM generates [1, 2, 4] + multiples of 8 to the limit
# (trtllm_padded_graph_sizes), where the profile pads to powers of two. Added after scoring (session 72 J); sizes
# past 128 differ by release, so rows above 128 clients keep the profile's list.
TRTLLM_GPTOSS_GRAPHS_MAPPED = True
# ... and its `export TRTLLM_ENABLE_PDL=1` (every gptoss_fp4_b200_trt*.sh revision read; not in the DeepSeek or
# Llama-3.1-70B TensorRT-LLM recipes read): the trtllm-pdl profile, whose kernels pay no inter-kernel gap
# (engine_profiles/versions/trtllm-pdl.yaml). Added after scoring (session 72 J); False: the trtllm profile's gap.
TRTLLM_GPTOSS_PDL_MAPPED = True
TRTLLM_PDL_PROFILE = "trtllm-pdl"


def trtllm_gptoss_recipe(row: dict, kw: dict) -> None:
    """An InferenceX TensorRT-LLM gpt-oss row launched as gptoss_fp4_b200_trt.sh (TRTLLM_GPTOSS_LAUNCH, its decode
    graphs where TRTLLM_GPTOSS_GRAPHS_MAPPED and the clients are 128 or fewer, its PDL where
    TRTLLM_GPTOSS_PDL_MAPPED)."""
    if row["backend"] == "trtllm" and "gpt-oss" in row["model_path"].lower() and inferencex_run(row):
        kw.update(TRTLLM_GPTOSS_LAUNCH)
        if TRTLLM_GPTOSS_GRAPHS_MAPPED and concurrency(row) <= 128:
            kw["cuda_graph_sizes"] = list(trtllm_padded_graph_sizes(concurrency(row)))
        if TRTLLM_GPTOSS_PDL_MAPPED:
            kw["kernel_engine"] = TRTLLM_PDL_PROFILE


# vLLM's -O2 all-reduce + RMSNorm fusion (added after scoring, session 53; engine_profiles/versions/vllm-0.18.yaml):
# on where the recipe passes enable_fi_allreduce_fusion (InferenceX benchmarks/70b_fp8_b200_docker.sh and
# 70b_fp4_b200_docker.sh at bb4c7f9: the Llama-3.1-70B B200 rows; their VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB
# {2: 32, 4: 32, 8: 8} are not mapped, the profile's caps are: at TP8 it fuses up to 64 sequences, the recipe 512) and
# where the row's release has it on by default (docs.vllm.ai v0.18.2 design/fusions: -O2 on Hopper/Blackwell with
# TP > 1; v0.12-0.14's OPTIMIZATION_LEVEL_02 had it off; 0.15-0.17 not established, left off). The H100 Llama recipe
# (70b_fp8_h100_slurm.sh) passes none. Kimi-K2.5 on B200 (added after scoring, session 53, its before/after in
# docs/accuracy.md): InferenceX's kimik2.5_int4_b200.sh and kimik2.5_fp4_b200.sh (every revision read) pass
# --compilation_config.pass_config.fuse_allreduce_rms true, as vLLM's Kimi-K2.5 recipe page does.
VLLM_FUSION_RECIPES = (("llama-3.1-70b", "b200_sxm"), ("kimi-k2.5", "b200_sxm"))
# ... and by release where the recipe's revision is tied to one (session 69): gptoss_fp4_b200.sh's config.yaml passes
# compilation-config pass_config fuse_allreduce_rms true (1fc5d73 and 34bc7c4, either side of PR #789's v0.15.1 move)
VLLM_FUSION_RECIPE_RELEASES = (("gpt-oss-120b", "b200_sxm", "0.15.1"),)
VLLM_FUSION_RELEASE = (0, 18, 0)
VLLM_FUSION_PROFILE = "vllm-0.18"


def vllm_allreduce_fusion(row: dict) -> bool:
    """Whether a vLLM row ran the all-reduce + RMSNorm fusion (its recipe's flag, or its release's default)."""
    if row["backend"] != "vllm":
        return False
    model = row["model_path"].lower()
    recipe = (any(m in model and g == row["system"] for m, g in VLLM_FUSION_RECIPES)
              or any(m in model and g == row["system"] and r == row.get("backend_version")
                     for m, g, r in VLLM_FUSION_RECIPE_RELEASES)) and inferencex_run(row)
    release = _release(row.get("backend_version", ""))
    return recipe or bool(release and release >= VLLM_FUSION_RELEASE)


# SGLang 0.5.x turns the FlashInfer all-reduce + residual + RMSNorm fusion on by itself for DeepSeek-V3/R1 on sm100
# (python/sglang/srt/server_args.py _handle_model_specific_adjustments: not enable_dp_attention and nnodes == 1);
# engine_profiles/versions/sglang-0.5.yaml carries it (its families: deepseek_v3 only).
SGLANG_FUSION_PROFILE = "sglang-0.5"


def sglang_allreduce_fusion(row: dict, layout: dict, nodes: int) -> bool:
    """Whether an SGLang row ran SGLang's own DeepSeek all-reduce + RMSNorm fusion: a B200 (sm100) worker without
    DP attention on one node (every B200 SGLang row is a 0.5.x release or unrecorded from 2025-11 on). Added after
    scoring (session 54), with its before/after in docs/accuracy.md."""
    return (row["backend"] == "sglang" and row["system"] == "b200_sxm" and "deepseek" in row["model_path"].lower()
            and layout.get("attention_dp", 1) == 1 and nodes == 1)


# The srt-slurm H100 TensorRT-LLM recipes (SRT_SLURM_TRTLLM's h100_sxm entries, every tep16 file read at
# connorcarpenter15/srt-slurm 5a156f6 and ishandhanani/srt-slurm 51962c0) set NCCL_NVLS_ENABLE: "0" in each decode
# worker's environment: NCCL may not reduce in the NVSwitch, so the TP16 all-reduces over the worker's two nodes run
# without NVLSTree (engine_profiles/versions/trtllm-nvls-off.yaml, roofline/kernel_models/two_node_allreduce.py).
# Added after scoring (session 60, helper H), with its before/after in docs/accuracy.md; False: as before.
TRTLLM_NVLS_OFF_MAPPED = True
TRTLLM_NVLS_OFF_PROFILE = "trtllm-nvls-off"


# The decode workers' cuda_graph_config of the srt-slurm TensorRT-LLM recipes (SRT_SLURM_TRTLLM's; added after
# scoring, session 60, helper L, with its before/after in docs/accuracy.md): the H100 tep16 files list batch_sizes
# (batch64: [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64]; batch1-16: the powers of two to the limit, which the profile's
# list cut at the limit already gives); the B200 files read give max_batch_size only, from which TensorRT-LLM's
# CudaGraphConfig._generate_cuda_graph_batch_sizes (llmapi/llm_args.py, enable_padding) captures [1, 2, 4] + the
# multiples of 8 to 128, then the limit (sizes past 128 differ by release: not mapped). Recipe -> listed sizes.
SRT_SLURM_TRTLLM_GRAPH_SIZES = {
    "h100-fp8/8k1k/stp/ctx1_gen2_tep16_batch64_eplb0_mtp0": (1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64),
}
SRT_SLURM_TRTLLM_GRAPH_MAX = {   # recipes whose decode cuda_graph_config gives max_batch_size (<= 128) only
    "b200-fp8/1k1k/stp/ctx1_gen5_dep8_batch48_eplb0_mtp0_1920": 48,
    "b200-fp8/8k1k/stp/ctx1_gen2_dep8_batch64_eplb0_mtp0_128": 64,
    "b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch128_eplb0_mtp0_128": 128,
}
TRTLLM_RECIPE_GRAPHS_MAPPED = True   # False: the engine profile's decode_sizes, as before


def trtllm_padded_graph_sizes(max_batch: int) -> tuple[int, ...]:
    """TensorRT-LLM's generated decode graph sizes under enable_padding for a max_batch_size of 128 or less:
    [1, 2, 4] + multiples of 8 (CudaGraphConfig._generate_cuda_graph_batch_sizes), cut at the limit, the limit
    appended."""
    sizes = [s for s in [1, 2, 4] + [8 * i for i in range(1, 17)] if s <= max_batch]
    return tuple(sizes if sizes[-1] == max_batch else sizes + [max_batch])


def trtllm_recipe_graph_sizes(row: dict) -> dict:
    """{'cuda_graph_sizes': the decode graphs the row's srt-slurm TensorRT-LLM recipe captures} where read
    (SRT_SLURM_TRTLLM_GRAPH_SIZES, SRT_SLURM_TRTLLM_GRAPH_MAX), else {} (the engine profile's list)."""
    recipe = srt_slurm_trtllm_recipe(row) if TRTLLM_RECIPE_GRAPHS_MAPPED else None
    if recipe is None:
        return {}
    if recipe[3] in SRT_SLURM_TRTLLM_GRAPH_SIZES:
        return {"cuda_graph_sizes": list(SRT_SLURM_TRTLLM_GRAPH_SIZES[recipe[3]])}
    if recipe[3] in SRT_SLURM_TRTLLM_GRAPH_MAX:
        return {"cuda_graph_sizes": list(trtllm_padded_graph_sizes(SRT_SLURM_TRTLLM_GRAPH_MAX[recipe[3]]))}
    return {}


def trtllm_nvls_off(row: dict) -> bool:
    """Whether a row ran an srt-slurm H100 TensorRT-LLM recipe, whose decode workers set NCCL_NVLS_ENABLE=0."""
    return TRTLLM_NVLS_OFF_MAPPED and row["system"] == "h100_sxm" and srt_slurm_trtllm_recipe(row) is not None


# The srt-slurm TensorRT-LLM recipes export TRTLLM_ENABLE_PDL: "1" in both pools' environments where the decode pool
# runs without attention DP (connorcarpenter15/srt-slurm 5a156f6, recipes/trtllm/<name>.yaml: prefill_environment and
# decode_environment; read for each name below), so those deployments launch their kernels with PDL: the trtllm-pdl
# profile (no inter-kernel gap; trtllm-nvls-off-pdl for the H100 ones, which also set NCCL_NVLS_ENABLE=0). The dep8
# recipes read (b200-fp4/1k1k ctx1_gen2_dep8_batch128, ctx1_gen1_dep8_batch512; b200-fp8/8k1k ctx1_gen2_dep8_batch64)
# set it for the prefill pool only; one engine profile serves both pools here, so they keep the trtllm profile (what
# these Dynamo images' TensorRT-LLM reads when it is unset is not established: envUtils.cpp getEnvEnablePDL turned
# from off to on by default about TensorRT-LLM PR #9821's time, 2025-12; session 72 J2 in docs/accuracy.md). Added
# after scoring; False: as before.
SRT_SLURM_TRTLLM_PDL_MAPPED = True
SRT_SLURM_TRTLLM_PDL = frozenset((
    "b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0", "b200-fp4/1k1k/stp/ctx1_gen6_tep8_batch64_eplb0_mtp0",
    "b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0", "b200-fp4/8k1k/stp/ctx2_gen5_tep8_batch64_eplb0_mtp0",
    "b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1", "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_32",
    "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_128", "b200-fp8/8k1k/stp/ctx1_gen6_tp8_batch16_eplb0_mtp0_96",
    *(f"h100-fp8/{isl}/stp/ctx1_gen3_tep16_batch{b}_eplb0_mtp0" for isl in ("1k1k", "8k1k") for b in (1, 2, 8)),
    "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch16_eplb0_mtp0", "h100-fp8/8k1k/stp/ctx1_gen2_tep16_batch64_eplb0_mtp0",
))
TRTLLM_NVLS_OFF_PDL_PROFILE = "trtllm-nvls-off-pdl"


def srt_slurm_trtllm_pdl(row: dict) -> bool:
    """Whether a row ran an srt-slurm TensorRT-LLM recipe read to export TRTLLM_ENABLE_PDL=1 to both pools."""
    recipe = srt_slurm_trtllm_recipe(row) if SRT_SLURM_TRTLLM_PDL_MAPPED else None
    return recipe is not None and recipe[3] in SRT_SLURM_TRTLLM_PDL


# A disaggregated worker is its own server: SGLang's `nnodes == 1` test (above) reads the worker's --nnodes, not the
# deployment's. The srt-slurm SGLang recipes place each pool on its own nodes and pass
# `enable-flashinfer-allreduce-fusion: true` to both pools (NVIDIA/srt-slurm 5917791 recipes/b200-fp4/8k1k.yaml,
# b200-fp8/8k1k_stp_lowlat_1.yaml), so a one-node TP8 decode worker fuses whatever the deployment's size. Added after
# scoring (session 58, helper K); DISAGG_WORKER_NODES = False restores the deployment's node count.
DISAGG_WORKER_NODES = True


def worker_nodes(row: dict, gpus: int, deployment_nodes: int) -> int:
    """Nodes one (decode) worker of the row spans: its own GPUs' for a disaggregated row (DISAGG_WORKER_NODES), else
    the deployment's."""
    if row["mode"] != "disagg" or not DISAGG_WORKER_NODES:
        return deployment_nodes
    return math.ceil(gpus / GPUS_PER_NODE[row["system"]])


CLIENT_RANGE_RATIO = 0.8   # InferenceX's RANDOM_RANGE_RATIO (benchmark-tmpl.yml) and srt-slurm's random_range_ratio


# InferenceX's SGLang recipes on B200: (model, gemm mode, TP or None for any) -> (--chunked-prefill-size, whose
# --max-prefill-tokens is the same or SGLang's default 16384; --mem-fraction-static). DeepSeek: benchmarks/
# dsr1_fp4_b200.sh (and dsr1_fp4_b200_docker.sh) 16384, 0.85; dsr1_fp8_b200.sh at 1fc5d73: TP8 32768, 0.82; TP4
# (8192/1024 only) 8192, 0.95. Their --max-running-requests is not mapped: the fp8 recipe's 128 is contradicted by its
# own rows at 256 and 512 clients (TPOT 43 and 69 ms against 29 at 128: more than 128 decoding), so another revision
# ran those. Qwen3.5-397B and GLM-5 (added after scoring, session 51, with the before/after in the closing note;
# benchmarks/single_node/...): qwen3.5_bf16_b200.sh (fixed_seq_len/ at 8eec0d4) 32768, 0.82; qwen3.5_fp8_b200.sh at
# 01fa35c (the revision whose recv interval the fp8 rows take, sglang_recv_interval) 32768, 0.82; qwen3.5_fp4_b200.sh
# (fixed_seq_len/ at 8eec0d4) 16384, 0.8; glm5_fp8_b200.sh (8eec0d4) 32768, 0.85; glm5_fp4_b200.sh (8eec0d4) 32768,
# 0.9. The Qwen3.5 bf16/fp8 recipes' --max-running-requests 128 is not mapped either: the fp8 TP4 rows at 256 clients
# measure 2.5 s TTFT at 1024/1024, where 128 waiting for a slot would wait a whole request (~48 s).
INFERENCEX_SGLANG_LAUNCH = {("deepseek", "nvfp4", 4): (16384, 0.85), ("deepseek", "nvfp4", 8): (16384, 0.85),
                            ("deepseek", "fp8", 4): (8192, 0.95), ("deepseek", "fp8", 8): (32768, 0.82),
                            ("qwen3.5", "", None): (32768, 0.82), ("qwen3.5", "fp8", None): (32768, 0.82),
                            ("qwen3.5", "nvfp4", None): (16384, 0.8),
                            ("glm-5", "fp8", None): (32768, 0.85), ("glm-5", "nvfp4", None): (32768, 0.9)}


def inferencex_sglang_launch(row: dict) -> tuple[int, float] | None:
    """(prefill token budget, memory fraction) an InferenceX aggregated SGLang row's recipe launched with
    (INFERENCEX_SGLANG_LAUNCH; the recipes, not aiconfigurator's generator, launched those runs), or None (the
    generator's rule: token_budget, the spec's fraction). Added after scoring, with its before/after in
    docs/accuracy.md (DeepSeek) and session 51's closing note (Qwen3.5, GLM-5)."""
    if row["backend"] != "sglang" or row["system"] != "b200_sxm" or not inferencex_run(row):
        return None
    model, tp = row["model_path"].lower(), _layout(row)["tp"]
    return next((launch for (family, gemm, at), launch in INFERENCEX_SGLANG_LAUNCH.items()
                 if family in model and gemm == row["gemm_quant_mode"] and at in (None, tp)), None)


# InferenceX's client got its warm-up in PR #480 (opened 2026-01-17, "chore: upstream kimbochen/bench_serving,
# adding warmup"); before it the measured requests opened on a server that had served only its own start-up probe
INFERENCEX_WARMUP_FROM = "2026-01-17"


def measured_date(row: dict) -> str | None:
    """The row's measurement date (YYYY-MM-DD) from its silicon_data_source, or None where it records none."""
    measured = re.search(r"measured=(\d{4}-\d\d-\d\d)", row["silicon_data_source"])
    return measured and measured[1]


def cold_server(row: dict) -> str:
    """'' or why a row's measurement includes a cold server's one-time kernel fetch whatif does not price: an
    InferenceX SGLang DeepSeek run on B200 measured before its client warmed up (INFERENCEX_WARMUP_FROM) whose
    opening burst (N prompts of mean 0.9 ISL, lengths in [0.8 ISL, ISL]) exceeds the recipe's chunked-prefill size
    (inferencex_sglang_launch), so its first wave runs SGLang's first chunked prefill (attention over a cached
    prefix), a kernel the server's start-up probe never ran (SGLang's launch warm-up: one prompt, "The capital
    city of France is", 8 new tokens; entrypoints/http_server.py). FlashInfer on Blackwell loaded those kernels'
    cubins at first use, downloaded at run time (sgl-project/sglang#10933, filed 2025-09-26; the recipes patch
    flashinfer/jit/cubin_loader.py for a race there, flashinfer PR #1779). The rows show it: their TTFT jumps ~10x
    exactly where the burst crosses the recipe's chunk (16,384 tokens for NVFP4, 32,768 for FP8: 0.4-0.9 s below,
    2-12 s above for NVFP4 whatever the load, the mean of 10N requests carrying one wave's ~50-90 s stall). Added
    after scoring; how long a download took is not recorded and is not a cost of inference, so the rows are not
    scored."""
    chunk = (inferencex_sglang_launch(row) or (0,))[0] if "deepseek" in row["model_path"].lower() else 0
    measured = measured_date(row)
    if not chunk or not measured or measured >= INFERENCEX_WARMUP_FROM:
        return ""
    burst = concurrency(row) * _int(row["isl"]) * (1 + CLIENT_RANGE_RATIO) / 2
    if burst <= chunk:
        return ""
    return (f"measured {measured}, before InferenceX's client warmed the server up (PR #480): its opening burst "
            f"(~{burst:,.0f} prompt tokens) ran the cold server's first chunked prefill (chunk {chunk:,}), whose "
            "kernels FlashInfer fetched at first use (sglang#10933): a one-time download, not scored")


# InferenceX's SGLang DeepSeek recipes that launch --enable-symm-mem (added after scoring, session 56): the NVFP4 one
# only (dsr1_fp4_b200.sh at 1fc5d73, dsr1_fp4_b200_docker.sh at 2e46dba, dsr1_fp4_b200_slurm.sh at 1f1088b); the FP8
# ones never (dsr1_fp8_b200.sh at 1fc5d73, dsr1_fp8_b200_slurm.sh at 0b5f821)
INFERENCEX_SYMM_MEM_RECIPES = {("deepseek", "nvfp4")}
INFERENCEX_COLD_SYMM_MEM_SCORED = False   # True: score those cold runs as before (session 55's figures)


def cold_symmetric_pool(row: dict) -> str:
    """'' or why a row's measurement includes a cold server's one-time growth of SGLang's symmetric-memory pool:
    an InferenceX SGLang run on B200 measured before its client warmed up (INFERENCEX_WARMUP_FROM) whose recipe
    launches --enable-symm-mem (INFERENCEX_SYMM_MEM_RECIPES). With it, the TP all-reduce buffers of an eager forward
    are allocated from a NCCL pool (pynccl_allocator.py use_symmetric_memory) whose every new segment is registered
    on exit by ncclCommWindowRegister, a collective of all the TP ranks (the pool grows at run time when a burst
    needs larger buffers: sgl-project/sglang#36943); before sglang#12524 (merged 2025-11-03) every exit also walked
    the pool's snapshot() in Python. The start-up probe (8 tokens), the decode graphs (<= 256 tokens) and FlashInfer's
    autotune (model_runner _dummy_run: a decode of max-running-requests, 256) size the pool for small steps only, so
    the first prefills of the measured window grew it. The FP8 recipe launches no
    symmetric memory, and its cold runs under their chunk read as its warm ones (x0.6-0.75 at 4-16 clients)
    where the NVFP4 cold runs read x0.15-0.35 against x0.5-0.7 warm. How long the growth took is not recorded and is
    not a steady cost of inference, so the rows are not scored. Added after scoring; the rule reads the date and the
    recipe, never the measured latency."""
    if INFERENCEX_COLD_SYMM_MEM_SCORED or row["backend"] != "sglang" or row["system"] != "b200_sxm" \
            or not inferencex_run(row):
        return ""
    model = row["model_path"].lower()
    if not any(family in model and gemm == row["gemm_quant_mode"] for family, gemm in INFERENCEX_SYMM_MEM_RECIPES):
        return ""
    measured = measured_date(row)
    if not measured or measured >= INFERENCEX_WARMUP_FROM:
        return ""
    return (f"measured {measured}, before InferenceX's client warmed the server up (PR #480), on a recipe with "
            "--enable-symm-mem: the first prefills grew SGLang's symmetric-memory pool (a collective NCCL window "
            "registration per new segment, sglang#36943): a one-time cost, not scored")


# InferenceX ran DeepSeek-R1 FP8 on SGLang both plain (dsr1-fp8-b200-sglang, single_node/dsr1_fp8_b200.sh) and
# with EAGLE speculation (dsr1-fp8-b200-sglang-mtp, single_node/dsr1_fp8_b200_mtp.sh: --speculative-num-steps 2,
# --speculative-num-draft-tokens 3, --speculative-eagle-topk 1, TP 8 only) on one image (v0.5.9-cu130 for both:
# InferenceX issue #1154's image table); the row records neither key (added after scoring, session 55)
INFERENCEX_STP_MTP_PAIRS_SCORED = False
_LAUNCH_MEASUREMENTS: dict = {}   # (launch, measured date) -> the distinct measurements InferenceX's files hold of it


def _inferencex_launch(row: dict) -> tuple:
    measured = measured_date(row)
    image = re.search(r"image=([^;\s]+)", row["silicon_data_source"])
    return (row["backend"], row["system"], row["model_path"], image and image[1], measured,
            row["gemm_quant_mode"], row["moe_quant_mode"], row["isl"], row["osl"], concurrency(row),
            *(row[k] for k in ("tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")))


def stp_or_mtp_unknown(row: dict) -> str:
    """'' or why an InferenceX SGLang row's launch is not determined: InferenceX's files hold two different
    measurements of its launch (image, layout, precision, lengths, N) on one date, so one ran the speculative key
    beside the plain one (INFERENCEX_STP_MTP_PAIRS_SCORED) and the row does not say which; telling them apart by
    the measured TPOT would read the answer, so neither is scored (as inferencex_disagg_launch leaves an MTP and a
    non-MTP launch at one N). Reads the launch fields and the count of distinct measurements, not their values."""
    if INFERENCEX_STP_MTP_PAIRS_SCORED or row["backend"] != "sglang" or not inferencex_run(row):
        return ""
    if not _LAUNCH_MEASUREMENTS:
        for r in load():
            if r["backend"] == "sglang" and r["mode"] == "agg" \
                    and r["silicon_data_source"].startswith(INFERENCEX_SOURCES):
                _LAUNCH_MEASUREMENTS.setdefault(_inferencex_launch(r), set()).add(_rounded_measurement(r))
    found = _LAUNCH_MEASUREMENTS.get(_inferencex_launch(row), ())
    if len(found) < 2:
        return ""
    return (f"InferenceX measured this launch {len(found)} ways on one date: its plain and speculative (EAGLE, "
            "dsr1_fp8_b200_mtp.sh) keys ran on one image and the row does not say which it was")


# InferenceX added the DeepSeek-R1 TensorRT-LLM MTP keys dsr1-fp4-b200-trt-mtp and dsr1-fp8-b200-trt-mtp in PR #392
# (opened 2026-01-07, "Add MTP Benchmark Support for DeepSeek-R1 TRT") on the image its plain keys ran, release
# 1.1.0rc2.post2 (perf-changelog: PR #642 moved dsr1-fp4-b200-trt-mtp "from release:1.1.0rc2.post2", PR #632 the
# fp8 one to the 1.2 release; PRs #594 / #620 moved the plain keys to 1.2.0rc6.post2), so from that date a
# 1.1.0rc2.post2 DeepSeek run is plain or MTP and the row does not say which (added after scoring, session 56)
INFERENCEX_TRT_MTP_KEYS_FROM = "2026-01-07"
INFERENCEX_TRT_STP_MTP_SHARED_IMAGE = "1.1.0rc2.post2"
INFERENCEX_TRT_STP_OR_MTP_SCORED = False


def trt_stp_or_mtp_unknown(row: dict) -> str:
    """'' or why an InferenceX TensorRT-LLM DeepSeek row's speculation is not determined: measured on the
    1.1.0rc2.post2 image on or after the day InferenceX added its -trt-mtp keys on that image
    (INFERENCEX_TRT_MTP_KEYS_FROM), so it ran dsr1-*-b200-trt or dsr1-*-b200-trt-mtp (MTP 3, or 1 under DP
    attention) and nothing in the row tells them apart (the 1.2 images do: MTP_IMAGE). Reads the image and the
    date, not the measured latency; not scored unless INFERENCEX_TRT_STP_OR_MTP_SCORED."""
    if (INFERENCEX_TRT_STP_OR_MTP_SCORED or row["backend"] != "trtllm" or "deepseek" not in row["model_path"].lower()
            or row.get("backend_version") != INFERENCEX_TRT_STP_MTP_SHARED_IMAGE or not inferencex_run(row)):
        return ""
    measured = measured_date(row)
    if not measured or measured < INFERENCEX_TRT_MTP_KEYS_FROM:
        return ""
    return (f"measured {measured} on the {INFERENCEX_TRT_STP_MTP_SHARED_IMAGE} image, which InferenceX ran both "
            "plain and with MTP from its PR #392 (dsr1-*-b200-trt-mtp): the row does not say which")


# The gap-analysis rows whose batch_size x tp_size is N while attention_dp_size is empty (added after scoring, session
# 56): everywhere else in the file batch_size x attention_dp_size = N (137 of the 138 aggregated rows that record
# attention DP > 1), so these read as attention DP over the TP ranks as well as agg_pool's per-GPU figure of a TP
# replica; which one the deployment ran is not recorded
UNRECORDED_ATTENTION_LAYOUT_SCORED = False


def attention_layout_unrecorded(row: dict) -> str:
    """'' or why an aggregated row's attention layout is not determined: attention_dp_size empty, tp_size > 1 and
    batch_size x tp_size = N (the per-rank batch of attention DP over the TP ranks, or a per-GPU figure of a TP
    replica; agg_pool takes the latter). Reads the layout fields, not the measured latency; not scored unless
    UNRECORDED_ATTENTION_LAYOUT_SCORED."""
    if UNRECORDED_ATTENTION_LAYOUT_SCORED or row["mode"] != "agg" or row.get("attention_dp_size", "").strip():
        return ""
    tp, bs = _int(row.get("tp_size", ""), 1), _int(row.get("batch_size", ""), 0)
    n = re.search(r"silicon_concurrency=(\d+)", row["silicon_data_source"])
    if tp <= 1 or not bs or not n or bs * tp != int(n[1]):
        return ""
    return (f"batch_size {bs} x tp_size {tp} = N with attention_dp_size empty: attention DP over the {tp} TP ranks "
            "(the file's batch_size x attention_dp_size = N) or a per-GPU batch of a TP replica, not recorded")


def sa_bench_client(row: dict) -> bool:
    """A disaggregated InferenceX row (db-dump, or added after scoring, session 54: the 2026-03-25 / 2026-04-06 files'
    multi-node runs, whose srt-slurm recipes name `benchmark: type: "sa-bench"`, e.g. recipes/trtllm/b200-fp4/1k1k/
    stp/ctx1_gen5_tep8_batch32_eplb0_mtp0.yaml): its client is sa-bench's."""
    return row["mode"] == "disagg" and row["silicon_data_source"].startswith(INFERENCEX_SOURCES)


def client_range_ratio(row: dict) -> float:
    """The spread of the client's prompt and output lengths (each uniform in [ratio x L, L]): InferenceX's
    benchmark_serving.py for its aggregated runs and sa-bench for the disaggregated db-dump rows, 0.8; aiperf's
    fixed lengths (1.0) for the rest."""
    sa_bench = sa_bench_client(row)
    return CLIENT_RANGE_RATIO if sa_bench or inferencex_run(row) else 1.0


def sglang_ignore_eos_admission(row: dict, layout: dict) -> dict:
    """SGLang's admission of ignore_eos requests with the radix cache off (simulator/scheduling/ignore_eos.py), as
    the `engine` setting ignore_eos_admission, where both are sourced: InferenceX's client sends ignore_eos
    (benchmarks/benchmark_lib.sh run_benchmark_serving: kimbochen/bench_serving `--ignore-eos`) and the aggregated
    SGLang recipes of DeepSeek (dsr1_fp4_b200.sh, dsr1_fp8_b200.sh: `--disable-radix-cache` in every revision
    read) and Qwen3.5-397B (every qwen3.5_*_b200.sh read, docs/accuracy.md session 52) pass --disable-radix-cache,
    all of them TP launches. GLM-5's recipes and the DP-attention ones were not read for it: {} there, as for every
    other row. Added after scoring (session 71 G). The aiconfigurator generator's SGLang launches keep the radix
    cache, so {} there is sourced, not a default: generator/rule_plugin/sglang.rule (1089dfa) sets
    disable_prefix_cache only under `when ModelConfig.prefix > 0` (to false), and sglang/cli_args.j2 emits
    --disable-radix-cache only when it is set; SGLang 0.5.8.post1 (PyPI wheel) managers/schedule_policy.py:699 takes
    add_one_req_ignore_eos only when `getattr(self.tree_cache, "disable", True)` (session 71 T)."""
    model = row["model_path"].lower()
    if row["backend"] != "sglang" or row["mode"] != "agg" or layout.get("attention_dp", 1) > 1 \
            or not inferencex_run(row):
        return {}
    return {"ignore_eos_admission": True} if "deepseek" in model or "qwen3.5" in model else {}


def sglang_recv_interval(row: dict, layout: dict, n: int) -> dict:
    """SGLang's --scheduler-recv-interval where the row's launch set it, as the `engine` setting recv_interval:
    InferenceX's aggregated SGLang runs without DP attention of DeepSeek (benchmarks/dsr1_fp4_b200.sh,
    dsr1_fp8_b200.sh at 1fc5d73: 10 below 16 clients, else 30; 10 for fp8 at TP4), of GLM-5 in NVFP4
    (benchmarks/single_node/fixed_seq_len/glm5_fp4_b200.sh at 8eec0d4, the one revision stored: 10) and of
    Qwen3.5-397B (added after scoring, with its before/after in docs/accuracy.md; each stored revision of its SGLang
    recipes sets it but the first, benchmarks/qwen3.5_fp8_b200.sh at 10c3d8d, which launched NEXTN speculation
    (these rows are mapped without it): bf16 and fp8 10 below 16 clients, else 30, benchmarks/single_node/fixed_seq_len/
    qwen3.5_bf16_b200.sh at 8eec0d4 and single_node/qwen3.5_fp8_b200.sh at 01fa35c; NVFP4 10 up to 4 clients, else
    30, fixed_seq_len/qwen3.5_fp4_b200.sh at 8eec0d4; fixed_seq_len/qwen3.5_fp8_b200.sh at 36e26b6, a revision
    with later SGLang flags (--cuda-graph-max-bs-decode), took the NVFP4 rule, which differs at 8 clients only: the
    earlier revision is taken for the fp8 rows, measured 2026-03);
    {} elsewhere (SGLang's default 1; glm5_fp8_b200.sh sets none in both revisions read)."""
    model = row["model_path"].lower()
    if row["backend"] != "sglang" or layout.get("attention_dp", 1) > 1 or not inferencex_run(row):
        return {}
    if "glm-5" in model and row["gemm_quant_mode"] == "nvfp4":
        return {"recv_interval": 10}
    if "qwen3.5" in model:
        nvfp4 = row["gemm_quant_mode"] == "nvfp4"
        return {"recv_interval": 30 if (n > 4 if nvfp4 else n >= 16) else 10}
    if "deepseek" not in model:
        return {}
    fp8_tp4 = row["gemm_quant_mode"] == "fp8" and layout["tp"] == 4
    return {"recv_interval": 10 if n < 16 or fp8_tp4 else 30}


# SGLang's FLA L2-norm (layers/attention/fla/l2norm.py l2norm_fwd_kernel) declared its row count T constexpr until
# PR #31558 (merged 2026-07-17; #23448 of 2026-04-22 quotes main's kernel so): each new prefill token count compiled
L2NORM_RECOMPILE_MAPPED = True   # off: no compile charged, as before session 55
L2NORM_FIXED_NIGHTLY = "20260717"   # the first nightly date with PR #31558
L2NORM_LAST_RELEASE = (0, 5, 9)     # the last numbered release read as specializing (cut before #23448's 2026-04-22)
GDN_MODELS = ("qwen3.5", "qwen3-next")   # the models of the set with Gated DeltaNet layers (chunk_gated_delta_rule)
# One compile of the kernel on the host: sgl-project/sglang PR #31558's before/after on 2x H200 (TP2,
# Qwen3.6-35B-A3B-FP8, one new prefill length a request at 1 req/s): mean TTFT 131.49 -> 78.82 ms
L2NORM_COMPILE_S = (131.49 - 78.82) * 1e-3
# Same-class leads checked and NOT mapped (session 55, helper K; docs/accuracy.md). GLM-5's SGLang rows ran images
# nightly-dev-cu13-20260317 and -20260328 (their silicon_data_source), whose NSA backend takes the fused top-k output
# as the prefill page table (environ.py SGLANG_NSA_FUSE_TOPK = EnvBool(True)) and, unfused, the torch reference
# (nsa/transform_index.py: transform_index_page_table_prefill -> _ref, torch.gather): the Triton prefill kernel with
# page_table_stride_0 constexpr (sgl-project/sglang #38787, #36888; bounded by #37093, 2026-08-30) is of the later
# dsa/ tree (NSA -> DSA rename #25821, 2026-05-19). gpt-oss-120b on B200: gptoss_fp4_b200_trt.sh runs
# moe_config.backend TRTLLM and gptoss_fp4_b200.sh exports VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (TRTLLM-Gen kernels,
# routing inside, prebuilt cubins): triton_kernels' top-k (triton-lang/triton #10872, fixed by #10875) is not run.


def _sglang_build(row: dict) -> str:
    """The SGLang build a row ran: its version, or where that names an undated nightly its image tag, or that of
    the InferenceX row whose measurement it copies (inferencex_run: the gap-analysis files record neither)."""
    version = row.get("backend_version", "") or ""
    for source in (row, _INFERENCEX_ROWS.get(_rounded_measurement(row)) if inferencex_run(row) else None):
        if source is None:
            continue
        dated = re.search(r"nightly-dev-\d{8}", source.get("backend_version", "") + source["silicon_data_source"])
        if dated:
            return dated[0]
        if _release(source.get("backend_version", "")):
            return source["backend_version"]
    return version


# SGLang 0.5.8.post1's NVFP4 dense GEMMs on cuDNN, a graph and plans built per new token count (session 70 J). The
# release's default --fp4-gemm-backend is "auto" (server_args.py:438), which fp4_gemm passes through to FlashInfer
# (layers/quantization/modelopt_quant.py:121-137: backend = get_flashinfer_backend() -> mm_fp4(..., backend="auto");
# fp4_utils.py:55-78 leaves AUTO unresolved); the release pins flashinfer_python==0.6.1 (its METADATA), whose
# mm_fp4 "auto" runs cuDNN first on CUDA >= 13 with cuDNN >= 9.15 (gemm/gemm_base.py:2523-2557
# _heuristic_func_mm_fp4) and builds the cuDNN graph and its execution plans once per exact (M, N, K)
# (gemm_base.py:1659-1800, create_cudnn_execution_plans_fp4_gemm / build_plans_cudnn_fp4_gemm_graph, both
# @functools.cache on the shapes; _cudnn_gemm_fp4_requirement builds it on the call, :2418). An eager prefill
# (`disable-cuda-graph`) of a token count the server has not run pays it; decode steps replay CUDA graphs. The
# launches that leave the prefill's backend unset: NVIDIA/srt-slurm 5917791 recipes/b200-fp4/1k1k.yaml (STP
# variants; 8k1k.yaml sets flashinfer_trtllm on the prefill, its 7p2d flashinfer_cutlass; the 1k MTP variants
# flashinfer_trtllm). NVFP4 linears a DeepSeek-R1-0528-NVFP4-v2 rank runs (model_profiles/checkpoint_quant: only
# q_a/q_b/kv_a/kv_b and lm_head stay 16-bit): o_proj, the 3 dense layers' gate_up and down, the shared expert's
# gate_up and down: 5 (N, K) shapes, each one graph per new M (the cache is keyed by shape, not layer).
# OFF: the branch condition (cuDNN >= 9.15 in lmsysorg/sglang:v0.5.8.post1-cu130-runtime; CUTLASS first below it, no
# per-shape build) is not sourced, and what was read points below it (session 70 X, docs/accuracy.md): the release
# pins torch==2.9.1 (wheel METADATA), whose cu130 wheel pins nvidia-cudnn-cu13==9.13.0.50 (dynamo issue #5482:
# "PyTorch 2.9.1+cu130 and CuDNN 9.13"; nvidia-cosmos/cosmos-transfer2.5 PR #227); the 9.16.0.29 force-install for
# CUDA 13 images is sgl-project/sglang PR #17668 (opened 2026-01-24, the day after v0.5.8, for the cu13 image failing
# the check at server_args.py:4975, the line of this release), listed in v0.5.9's changelog; v0.5.8.post1 (PyPI
# 2026-02-05) is a patch release off v0.5.8 (its wheel lacks main's late-January PRs, e.g. #17789 Kimi-K2.5), so the
# fix is in it only if cherry-picked (not found). The release's own cuDNN check skips non-multimodal models (DeepSeek
# passes either way). On, the two scored rows move x0.06 -> x1.04 / x1.25 (docs/accuracy.md 70 J).
# Session 70 AA (docs/accuracy.md): the version gate above only orders the backends. mm_fp4(backend="auto") runs every
# backend's requirement check on each call (flashinfer 0.6.1 utils.py:1076-1096, 1141-1146), and the cuDNN one builds
# the graph and queries heuristics A+B at any cuDNN >= 9.10.2 (gemm_base.py:2418-2475), keyed by functools.cache on
# the exact shapes AND the `alpha` tensor (:2470; Tensor.__hash__ is id), i.e. per NVFP4 linear layer: 183 a
# DeepSeek-R1 rank (61 o_proj, 3x2 dense, 58x2 shared expert; EP>1 disables shared-expert fusion, deepseek_v2.py
# :2855). At 9.13 (CUTLASS runs) no plan is compiled, so PR #2545's 262 ms (graph + build_plans) is not its price;
# the graph + heuristics price per graph on sm100 is not published (J's 1.31 s = 183 x 7.2 ms). Still OFF.
FP4_CUDNN_PLANS_MAPPED = False
FP4_CUDNN_RECIPES = ("b200-fp4/1k1k.yaml stp_maxtpt[0]", "b200-fp4/1k1k.yaml stp_maxtpt[1]")   # prefill backend unset
FP4_CUDNN_RELEASES = ("0.5.8.post1",)   # read at the release (PyPI wheel) with its pinned flashinfer 0.6.1
FP4_CUDNN_SHAPES = 5
# One graph + plans of the NVFP4 block-scale GEMM with heur_mode A+B, as FlashInfer builds it: flashinfer-ai/flashinfer
# PR #2545 (2026-02-12), measured on Blackwell sm100 with cuDNN 9.21: "~262ms each"; 198 unique shapes ~52 s
FP4_CUDNN_PLAN_S = 0.262


def sglang_fp4_cudnn_plans(row: dict) -> dict:
    """{"prefill_recompile_s": FP4_CUDNN_SHAPES x FP4_CUDNN_PLAN_S} for a db-dump SGLang NVFP4 disaggregated row of a
    release read as passing "auto" to FlashInfer's cuDNN-first mm_fp4 (CUDA 13 image) whose srt-slurm recipe leaves
    the prefill's --fp4-gemm-backend unset (FP4_CUDNN_RECIPES); {} elsewhere. Added after scoring (session 70 J)."""
    if not FP4_CUDNN_PLANS_MAPPED or row["backend"] != "sglang" or row["gemm_quant_mode"] != "nvfp4" \
            or row.get("backend_version", "") not in FP4_CUDNN_RELEASES or "cu130" not in row["silicon_data_source"]:
        return {}
    recipe = srt_slurm_sglang_recipe(row)
    return {"prefill_recompile_s": FP4_CUDNN_SHAPES * FP4_CUDNN_PLAN_S} \
        if recipe and recipe[3] in FP4_CUDNN_RECIPES else {}


def sglang_l2norm_recompile(row: dict) -> dict:
    """{"prefill_recompile_s": L2NORM_COMPILE_S} for an SGLang row of a model with Gated DeltaNet layers on a release
    whose FLA L2-norm kernel specialized on the prefill's token count (`T: tl.constexpr` in l2norm_fwd_kernel, called
    on q and k by chunk_gated_delta_rule: a Triton compile, inline on each rank's host, the first time a prefill step
    of that many tokens runs; fixed by sgl-project/sglang PR #31558, merged 2026-07-17, after PRs #23448 (2026-04-22,
    "~90 ms each on L20Y") and #30403 (py-spy: compile bursts up to ~110 ms on the serving path) had reported it):
    releases up to 0.5.9 and nightlies dated before the fix; {} elsewhere. Added after scoring (session 55), with
    its before/after in docs/accuracy.md."""
    if not L2NORM_RECOMPILE_MAPPED or row["backend"] != "sglang" \
            or not any(m in row["model_path"].lower() for m in GDN_MODELS):
        return {}
    version = _sglang_build(row)
    nightly = re.search(r"nightly-dev-(\d{8})", version)
    release = _release(version)
    specializes = nightly[1] < L2NORM_FIXED_NIGHTLY if nightly else release is not None and \
        release <= L2NORM_LAST_RELEASE
    return {"prefill_recompile_s": L2NORM_COMPILE_S} if specializes else {}


def estimate_kwargs(row: dict) -> dict:
    """The row's model, layout and precision as whatif.api.estimate takes them (simulate_kwargs less the simulation's
    traffic, engine, cluster and scheduler limits): for the diagnostics that price one step of the row."""
    kw = simulate_kwargs(row)
    for key in ("traffic", "engine", "cluster", "max_num_seqs", "max_num_batched_tokens"):
        kw.pop(key, None)
    return kw


def simulate_kwargs(row: dict, rounds: int = SIM_ROUNDS) -> dict:
    """The keyword arguments of whatif.api.simulate for a row, by the rule in the module docstring."""
    recorded, row = row, sourced_release(row)
    system = row["system"]
    if system not in SYSTEMS:
        raise NotExpressible(f"system {system!r} is not mapped")
    n = concurrency(row)
    disagg = row["mode"] == "disagg"
    launch = None
    if disagg and (not row["prefill_num_workers"] or not row["decode_num_workers"]):
        if repeated_measurement(row):
            raise NotScored("the row records no worker counts; its measurement repeats a db-dump row that "
                            "records them (scored there)")
        if not INFERENCEX_DISAGG_MAPPED:
            raise NotScored("the row records no prefill_num_workers / decode_num_workers: pool sizes unknown "
                            "(its source's configurations vary them per concurrency at one per-worker layout; "
                            "INFERENCEX_DISAGG_MAPPED maps 100 of them, off by default)")
        launch = inferencex_disagg_launch(row)
    layout = disagg_launch_layout(launch, "decode") if launch else _layout(row, "decode_" if disagg else "")
    layout = sourced_layout(recorded, vllm_recipe_ep(row, layout), n)
    gpus = layout["tp"] * layout["pp"]
    kw = {"model": row["model_path"], "hardware": SYSTEMS[system], "kernel_engine": row["backend"],
          "prompt": _int(row["isl"]), "output": _int(row["osl"]), "gpus": gpus, **layout}
    capped = capped_below_load(row) or cold_server(row) or cold_symmetric_pool(row) or stp_or_mtp_unknown(row) \
        or trt_stp_or_mtp_unknown(row) or attention_layout_unrecorded(row)
    if capped:
        raise NotScored(capped)
    replicas = 1 if disagg else agg_pool(row, n)[0]
    total = gpus * replicas   # the deployment's GPUs: a disaggregated one's two pools together
    if disagg:
        pool = launch_pools(row, launch) if launch else \
            {**prefill_pool(row), "replicas": _int(row["decode_num_workers"])}
        total = pool["prefill_replicas"] * pool["prefill_tp"] * pool["prefill_pp"] + pool["replicas"] * gpus
    nodes = math.ceil(total / GPUS_PER_NODE[system])
    if nodes > 1:
        kw["nodes"] = nodes
    spec = (f"mtp:k={launch['mtp']}" if launch["mtp"] else None) if launch else speculation(row, layout)
    if spec:
        kw["techniques"] = [spec]
    kw.update(sglang_spec_v1_overlap(row, layout))
    kw.update(vllm_sync_scheduling(row))
    kw.update(vllm_sort_sampler(row))
    kw.update(row_precision(row))
    adp_recorded = _int(row.get(("decode_" if disagg else "") + "attention_dp_size", ""))
    kw.update(launch_settings(row, n, max(1, adp_recorded // layout.get("attention_dp", 1))))
    if launch:   # the recipe's decode max_batch_size (per attention-DP rank, TensorRT-LLM's) and its token budget
        kw.update(max_num_seqs=launch["decode_batch"],
                  max_num_batched_tokens=token_budget(row["backend"], launch["decode_batch"], _int(row["isl"])))
    vllm_recipe(row, n, kw)
    vllm_capture_size(row, kw)
    if TRTLLM_GPTOSS_MAPPED:
        trtllm_gptoss_checkpoint(row, kw)
        trtllm_gptoss_recipe(row, kw)
    if vllm_allreduce_fusion(row):
        kw["kernel_engine"] = VLLM_FUSION_PROFILE
    if sglang_allreduce_fusion(row, layout, worker_nodes(row, gpus, nodes)):
        kw["kernel_engine"] = SGLANG_FUSION_PROFILE
    if trtllm_nvls_off(row):
        kw["kernel_engine"] = TRTLLM_NVLS_OFF_PROFILE
    if srt_slurm_trtllm_pdl(row):
        kw["kernel_engine"] = TRTLLM_NVLS_OFF_PDL_PROFILE if trtllm_nvls_off(row) else TRTLLM_PDL_PROFILE
    kw.update(trtllm_recipe_graph_sizes(row))
    sglang_trtllm_checkpoint(row, kw)
    trtllm_deepseek_fp8_checkpoint(row, kw)
    trtllm_qwen3_32b_fp8_block(row, kw)
    if llama70b_trt_recipe(row):
        kw["max_num_batched_tokens"] = LLAMA70B_TRT_MAX_NUM_TOKENS
    if MOE_KERNELS_MAPPED:
        kw.update(trtllm_moe_kernels(row, layout, n))
    kw.update(inferencex_dsr1_trt_launch(row, layout, n))
    kw.update(sglang_moe_a2a(row, layout))
    kw["traffic"] = {"concurrency": n, "requests": n * min(rounds, profile_rounds(row)), "seed": 1}
    ratio = client_range_ratio(row)
    if ratio < 1:
        kw["traffic"]["range_ratio"] = ratio
    engine = {**adp_balance(row, layout), **sglang_recv_interval(row, layout, n),
              **sglang_ignore_eos_admission(row, layout), **trtllm_batch_wait(row, layout),
              **sglang_l2norm_recompile(row), **sglang_fp4_cudnn_plans(row)}
    if engine:
        kw["engine"] = engine
    if disagg:
        decode_moe, prefill_moe = srt_slurm_trtllm_moe(row)
        kw.update(decode_moe)
        kw["cluster"] = {**pool, **prefill_moe, **sglang_prefill_moe_a2a(row)}
    elif replicas > 1:
        kw["cluster"] = {"replicas": replicas}
    return kw


@dataclass
class Result:
    row: dict
    expressible: bool = False   # whatif accepts the row's model, GPU, layout and precision
    scored: bool = False        # simulated: the row enters the figures
    reason: str = ""
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def measured_ttft(self) -> float:
        return float(self.row["silicon_ttft_ms"])

    @property
    def measured_tpot(self) -> float:
        return float(self.row["silicon_tpot_ms"])

    def ratio(self, metric: str) -> float:
        pred = self.ttft_ms if metric == "ttft" else self.tpot_ms
        return pred / (self.measured_ttft if metric == "ttft" else self.measured_tpot)


def profile_means(per_round: list[float], total: int = PROFILE_ROUNDS) -> float:
    """The mean over `total` rounds of a run of which `per_round` (each round's mean, from the opening burst on)
    were simulated: all but the last as simulated, the unsimulated middle at the mean of the last two before the
    last, and the last (the drain) as simulated."""
    r = len(per_round)
    if r < 4 or r > total:
        raise ValueError(f"rounds: 4 to {total} simulated rounds extrapolate a {total}-round run, not {r}")
    steady = (per_round[-3] + per_round[-2]) / 2
    return (sum(per_round[:-1]) + (total - r) * steady + per_round[-1]) / total


# Added after scoring (session 55, helper D), off by default: which client measured the gap-analysis files without a
# job id is not recorded; aiconfigurator's only benchmark harness found for that era is its eval pipeline (10N).
AIC_EVAL_CLIENT_MAPPED = False
AIC_EVAL_CAMPAIGN = re.compile(r"aic-auto-gap-analysis/data/[a-z0-9_]+/[a-z]+/[^/;]+/[A-Za-z0-9.-]+_[^/;]+\.csv")


def aic_eval_client(row: dict) -> bool:
    """A row of the gap-analysis campaign whose files are named <org>_<model>.csv and carry no job id (TensorRT-LLM
    1.0.0rc3, SGLang 0.5.1.post1 / 0.5.8.post1, vLLM 0.12.0 on H100) measured by aiconfigurator's eval pipeline
    (src/aiconfigurator/eval/benchmarks/genai_perf_runner.py, both its genai-perf and its aiperf version: `--concurrency
    N --request-count 10N --warmup-request-count 2N`, streaming chat against a Dynamo frontend; tools/automation's
    example config.env evaluates VERSION=1.0.0rc3). Not established for these rows: mapped only where
    AIC_EVAL_CLIENT_MAPPED (off by default; --aic-eval-client)."""
    source = row.get("silicon_data_source", "")
    return AIC_EVAL_CLIENT_MAPPED and "gtl_job_id" not in source and bool(AIC_EVAL_CAMPAIGN.search(source))


def profile_rounds(row: dict) -> int:
    """Rounds of N requests the row's client measured: sa-bench's 10 for a disaggregated db-dump row (a Dynamo
    deployment launched by srt-slurm); InferenceX's 10 for its aggregated runs (INFERENCEX_SOURCES: its
    utils/bench_serving/benchmark_serving.py with --num-prompts 10N, benchmarks/benchmark_lib.sh
    run_benchmark_serving and the recipes: `--num-prompts $(( CONC * 10 ))`, after --num-warmups 2N requests it
    gathers before the main run starts, all 10N tasks then created at once behind a semaphore of N); aiconfigurator's
    eval pipeline's 10 where aic_eval_client maps it; the rest, aiperf's 50N."""
    sa_bench = sa_bench_client(row)
    inferencex = inferencex_run(row)
    if sa_bench:
        return SA_BENCH_ROUNDS
    if aic_eval_client(row):
        return AIC_EVAL_ROUNDS
    return INFERENCEX_ROUNDS if inferencex else PROFILE_ROUNDS


def client_means(result, n: int, total: int = PROFILE_ROUNDS) -> tuple[float, float]:
    """Mean TTFT (through the front end) and TPOT (ms) as the client averages its `total` measured rounds
    (profile_means)."""
    recs = sorted(result.records, key=lambda r: r.request.id)
    unfinished = [r for r in recs if r.finish_s is None]
    if unfinished:
        raise RuntimeError(f"{len(unfinished)} requests unfinished ({unfinished[0].status} {unfinished[0].reason})")
    rounds = [recs[k:k + n] for k in range(0, len(recs) - n + 1, n)]
    ttft = [statistics.fmean(r.served_ttft_s(result.frontend) for r in w) for w in rounds]
    tpot = [statistics.fmean([r.tpot_s for r in w if r.tpot_s is not None] or [0.0]) for w in rounds]
    return profile_means(ttft, total) * 1e3, profile_means(tpot, total) * 1e3


def whatif_refusal(row: dict) -> str:
    """Why whatif refuses the row's model, GPU, layout and precision as the rule maps them (each pool's layout of a
    disaggregated row); "" where it accepts them: a one-batch estimate (whatif.api.estimate, its own checks, no
    simulation) at the row's lengths, one request of which must fit the GPUs' memory, asked for a row that is not
    scored (NotScored) so that its expressible says what whatif can state, not whether the measurement is usable.
    Speculation and the engine's limits are not asked."""
    from whatif.api import estimate
    from whatif.errors import WhatifError
    try:
        if row["system"] not in SYSTEMS:
            raise NotExpressible(f"system {row['system']!r} is not mapped")
        disagg = row["mode"] == "disagg"
        layouts = [vllm_recipe_ep(row, _layout(row, "decode_" if disagg else ""))]
        if disagg:
            layouts.append(_layout(row, "prefill_"))
            if 1 < layouts[1].get("attention_dp", 1) < layouts[1]["tp"]:
                prefill_pool({**row, "prefill_num_workers": "1"})   # its refusal of a part-group attention DP
        precision = row_precision(row)
        for layout in layouts:
            gpus = layout["tp"] * layout["pp"]
            nodes = math.ceil(gpus / GPUS_PER_NODE[row["system"]])
            est = estimate(row["model_path"], SYSTEMS[row["system"]], gpus=gpus, batch=1, prompt=_int(row["isl"]),
                           output=_int(row["osl"]), kernel_engine=row["backend"], with_max_batch=False,
                           **({"nodes": nodes} if nodes > 1 else {}), **layout, **precision)
            if not est.fits:
                return f"one request does not fit {gpus} GPUs' memory at {layout}"
    except (NotExpressible, WhatifError) as exc:
        return str(exc).splitlines()[0]
    except Exception as exc:   # noqa: BLE001 - a bug in the mapping: named as one, never counted as expressible
        return f"internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return ""


def run_row(row: dict, rounds: int = SIM_ROUNDS) -> Result:
    from whatif.api import simulate
    from whatif.errors import WhatifError

    out = Result(row)
    t0 = time.perf_counter()
    try:
        total = profile_rounds(row)
        kw = simulate_kwargs(row, min(rounds, total))
        res = simulate(**kw)
        out.ttft_ms, out.tpot_ms = client_means(res, kw["traffic"]["concurrency"], total)
        out.expressible = out.scored = True
        out.extra = {"preemptions": sum(r.preemptions for r in res.records),
                     "kv_peak": max((i.get("kv_peak_fraction") or 0.0) for i in res.summary()["replicas"])}
    except NotScored as exc:   # the measurement, not whatif: expressible where whatif accepts the row
        refusal = whatif_refusal(row)
        out.expressible, out.reason = not refusal, str(exc) + (f"; whatif: {refusal}" if refusal else "")
    except NotExpressible as exc:
        out.reason = str(exc)
    except WhatifError as exc:
        out.reason = str(exc).splitlines()[0]
    except Exception as exc:   # noqa: BLE001 - a bug: recorded apart, never counted as expressible
        out.reason = f"internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    out.seconds = time.perf_counter() - t0
    return out


def subset(rows: list[dict], per_stratum: int = PER_STRATUM) -> list[dict]:
    """`per_stratum` rows per (engine, model, GPU, mode): those whose ids have the smallest SHA-1 (deterministic)."""
    strata: dict[tuple, list] = {}
    for r in rows:
        key = (r["backend"], r["model_path"], r["system"], r["mode"])
        strata.setdefault(key, []).append((hashlib.sha1(r["id"].encode()).hexdigest(), r["id"], r))
    picked = [x for members in strata.values() for x in sorted(members, key=lambda m: m[:2])[:per_stratum]]
    return [r for _, _, r in sorted(picked, key=lambda m: m[:2])]


def run_all(rows: list[dict], jobs: int = 1, rounds: int = SIM_ROUNDS) -> list[Result]:
    if jobs <= 1:
        return [run_row(r, rounds) for r in rows]
    import multiprocessing as mp
    from functools import partial
    # fresh workers every 100 rows: the pricing memos grow by several GB over the whole file
    with mp.get_context("fork").Pool(jobs, maxtasksperchild=100) as pool:
        return pool.map(partial(run_row, rounds=rounds), rows, chunksize=1)


# ---------------------------------------------------------------- scoring

def stats(results: list[Result], metric: str) -> dict:
    ratios = [r.ratio(metric) for r in results]
    if not ratios:
        return {"n": 0}
    ape = sorted(abs(x - 1) for x in ratios)
    return {"n": len(ratios), "mape": statistics.fmean(ape) * 100, "median_ape": statistics.median(ape) * 100,
            "within10": sum(a <= 0.10 for a in ape) / len(ape) * 100,
            "within25": sum(a <= 0.25 for a in ape) / len(ape) * 100,
            "bias": statistics.fmean(x - 1 for x in ratios) * 100,
            "median_ratio": statistics.median(ratios),
            "off3x": sum(x > 3 or x < 1 / 3 for x in ratios)}


GROUPS = (("all", lambda r: "all"), ("engine", lambda r: r.row["backend"]),
          ("model", lambda r: r.row["model_path"].split("/")[-1]), ("GPU", lambda r: r.row["system"]),
          ("concurrency", lambda r: band(concurrency(r.row))), ("ISL/OSL", lambda r: f"{r.row['isl']}/{r.row['osl']}"),
          ("mode", lambda r: r.row["mode"]),
          ("mode x engine", lambda r: f"{r.row['mode']} {r.row['backend']}"),   # disaggregated apart from agg
          ("mode x GPU", lambda r: f"{r.row['mode']} {r.row['system']}"))


def _fmt(s: dict) -> str:
    if not s.get("n"):
        return f"{'0':>4}"
    return (f"{s['n']:>4} {s['mape']:>8.1f} {s['median_ape']:>6.1f} {s['within10']:>5.0f} {s['within25']:>5.0f} "
            f"{s['bias']:>+8.1f} {s['median_ratio']:>6.2f} {s['off3x']:>4}")


def coverage(results: list[Result]) -> list[str]:
    """Rows expressible (whatif accepts model, GPU, layout, precision) and scored (simulated), overall, aggregated
    and by model: the lines `report` opens and closes with."""
    def line(rs: list[Result]) -> str:
        e, s = sum(r.expressible for r in rs), sum(r.scored for r in rs)
        return f"{e}/{s}/{len(rs)} ({e / max(len(rs), 1):.1%} / {s / max(len(rs), 1):.1%})"
    agg = [r for r in results if r.row["mode"] == "agg"]
    lines = [f"rows {len(results)}, expressible / scored / rows {line(results)}, aggregated {line(agg)}; "
             f"internal errors {sum(r.reason.startswith('internal error') for r in results)}"]
    for m in sorted({r.row["model_path"] for r in results}):
        lines.append(f"  {m.split('/')[-1]:<28} {line([r for r in results if r.row['model_path'] == m])}")
    return lines


def report(results: list[Result], worst: int = 8) -> str:
    ok = [r for r in results if r.scored]
    lines = coverage(results)[:1] + [""]
    head = (f"{'group':<34} {'n':>4} {'MAPE%':>8} {'med%':>6} {'<10%':>5} {'<25%':>5} {'bias%':>8} "
            f"{'med x':>6} {'>3x':>4}")
    for metric in ("ttft", "tpot"):
        lines += [f"{metric.upper()} (predicted / measured)", head]
        for name, key in GROUPS:
            groups: dict[str, list] = {}
            for r in ok:
                groups.setdefault(key(r), []).append(r)
            for k in sorted(groups):
                label = name + " " + k if name != "all" else "all"
                lines.append(f"{label[:34]:<34} {_fmt(stats(groups[k], metric))}")
        lines.append("")
        lines.append(f"worst {metric.upper()} rows:")
        for r in sorted(ok, key=lambda r: -abs(r.ratio(metric) - 1))[:worst]:
            meas = r.measured_ttft if metric == "ttft" else r.measured_tpot
            lines.append(f"  {r.row['id'][:70]:<70} measured {meas:9.1f} ms, predicted "
                         f"{(r.ttft_ms if metric == 'ttft' else r.tpot_ms):9.1f} ms (x{r.ratio(metric):.2f})")
        lines.append("")
    lines.append("leave-one-GPU-out: nothing is fitted on these rows, so each GPU's table above is out of sample")
    lines.append("")
    for title, test in (("not expressible (whatif refuses), by model and reason:", lambda r: not r.expressible),
                        ("expressible, not scored (the measurement), by model and reason:",
                         lambda r: r.expressible and not r.scored)):
        lines.append(title)
        counts: dict[tuple, int] = {}
        for r in filter(test, results):
            key = (r.row["model_path"], r.reason[:110])
            counts[key] = counts.get(key, 0) + 1
        for (model, reason), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {n:>4}  {model}: {reason}")
        lines.append("")
    lines.append("expressible / scored / rows by model (scored: what expressible counted until session 69):")
    return "\n".join(lines + coverage(results)[1:])


def write_table(results: list[Result], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for r in results:
            row = r.row
            try:
                n = concurrency(row)
            except NotExpressible:
                n = ""
            lay = {}
            try:
                lay = _layout(row, "decode_" if row["mode"] == "disagg" else "")
                if row["mode"] == "disagg" and not row["prefill_num_workers"] and INFERENCEX_DISAGG_MAPPED:
                    lay = disagg_launch_layout(inferencex_disagg_launch(row), "decode")
            except (ValueError, TypeError, NotExpressible):
                pass
            w.writerow([row["id"], row["model_path"], row["system"], row["backend"], row["backend_version"],
                        row["mode"], row["isl"], row["osl"], n, lay.get("tp", ""), lay.get("pp", ""),
                        lay.get("attention_dp", 1), lay.get("ep", 1),
                        row["gemm_quant_mode"], row["moe_quant_mode"], int(r.expressible), int(r.scored), r.reason,
                        f"{r.measured_ttft:.3f}", f"{r.measured_tpot:.4f}",
                        "" if r.ttft_ms is None else f"{r.ttft_ms:.3f}",
                        "" if r.tpot_ms is None else f"{r.tpot_ms:.4f}", r.extra.get("preemptions", ""),
                        f"{r.extra['kv_peak']:.3f}" if "kv_peak" in r.extra else "", f"{r.seconds:.2f}"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subset", action="store_true", help="the stratified sample (fast)")
    ap.add_argument("--jobs", type=int, default=1, help="processes")
    ap.add_argument("--rounds", type=int, default=SIM_ROUNDS, help="rounds of N requests simulated per row (4-50)")
    ap.add_argument("--out", type=Path, default=None, help=f"result table (csv; whole file default {OUT})")
    ap.add_argument("--filter", default="", help="only rows whose id contains this")
    ap.add_argument("--aic-eval-client", action="store_true",
                    help="measure the gap-analysis campaign without job ids as aiconfigurator's eval pipeline (10N)")
    args = ap.parse_args(argv)
    if args.aic_eval_client:
        global AIC_EVAL_CLIENT_MAPPED
        AIC_EVAL_CLIENT_MAPPED = True
    if not 4 <= args.rounds <= PROFILE_ROUNDS:
        print(f"--rounds: {args.rounds} is not valid; give 4 to {PROFILE_ROUNDS} simulated rounds", file=sys.stderr)
        return 2
    rows = load()
    if args.filter:
        rows = [r for r in rows if args.filter in r["id"]]
    if args.subset:
        rows = subset(rows)
    t0 = time.perf_counter()
    results = run_all(rows, args.jobs, args.rounds)
    print(report(results))
    print(f"\n{len(rows)} rows in {time.perf_counter() - t0:.1f} s ({args.jobs} jobs)")
    out = args.out or (None if (args.subset or args.filter) else OUT)
    if out:
        write_table(results, out)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
