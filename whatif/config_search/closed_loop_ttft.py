"""A replica's TTFT at full load: a closed loop of B clients (the search's operating point without a TTFT target),
as the simulator serves it (simulator/closed_loop.py), not a lone prompt's prefill.

Model (stated; tests/test_search_loop_ttft.py checks it against the simulator's closed loop through its front end):
the B clients start together and, at fixed lengths, stay in groups: the prompts one prefill pass completes
together decode together and are sent again together. A group of prompts is what one pass of the engine's token
budget C holds (n = C // prompt whole prompts, a rank's share under attention DP; a prompt above C is a group of its
own, its chunks in sequence). Each group's prefill takes its share of the batch's prefill time ttft(B) (the
estimate's passes; a partial last pass in proportion to its prompts). Then, by how the engine joins prompts to
decodes (the engine spec):
- prefill first, decodes waiting (SGLang's default, `priority: prefill` without chunked prefill): the running
  decodes stall while any prompt prefills, so the whole batch finishes in one step and is resent as one burst, which
  drains in the budget's passes: a prompt's TTFT is the end of its group's pass (mean over the burst).
- mixed steps (vLLM's chunked prefill, TensorRT-LLM's whole prompts beside decodes): groups prefilled in successive
  passes keep decoding and finish a pass apart, so they come back a pass apart, each while the group before it is
  prefilling: the first group's TTFT is its own pass, every later one's its own plus the pass before it.
A batch within one pass (B <= n) is one group either way: ttft(B).
The front end (simulator/closed_loop.py; the engine spec's `frontend`, f = per request + per prompt token, e.g.
4 ms + 1.5 us x 1,000 = 5.5 ms) tokenizes one request at a time, and a client's TTFT runs from its send
(Record.served_ttft_s), so a burst of B requests sent at 0 reaches the engine one f apart, the k-th at k f. An idle
engine starts a pass on the first arrival and each pass takes what has arrived by its start (up to n): the passes
hold 1, then ~ (pass time / f) prompts, growing to n when a prompt's prefill share t1 exceeds f
(`front_end_drain_s`: mean over prompts of its pass's end, measured from the send, so the front end's own time and
queue are in it). Prefill-first engines resend the batch as one burst: their TTFT is this drain. Mixed engines
settle into the train above once it is faster (larger B), each prompt also paying its own f; a small batch is
still one burst (the first pass holds one prompt): their TTFT is the lesser of the two. With the cycle e2e(B)
fixed, a later first token is time the request's decode no longer waits: TPOT = (e2e(B) - this TTFT) /
(output - 1)."""
from __future__ import annotations


def prompts_per_pass(batch: int, prompt: int, budget: int) -> int:
    """Prompts one prefill pass of `budget` tokens holds from a batch of `batch`: whole prompts, budget // prompt,
    at least one (a prompt longer than the budget is a pass of its own, its chunks in sequence)."""
    return max(1, min(batch, budget // prompt))


def prefill_groups(batch: int, prompt: int, budget: int, batch_ttft_s: float) -> list[tuple[float, int, int]]:
    """(seconds, prompts, groups of that kind) of a burst of `batch` prompts drained in passes of `budget` tokens,
    in order: whole prompts n = budget // prompt a pass, or one prompt a group when it is longer than a pass."""
    if batch < 1 or batch_ttft_s <= 0:
        return []
    if prompt > budget:
        return [(batch_ttft_s / batch, 1, batch)]
    n = prompts_per_pass(batch, prompt, budget)
    full, rest = divmod(batch, n)
    per_pass = batch_ttft_s / (full + rest / n)     # a partial pass in proportion to its prompts (assumed)
    groups = [(per_pass, n, full)]
    return groups + [(per_pass * rest / n, rest, 1)] if rest else groups


def burst_mean_s(groups: list[tuple[float, int, int]]) -> float:
    """Mean over prompts of the time its group's prefill ends, the groups run one after another from 0."""
    start = total = prompts = 0.0
    for seconds, n, count in groups:
        total += n * (count * start + seconds * count * (count + 1) / 2)   # the ends start + k * seconds, k = 1..count
        start += count * seconds
        prompts += n * count
    return total / prompts if prompts else 0.0


def train_mean_s(groups: list[tuple[float, int, int]]) -> float:
    """Mean over prompts of its group's prefill plus the group before it's (none before the first)."""
    total = prompts = 0.0
    before = None
    for seconds, n, count in groups:
        total += n * count * seconds
        if count > 1:
            total += n * (count - 1) * seconds
        if before is not None:
            total += n * before
        before = seconds
        prompts += n * count
    return total / prompts if prompts else 0.0


def front_end_drain_s(batch: int, per_pass: int, prompt_s: float, front_s: float, ranks: int = 1) -> float:
    """Mean time from a burst's send (all `batch` at 0) to the end of each prompt's prefill pass: the front end
    hands one request on every `front_s`, so with `ranks` attention-DP ranks sharing it (assumed: round robin)
    one rank's k-th prompt arrives at front_s + (k - 1) x ranks x front_s; a pass starts when the engine is free
    and a prompt is there, holds what has arrived (at most `per_pass`, at least one) and takes `prompt_s` a
    prompt."""
    gap = front_s * ranks
    t = total = 0.0
    done = 0
    while done < batch:
        start = max(t, front_s + done * gap)
        arrived = min(batch, 1 + int((start - front_s) / gap + 1e-9)) if gap > 0 else batch
        k = max(1, min(per_pass, arrived - done))
        t = start + k * prompt_s
        total += k * t
        done += k
    return total / batch if batch else 0.0


def loop_ttft_s(batch: int, prompt: int, budget: int, batch_ttft_s: float, prefill_first: bool,
                front_s: float = 0.0, ranks: int = 1) -> float:
    """Mean TTFT (s) of a closed loop of `batch` clients on one rank of `ranks` (a rank's batch and token
    `budget`), whose batch prefill takes `batch_ttft_s`, from the send through a front end of `front_s` a request
    (0: none): the module docstring's model."""
    groups = prefill_groups(batch, prompt, budget, batch_ttft_s)
    if front_s <= 0 or not groups:
        return burst_mean_s(groups) if prefill_first else train_mean_s(groups)
    drain = front_end_drain_s(batch, prompts_per_pass(batch, prompt, budget), batch_ttft_s / batch, front_s, ranks)
    return drain if prefill_first else min(drain, train_mean_s(groups) + front_s)
