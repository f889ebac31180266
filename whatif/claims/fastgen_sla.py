"""DeepSpeed-FastGen's effective-throughput SLA, as its benchmark scores a request (DeepSpeedExamples
benchmarks/inference/mii/src/plot_effective_throughput.py: validate_prompt_latency_SLA with
validate_token_ema_latency_SLA): the first token within prompt_tokens / 512 s, and the exponential moving
average (pandas ewm, span 16) of the gaps between the following tokens under 1 / (generation tok/s) at every
token. Effective throughput is the run's requests per second (first start to last end) times the share that
meets it (its calc_throughput x num_req_ok / n)."""
from __future__ import annotations

import numpy as np

PROMPT_TOKENS_PER_S = 512       # the benchmark's SLA_PROMPT_TOKENS_PER_SEC
EMA_SPAN = 16                   # the benchmark's EMA_SPAN


def ema(values: np.ndarray, span: int = EMA_SPAN) -> np.ndarray:
    """pandas Series.ewm(span=span).mean() (adjust=True): each point the (1 - a)^age-weighted mean so far."""
    a = 2.0 / (span + 1.0)
    num = den = 0.0
    out = np.empty(len(values))
    for i, x in enumerate(values):
        num = num * (1.0 - a) + x
        den = den * (1.0 - a) + 1.0
        out[i] = num / den
    return out


def meets(record, gen_tokens_per_s: float, prompt_tokens_per_s: float = PROMPT_TOKENS_PER_S) -> bool:
    """Whether one finished request meets the SLA (an unfinished one never does)."""
    if record.finish_s is None or record.ttft_s is None:
        return False
    if record.ttft_s > record.request.prompt / prompt_tokens_per_s:
        return False
    gaps = np.diff(np.asarray(record.token_times, dtype=float))
    return bool(len(gaps) == 0 or np.all(ema(gaps) < 1.0 / gen_tokens_per_s))


def effective_throughput_rps(result, gen_tokens_per_s: float) -> float:
    """Requests meeting the SLA per second of the run (first arrival to last finish)."""
    records = result.records
    finishes = [r.finish_s for r in records if r.finish_s is not None]
    if not finishes:
        return 0.0
    window = max(finishes) - min(r.request.arrival_s for r in records)
    ok = sum(meets(r, gen_tokens_per_s) for r in records)
    return ok / window if window > 0 else 0.0
