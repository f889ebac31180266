"""Every paper claim's verdict, pinned (tests/test_claims.py): "in band" or "miss" for a scored claim,
else its kind. A change that moves one must change its pin here and say why in the commit; never a floor."""

VERDICTS = {
    'A-int4-throughput_at_max_batch': 'miss',                 # FineQuant: 'up to 3.65 times higher throughput o
    'A-bitplane-tpot': 'miss',                                # Efficient Arbitrary Precision Acceleration: 'up
    'A-dfloat11-weights_bytes': 'illustrative',               # DFloat11: 'reduces LLM size by 30%' (Llama-3.1-4
    'A-dfloat11-max_context': 'illustrative',                 # DFloat11: 'with a fixed GPU memory budget, 5.3-1
    'A-int4-weights_bytes': 'in band',                        # EfficientLLM: 'int4 quantization cuts memory/ene
    'A-int4-tpot': 'no figure',                               # A Comprehensive Evaluation of Quantization Strat
    'A-prune-weights_bytes': 'illustrative',                  # Compresso: 'prunes LLaMA-7B to 5.4B'
    'A-compress_then_prompt-weights_bytes': 'illustrative',   # Compress, Then Prompt: '8x compressed LLaMA-7B (
    'A-vq-weights_bytes': 'illustrative',                     # PV-Tuning: 'Pareto-optimal quantization for Llam
    'A-shiftaddllm-weights_bytes': 'in band',                 # ShiftAddLLM: 'more than 80% memory and energy re
    'A-prune-e2e': 'illustrative',                            # ZipLM: 'when compressing GPT2 model, it outperfo
    'B-kivi-max_batch': 'miss',                               # enables up to 4x larger batch size (Llama-2-7B,
    'B-kivi-throughput_at_max_batch': 'in band',              # 2.35x ~ 3.47x throughput on real LLM inference w
    'B-kivi-memory_total': 'in band',                         # 2.6x less peak memory usage (including the model
    'B-gear-throughput_at_max_batch': 'in band',              # up to 2.38x throughput improvement (4-bit, near-
    'B-gear-memory_total': 'conditional',                     # reducing peak-memory size up to 2.29x
    'B-mikv-kv_bytes_per_token': 'no figure',                 # state-of-the-art trade-off between compression r
    'B-minicache-kv_bytes_per_token': 'miss',                 # LLaMA-2-7B with 4-bit MiniCache: compression rat
    'B-minicache-kv_bytes_per_token-2': 'in band',            # On the ShareGPT dataset, LLaMA-2-7B with cross-l
    'B-minicache-throughput_at_max_batch': 'miss',            # enhances inference throughput by approximately 5
    'B-minicache-memory_total': 'conditional',                 # reduces the memory footprint by 41% compared to
    'B-think-kv_cache_bytes': 'illustrative',                 # reduction in memory costs by over 20% compared w
    'B-think-max_batch': 'illustrative',                      # ThinK with KIVI: batch size from 4x (KIVI alone)
    'B-think-max_batch-2': 'in band',                         # ThinK with KIVI enables up to a 5x increase in b
    'B-kv_head_compression-kv_bytes_per_token': 'illustrative',  # compress half of KV heads (MHA -> GQA)
    'B-kv_head_compression-kv_bytes_per_token-2': 'illustrative',  # or even three-quarters of KV heads
    'B-mla_conversion-kv_bytes_per_token': 'illustrative',    # X-EcoMLA: 6.4x KV cache compression for Llama3.2
    'B-mla_conversion-kv_bytes_per_token-2': 'illustrative',  # X-EcoMLA: 10.6x compression with less than 0.1%
    'C-h2o-e2e': 'in band',                                   # With the same batch size, H2O can reduce the lat
    'C-h2o-throughput': 'conditional',                        # H2O improves throughput over DeepSpeed Zero-Infe
    'C-streamingllm-tpot': 'in band',                         # StreamingLLM outperforms the sliding window reco
    'C-scissorhands-kv_cache_bytes': 'illustrative',          # Scissorhands reduces the inference memory usage
    'C-keyformer-e2e': 'miss',                                # Keyformer's reduction of KV cache reduces infere
    'C-keyformer-throughput_at_max_batch': 'in band',         # Keyformer improves token generation throughput b
    'C-razorattention-kv_cache_bytes': 'in band',             # RazorAttention achieves a reduction in KV cache
    'C-duoattention-memory_total': 'in band',                 # DuoAttention reduces long-context inference memo
    'C-duoattention-tpot': 'conditional',                     # DuoAttention speeds up decoding by up to 1.50x f
    'C-duoattention-ttft': 'in band',                         # DuoAttention accelerates pre-filling by up to 1.
    'C-duoattention-memory_total-2': 'in band',               # DuoAttention reduces long-context inference memo
    'C-duoattention-tpot-2': 'conditional',                   # DuoAttention speeds up decoding by up to 2.18x f
    'C-duoattention-ttft-2': 'conditional',                   # DuoAttention accelerates pre-filling by up to 1.
    'C-longgen-kv_cache_bytes': 'in band',                    # At 128K LongGen reduces KV cache memory by 62%
    'C-longgen-ttft': 'in band',                              # At 128K LongGen achieves 1.67x prefilling speedu
    'C-longgen-tpot': 'miss',                                 # At 128K LongGen achieves 1.41x decoding speedup
    'C-gemfilter-ttft': 'in band',                            # GemFilter achieves a 2.4x speedup compared to st
    'C-gemfilter-memory_total': 'in band',                    # GemFilter reduces GPU memory usage by 30%
    'C-lazyeviction-kv_cache_bytes': 'illustrative',          # LazyEviction reduces KV cache size by 50% on mat
    'C-windowkv-kv_cache_bytes': 'illustrative',              # WindowKV maintains performance while using only
    'C-d2o-throughput_at_max_batch': 'conditional',           # D2O enhances inference throughput by more than 3
    'C-h2o-throughput-2': 'illustrative',                     # ALISA improves the throughput of baseline system
    'C-h2o-throughput_at_max_batch': 'illustrative',          # ALISA improves the throughput of baseline system
    'C-kvmerger-throughput_at_max_batch': 'no figure',        # KVMerger: 'adaptive KV cache compression for lon
    'C-ems-tpot': 'no figure',                                # EMS: 'preserves 95% retrieval accuracy with a ca
    'C-elastic_cache-throughput_at_max_batch': 'no figure',   # Elastic Cache 'boosts efficiency' with 'an arbit
    'C-prefixkv-throughput_at_max_batch': 'no figure',        # PrefixKV 'exhibits superior inference efficiency
    'C-tim-throughput': 'no figure',                          # TIM/TIMRUN 'sustains high inference throughput,
    'C-speckv-tpot': 'no figure',                             # SpecKV: 'higher accuracy than existing baselines
    'C-specpc-ttft': 'no figure',                             # SpecPC: 'uses the draft model's attention activa
    'D-tidaldecode-tpot': 'in band',                          # TidalDecode reduces LLM decoding latency by up t
    'D-tokenselect-prefill_attention_s': 'conditional',       # TokenSelect: up to 23.84x speedup in attention c
    'D-tokenselect-e2e': 'conditional',                       # TokenSelect: up to 2.28x acceleration in end-to-
    'D-double_sparsity-decode_attention_s': 'miss',           # Double Sparsity: up to 14.1x acceleration in att
    'D-double_sparsity-e2e': 'miss',                          # Double Sparsity: 1.9x improvement in end-to-end
    'D-double_sparsity-tpot': 'illustrative',                 # Double Sparsity-Offload: 16.3x decoding speed ov
    'D-lserve-ttft': 'miss',                                  # LServe accelerates LLM prefilling by up to 2.9x
    'D-lserve-tpot': 'conditional',                           # LServe accelerates decoding by 1.3-2.1x over vLL
    'D-shadowkv-max_batch': 'in band',                        # ShadowKV supports up to 6x larger batch sizes (L
    'D-shadowkv-decode_throughput': 'in band',                # ShadowKV boosts throughput by up to 3.04x on an
    'D-a2ats-throughput_at_max_batch': 'conditional',         # A^2ATS increases long-context serving throughput
    'D-a2ats-max_batch': 'no figure',                         # A^2ATS enables long-context serving with larger
    'D-minference-ttft': 'in band',                           # MInference reduces pre-filling latency by up to
    'D-minference-ttft-2': 'no figure',                       # Dense baseline: 30 minutes for an 8B LLM to pre-
    'D-sale-prefill_attention_s': 'conditional',              # SALE: at least 3.36x speedup on Llama-3.1-8B for
    'D-sale-prefill_attention_s-2': 'in band',                # SALE's selection overhead is approximately 11% o
    'D-lm_infinite-tpot': 'miss',                             # LM-Infinite: 2.72x decoding speedup (at 32K)
    'D-hyperattention-prefill_attention_s': 'in band',        # HyperAttention: 5-fold speedup on a single atten
    'D-s2_attention-prefill_attention_s': 'miss',             # S2-Attention: as much as 25.3X wall-clock attent
    'D-s2_attention-e2e': 'miss',                             # S2-Attention: resulting in ... 10X inference lat
    'D-recycled_attention-tpot': 'no figure',                 # Recycled Attention: 'achieves comparable speedup
    'D-hip-ttft': 'no figure',                                # HiP 'significantly reduces prompt (i.e., prefill
    'D-hip-tpot': 'no figure',                                # HiP 'significantly reduces prompt (i.e., prefill
    'D-actqkv-tpot': 'no figure',                             # ActQKV: 'state-of-the-art performance with compet
    'E-hydragen-throughput': 'in band',                       # batch size 1K, tensor parallelism across eight A
    'E-hydragen-throughput-2': 'miss',                        # up to 32x end-to-end throughput (over 30x with a
    'E-hydragen-throughput-3': 'in band',                     # with a high batch size, increasing the prefix le
    'E-prefix_caching-throughput': 'in band',                 # (Hydragen's baseline, vLLM) increasing the prefi
    'E-cacheblend-ttft': 'conditional',                       # reduces time-to-first-token (TTFT) by 2.2-3.3X c
    'E-cacheblend-throughput': 'in band',                     # increases the inference throughput by 2.8-5X com
    'E-cache_craft-throughput': 'illustrative',               # with continuous batching on a real production wo
    'E-cache_craft-e2e': 'illustrative',                      # 2X reduction in end-to-end response latency over
    'E-ape-ttft': 'conditional',                              # APE can achieve an end-to-end 4.5x speedup by re
    'E-ape-e2e': 'conditional',                               # APE can achieve an end-to-end 4.5x speedup for a
    'E-pie-ttft': 'in band',                                  # PIE reduces computational overhead by over 85% c
    'E-cachegen-ttft': 'conditional',                         # compared to recent methods that handle long cont
    'E-refrag-ttft': 'conditional',                           # REFRAG: 30.85x the time-to-first-token accelerat
    'E-visual_token_pruning-ttft': 'no figure',               # pruning 50% visual tokens while retaining more t
    'E-color-kv_cache_bytes': 'illustrative',                 # CoLoR improves the retrieval performance by 6% w
    'E-encoder_decoder-ttft': 'miss',                         # encoder-decoder architectures achieve 47% lower
    'E-encoder_decoder-throughput': 'miss',                   # encoder-decoder architectures achieve ... 4.7x h
    'F-medusa-tpot': 'in band',                               # Medusa-1 can achieve over 2.2x speedup without c
    'F-medusa-tpot-2': 'conditional',                         # Medusa-2 further improves the speedup to 2.3-3.6
    'F-speculative-tpot': 'miss',                             # SpecDec++ (llama-2-chat 7B & 70B): our adaptive
    'F-speculative-tpot-2': 'miss',                           # SpecDec++ on Alpaca: an additional 7.2% improvem
    'F-speculative-throughput': 'in band',                    # Batch Speculative Decoding Done Right (Vicuna-7B
    'F-speculative-throughput-2': 'miss',                     # Batch Speculative Decoding Done Right (Qwen3-8B/
    'F-speculative-tpot-3': 'no figure',                      # Batch Speculative Decoding Done Right: EQSPEC ex
    'F-speculative-tpot-4': 'conditional',                    # PEARL: a superior speedup performance up to 3.79
    'F-speculative-tpot-5': 'in band',                        # PEARL: a superior speedup performance up to ...
    'F-speculative-tpot-6': 'conditional',                    # SpecTr: a wall clock speedup of 2.13X
    'F-speculative-tpot-7': 'conditional',                    # SpecTr: a further 1.37X speedup over speculative
    'F-speculative-tpot-8': 'illustrative',                   # Direct Alignment: Llama 2 Chat Drafter 115M ...
    'F-ngram-tpot': 'in band',                                # Token Recycling ... achieves approximately 2x sp
    'F-ngram-tpot-2': 'illustrative',                         # CopySpec: up to 2.35x on CNN/DM
    'F-ngram-tpot-3': 'illustrative',                         # CopySpec: 3.08x on the second turn of select MT-
    'F-medusa-tpot-3': 'in band',                             # Parallel Prompt Decoding (PPD): up to 2.49x spee
    'F-ngram-tpot-4': 'illustrative',                         # Aggressive Decoding (Input-guided): a 7x-9x spee
    'F-speculative-tpot-9': 'miss',                           # RAPID: more than 2x speedups for long-context in
    'F-sparse_self_speculative-tpot': 'in band',              # TriForce: up to 2.31x on an A100 GPU (Llama2-7B-
    'F-self_speculative-tpot': 'conditional',                 # DEL: overall speedups of 2.16x~2.50x over vanill
    'F-medusa-tpot-4': 'illustrative',                        # Chimera: an average latency speedup ratio of 2.7
    'F-eagle-tpot': 'conditional',                            # MSD boosts inference speed by up to 2.29x for LL
    'F-eagle-tpot-2': 'conditional',                          # MSD boosts inference speed by up to 2.46x for LL
    'F-eagle-tpot-3': 'in band',                              # FLASH: up to 2.55x speed-up on visual instructio
    'F-eagle-tpot-4': 'illustrative',                         # Scylla: 'Industrial inference engine deployments
    'F-hidden_transfer-tpot': 'no figure',                    # Hidden Transfer: 'we outperform all the single-m
    'F-s2d-tpot': 'no figure',                                # S2D: 'our draft models perform better than basel
    'G-diffusion-e2e': 'illustrative',                        # dParallel: 'When applied to the LLaDA-8B-Instruc
    'G-diffusion-e2e-2': 'illustrative',                      # dParallel: 'On the MBPP benchmark, it cuts decod
    'G-diffusion-e2e-3': 'illustrative',                      # Learn2PD: 'Experiments on the LLaDA benchmark de
    'G-diffusion-e2e-4': 'illustrative',                      # Learn2PD: 'and up to 57.51x when combined with K
    'G-diffusion-throughput': 'illustrative',                 # LocalLeap: 'achieves 6.94x throughput improvemen
    'G-diffusion-e2e-5': 'illustrative',                      # SchED: 'on instruction-tuned models, it achieves
    'G-diffusion-e2e-6': 'illustrative',                      # CCD: 'delivering up to 3.48x speedup alongside 3
    'G-diffusion-throughput-2': 'illustrative',               # FreeDave: 'is proven to boost the inference thro
    'G-diffusion-e2e-7': 'no figure',                         # dKV-Cache: 'dKV-Cache, in final, achieves from 2
    'G-lexical_units-tpot': 'illustrative',                   # Lexical Unit Decoding: '33% speed up on natural
    'G-superposed-decode_throughput': 'in band',              # Superposed Decoding: 'k drafts from Superposed D
    'H-skip_decode-tpot': 'illustrative',                     # SkipDecode can obtain 2x to 5x inference speedup
    'H-skip_decode-tpot-2': 'illustrative',                   # SkipDecode can obtain 2x to 5x inference speedup
    'H-early_exit-tpot': 'no figure',                         # (SkipDecode, on token-level early exit) they can
    'H-ffn_skip-tpot': 'no figure',                           # FFN-SkipLLM ... can skip 25-30% of FFN blocks of
    'H-layer_skip-tpot': 'illustrative',                      # (Unified Layer Skipping) selects the number of l
    'H-layer_skip-tpot-2': 'no figure',                       # (FiRST) reduces inference latency by using layer
    'K-lean_attention-decode_attention_s': 'in band',         # an average of 2.6x attention execution speedup o
    'K-lean_attention-decode_attention_s-2': 'miss',          # up to 8.33x attention speedup over FlashAttentio
    'K-paged_kv-tpot': 'in band',                             # (vAttention) generates tokens up to 1.97x faster
    'K-paged_kv-tpot-2': 'in band',                           # (vAttention, section 7.2) highest gain 1.3x Llama-3
    'K-paged_kv-kv_cache_bytes': 'no figure',                 # (vLLM) near-zero waste in KV cache memory: a seq
    'K-naive_attention-prefill_attention_s': 'no figure',     # (The I/O Complexity of Attention) standard atten
    'J-chunked_prefill-capacity_rps': 'in band',              # Sarathi-Serve improves serving throughput within
    'J-disaggregation-capacity_rps': 'miss',                  # DistServe sustains 4.6x the per-GPU request rate
    'J-disaggregation-capacity_rps-2': 'miss',                # DistServe can serve 7.4x more requests ... compa
    'J-disaggregation-slo_scale': 'in band',                  # DistServe: 1.74x tighter SLO than vLLM for the O
    'J-disaggregation-slo_scale-2': 'in band',                # DistServe: 1.8x tighter SLO than DeepSpeed-MII f
    # (session 69 D: MII on deepspeed-mii, its loop forms no step ahead: 1.385x -> 1.29x, a miss; session 69 K:
    # the release's own 100/300 requests and DistServe's Ray-awaited loop: 1.391x, in band by 0.5%, fragile)
    'J-disaggregation-slo_scale-3': 'miss',                   # DistServe can serve ... 12.6x tighter SLO, compa
    'J-chunked_prefill-peak_goodput_rps': 'in band',          # DeepSpeed-FastGen: up to 2.3x higher effective t
    'J-chunked_prefill-capacity_rps-2': 'in band',            # Sarathi-Serve: up to 3.7x higher serving capacit
    'J-chunked_prefill-e2e_at_throughput': 'conditional',  # DeepSpeed-FastGen: 2x lower latency on average (th
    'J-chunked_prefill-throughput_at_e2e': 'conditional',    # DeepSpeed-FastGen: up to 2x higher throughput (1.
    'J-replicas-finished_rps': 'illustrative',                # DeepSpeed-FastGen: given that the throughput of
    'J-chunked_prefill-p95_itl': 'in band',                   # DeepSpeed-FastGen: up to 3.7x lower (token-level
    'J-continuous_batching-mean_e2e': 'conditional',          # Flover brings over 11x inference speedup on GPT
    'J-prefix_caching-output_tok_s': 'illustrative',          # BatchLLM outperforms vLLM by 1.1x to 2x on a set
    'J-chunked_prefill-capacity_rps-3': 'in band',            # Sarathi-Serve (when used with pipeline parallelism
    'J-paged_kv-mean_ttft': 'miss',                           # vAttention: processing input prompts up to ... 1
    'J-paged_kv-mean_ttft-2': 'miss',                         # vAttention: processing input prompts up to 3.92x
    'J-disaggregation-capacity_rps-3': 'miss',                # DistServe: 2.75x the per-GPU request rate of vLLM
    'J-disaggregation-capacity_rps-4': 'miss',                # DistServe: 1.57x the per-GPU request rate of DeepS
    'J-disaggregation-capacity_rps-5': 'miss',                # DistServe: 4.24x the per-GPU request rate of vLLM
    'J-disaggregation-capacity_rps-6': 'miss',                # DistServe: 1.77x the per-GPU request rate of DeepS
    'J-disaggregation-slo_scale-4': 'conditional',            # DistServe: 2.59x tighter SLO than DeepSpeed-MII fo
    # (session 73 L: plot.ipynb cell 91's OPT-66B chatbot SLO-scale panel, 0.75 req/s a GPU; both carried by the
    # baseline: the release's own vLLM curve (cell 92) crosses 90% at 2.3x the SLO, whatif's at 1.21x)
    'J-disaggregation-slo_scale-5': 'miss',                   # DistServe: 3.14x tighter SLO than vLLM for the O
    'J-disaggregation-slo_scale-6': 'miss',                   # DistServe: 1.8x tighter SLO than DeepSpeed-MII f
    'I-gh200-ttft': 'conditional',                            # closely-coupled GH200 achieves 1.9x-2.7x faster
    'I-gh200-ttft-2': 'in band',                              # closely-coupled GH200 achieves 1.9x-2.7x faster
    'I-gh200-ttft-3': 'no figure',                            # GH200 remains CPU-bound up to 4x larger batch si
    'I-cxl-tpot': 'no figure',                                # (CXL memory for long-context LLM work) employing
    'I-tpi_llm-hbm_bytes': 'in band',                         # TPI-LLM cuts the peak memory footprint of Llama
    'I-flexgen-throughput': 'in band',                        # OPT-30B on one T4, prompt 512: FlexGen 7.32 tok/
    'I-flexgen-throughput-2': 'in band',                      # OPT-30B on one T4, prompt 512: FlexGen 7.32 tok/
    'I-flexgen-throughput-3': 'in band',                      # OPT-30B on one T4, prompt 1024: FlexGen 3.50 tok
    'I-flexgen-throughput-4': 'in band',                      # OPT-30B on one T4, prompt 1024: FlexGen 3.50 tok
    'I-flexgen-throughput-5': 'in band',                      # OPT-6.7B on one T4, prompt 512: FlexGen 25.26 to
    'I-flexgen-throughput-6': 'in band',                      # OPT-6.7B on one T4, prompt 512: FlexGen 25.26 to
    'I-zero_inference-throughput': 'in band',                 # OPT-6.7B on one T4, prompt 512 (FlexGen's Table
    'I-zero_inference-hbm_bytes': 'illustrative',             # DeepSpeed Inference: 'It can inference 25x large
    'I-llm_in_a_flash-tpot': 'in band',                       # OPT-6.7B on an RTX 4090, per-token latency: naiv
    'I-expert_offload-tpot': 'illustrative',                  # M2R2: ahead-of-time expert loading into HBM give
    'I-instinfer-throughput': 'conditional',                  # for a 13B model using an NVIDIA A6000 GPU, InstI
    'I-instinfer-throughput-2': 'miss',                       # InstA (dense) is 6.85x FlexGen at batch 64 (OPT-
    'I-instinfer-throughput-3': 'conditional',                # Llama-2-13B (2048 in / 2048 out): InstA-SparF at
    'I-lamina-cost_per_mtok_at_max_batch': 'illustrative',    # Lamina can provide 1.48x-12.1x higher estimated
    'I-fastswitch-tpot': 'illustrative',                      # FastSwitch outperforms the state-of-the-art LLM
    'I-sentencekv-kv_cache_bytes': 'no figure',               # sentence-level semantic vectors stored on the GP
    'I-sentencekv-tpot': 'no figure',                         # maintaining stable inference latency, even for e
}
