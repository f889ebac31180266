"""One TP-8 Qwen3-235B qkv_proj shard (m=8192, n=1152, k=4096): per-term GEMM prices, fp8 per-tensor vs bf16."""
from whatif.roofline.kernel_models.params import params_for, DTYPE_BYTES, ceilings
from whatif.roofline.kernel_models.gemm import gemm_parts, gemm_time
from whatif.specs.hardware import load_system
for sysname, arch in [("dgx-h100", "hopper"), ("mi300x-8x", "cdna3")]:
    gpu = load_system(sysname).gpu
    c = ceilings(gpu)
    for (m, n, k) in [(8192, 1152, 4096), (8192, 1024, 4096), (8192, 4096, 4096)]:
        row = []
        for d in ("bf16", "fp8"):
            p = params_for("gemm", arch, d, "vllm").params
            tc, tm, tq = gemm_parts(m, n, k, DTYPE_BYTES[d], c.peak_flops(d), c, p)
            t = gemm_time(m, n, k, d, gpu, p)
            row.append(f"{d}: {t*1e6:.0f} us (compute {tc*1e6:.0f}, quant {tq*1e6:.0f} = row "
                       f"{p.quant_row_s*m*1e6:.0f} + pass {(tq - p.quant_s - p.quant_row_s*m)*1e6:.0f})")
        print(sysname, (m, n, k), " | ".join(row))
