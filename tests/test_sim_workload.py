"""Simulator workloads: arrival processes, length distributions, shared prefixes, sessions, traces, validation."""
import dataclasses
import json
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whatif.errors import WhatifError
from whatif.simulator.request import Request
from whatif.simulator.trace_files import read_trace, write_trace
from whatif.simulator.workload import DEFAULT_REQUESTS, LENGTH_PROFILES, WorkloadSpec, describe, generate


def gaps(requests):
    return np.diff([0.0] + [r.arrival_s for r in requests])


def by_session(requests):
    sessions = defaultdict(list)
    for r in requests:
        sessions[r.prefix_id].append(r)
    return sessions


# ---------------------------------------------------------------- determinism and order

def test_same_seed_same_requests_and_another_seed_others():
    spec = WorkloadSpec(rate=3, requests=500, lengths="sharegpt", prefix_groups=3, prefix_tokens=64)
    assert generate(spec) == generate(spec)
    other = generate(WorkloadSpec(rate=3, requests=500, lengths="sharegpt", prefix_groups=3, prefix_tokens=64, seed=1))
    assert [r.arrival_s for r in other] != [r.arrival_s for r in generate(spec)]
    assert [r.prompt for r in other] != [r.prompt for r in generate(spec)]


def test_arrivals_and_lengths_draw_from_separate_streams():
    # a different rate changes when requests come, not how long they are
    slow = generate(WorkloadSpec(rate=1, requests=300, lengths="sharegpt"))
    fast = generate(WorkloadSpec(rate=10, requests=300, lengths="sharegpt"))
    assert [(r.prompt, r.output) for r in slow] == [(r.prompt, r.output) for r in fast]
    assert slow[-1].arrival_s > 5 * fast[-1].arrival_s


def test_ids_follow_arrival_order_and_first_arrival_is_one_gap_in():
    requests = generate(WorkloadSpec(rate=2, requests=200))
    assert [r.id for r in requests] == list(range(200))
    assert all(a.arrival_s <= b.arrival_s for a, b in zip(requests, requests[1:]))
    assert requests[0].arrival_s > 0


def test_default_count_when_neither_requests_nor_duration():
    assert len(generate(WorkloadSpec())) == DEFAULT_REQUESTS


# ---------------------------------------------------------------- arrival processes

@pytest.mark.parametrize("arrival,burstiness,tolerance", [("poisson", 1.0, 0.03), ("gamma", 3.0, 0.10),
                                                          ("gamma", 0.5, 0.03)])
def test_mean_inter_arrival_is_one_over_rate(arrival, burstiness, tolerance):
    rate = 4.0
    g = gaps(generate(WorkloadSpec(arrival=arrival, burstiness=burstiness, rate=rate, requests=20000)))
    assert abs(g.mean() * rate - 1) < tolerance


def test_gamma_burstiness_sets_the_coefficient_of_variation():
    def cv(**kw):
        g = gaps(generate(WorkloadSpec(rate=5, requests=20000, **kw)))
        return g.std() / g.mean()
    poisson, bursty, smooth = cv(), cv(arrival="gamma", burstiness=3.0), cv(arrival="gamma", burstiness=0.5)
    assert 0.95 < poisson < 1.05
    assert bursty > 2.0 > poisson
    assert 0.45 < smooth < 0.55


@pytest.mark.parametrize("arrival,burstiness", [("poisson", 1.0), ("gamma", 3.0)])
def test_duration_keeps_every_arrival_before_it(arrival, burstiness):
    rate, duration = 20.0, 500.0
    requests = generate(WorkloadSpec(arrival=arrival, burstiness=burstiness, rate=rate, duration_s=duration))
    arrivals = [r.arrival_s for r in requests]
    assert max(arrivals) < duration
    assert abs(len(requests) / (rate * duration) - 1) < 0.1 * burstiness
    # the generator did not stop early: the arrivals reach up to the end
    assert duration - max(arrivals) < 5


# ---------------------------------------------------------------- lengths

def test_fixed_lengths_are_exact():
    requests = generate(WorkloadSpec(requests=100, prompt=777, output=33))
    assert {(r.prompt, r.output) for r in requests} == {(777, 33)}
    assert all(r.prefix_id is None and r.prefix_tokens == 0 and r.shared_tokens == 0 for r in requests)


@pytest.mark.parametrize("name", sorted(LENGTH_PROFILES))
def test_distribution_lengths_stay_in_range_with_the_stated_median(name):
    profile = LENGTH_PROFILES[name]
    requests = generate(WorkloadSpec(lengths=name, requests=20000, rate=100))
    for dist, column in ((profile.prompt, "prompt"), (profile.output, "output")):
        values = np.array([getattr(r, column) for r in requests])
        assert values.dtype.kind == "i"
        assert values.min() >= max(1, dist.low) and values.max() <= dist.high
        if profile.pair_below is None:
            assert abs(np.median(values) / dist.median - 1) < 0.05
        assert len(set(values.tolist())) > 100      # a distribution, not a constant
    if profile.pair_below is not None:              # a dataset's pair filter: its kept pairs' means, none over it
        pairs = np.array([(r.prompt, r.output) for r in requests])
        assert pairs.sum(axis=1).max() < profile.pair_below
        assert pairs.mean(axis=0) == pytest.approx(profile.means(), rel=0.03)


def test_max_tokens_clips_nothing():
    spec = WorkloadSpec(lengths="long-context", requests=500)
    requests = generate(spec, max_tokens=4096)
    assert requests == generate(spec)
    assert any(r.prompt + r.output > 4096 for r in requests)   # the simulator, not the workload, rejects these


# ---------------------------------------------------------------- shared prefixes

def test_prefix_groups_add_the_shared_prefix_to_the_sampled_prompt():
    plain = generate(WorkloadSpec(lengths="sharegpt", requests=2000, rate=10))
    grouped = generate(WorkloadSpec(lengths="sharegpt", requests=2000, rate=10, prefix_groups=5, prefix_tokens=300))
    assert [g.prompt - p.prompt for p, g in zip(plain, grouped)] == [300] * 2000
    assert [g.output for g in grouped] == [p.output for p in plain]
    assert {r.prefix_id for r in grouped} == {f"g{i}" for i in range(5)}
    assert all(r.prefix_tokens == r.shared_tokens == 300 for r in grouped)
    counts = np.bincount([int(r.prefix_id[1:]) for r in grouped])
    assert counts.min() > 300      # uniform over 5 groups: about 400 each


# ---------------------------------------------------------------- multi-turn sessions

def check_sessions(requests, turns):
    for session in by_session(requests).values():
        assert len(session) <= turns
        first = session[0]
        assert first.prefix_tokens == 0 and first.shared_tokens == first.prompt + first.output
        for prev, turn in zip(session, session[1:]):
            history = prev.prompt + prev.output
            assert turn.prefix_tokens == history
            assert turn.prompt > history           # the history plus a new prompt of >= 1 token
            assert turn.shared_tokens == turn.prompt + turn.output
            assert turn.arrival_s >= prev.arrival_s


def test_session_turns_carry_the_history_and_count_as_requests():
    requests = generate(WorkloadSpec(lengths="sharegpt", rate=2, requests=1000, turns=4, think_s=3))
    assert len(requests) == 1000
    assert all(r.prefix_id.startswith("s") for r in requests)
    check_sessions(requests, 4)
    sessions = by_session(requests)
    assert max(len(s) for s in sessions.values()) == 4
    assert len(sessions) >= 250


def test_session_prompts_with_fixed_lengths_and_a_group_prefix():
    requests = generate(WorkloadSpec(prompt=100, output=10, rate=1, requests=300, turns=3, think_s=2,
                                     prefix_groups=2, prefix_tokens=50))
    for session in by_session(requests).values():
        # turn j: group prefix + j * (new prompt + output) + new prompt
        assert [r.prompt for r in session] == [50 + j * 110 + 100 for j in range(len(session))]
        assert [r.prefix_tokens for r in session] == [0, 160, 270][:len(session)]


def test_session_think_time_and_duration():
    requests = generate(WorkloadSpec(rate=1, duration_s=2000, turns=2, think_s=7))
    assert max(r.arrival_s for r in requests) < 2000
    think = [s[1].arrival_s - s[0].arrival_s for s in by_session(requests).values() if len(s) == 2]
    assert len(think) > 1500 and abs(np.mean(think) / 7 - 1) < 0.1


def test_zero_think_time_keeps_turn_order():
    requests = generate(WorkloadSpec(rate=1, requests=90, turns=3, think_s=0))
    check_sessions(requests, 3)
    for session in by_session(requests).values():
        assert len({r.arrival_s for r in session}) == 1


# ---------------------------------------------------------------- trace files

@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_trace_round_trip(tmp_path, suffix):
    requests = (generate(WorkloadSpec(lengths="sharegpt", requests=200, prefix_groups=3, prefix_tokens=40))
                + generate(WorkloadSpec(lengths="sharegpt", requests=200, turns=3, seed=5)))
    requests = [Request(i, r.arrival_s, r.prompt, r.output, r.prefix_id, r.prefix_tokens, r.shared_tokens)
                for i, r in enumerate(sorted(requests, key=lambda r: r.arrival_s))]
    path = tmp_path / f"trace{suffix}"
    write_trace(requests, path)
    assert read_trace(path) == requests
    assert generate(WorkloadSpec(trace=str(path))) == requests
    assert generate(WorkloadSpec(trace=str(path), requests=50)) == requests[:50]
    cut = requests[100].arrival_s
    assert generate(WorkloadSpec(trace=str(path), duration_s=cut)) == [r for r in requests if r.arrival_s < cut]


def test_trace_rate_rescales_the_same_requests_to_each_rate(tmp_path):
    """A trace sent at `trace_rate` is resent at `rate` with every arrival times trace_rate / rate and the same
    lengths in the same order (DistServe's benchmark reseeds its sampling at each rate); without it rate is unused;
    a trace_rate without a trace, or not positive, is a one-line error."""
    path = tmp_path / "t.csv"
    write_trace(generate(WorkloadSpec(lengths="sharegpt", requests=30, rate=1.0)), path)
    at1 = generate(WorkloadSpec(trace=str(path), trace_rate=1.0, rate=1.0))
    at4 = generate(WorkloadSpec(trace=str(path), trace_rate=1.0, rate=4.0))
    assert [(r.prompt, r.output) for r in at4] == [(r.prompt, r.output) for r in at1]
    assert [r.arrival_s for r in at4] == pytest.approx([r.arrival_s / 4 for r in at1])
    assert generate(WorkloadSpec(trace=str(path), rate=4.0)) == read_trace(path)
    with pytest.raises(WhatifError, match="trace_rate.*needs a trace"):
        WorkloadSpec(trace_rate=1.0)
    with pytest.raises(WhatifError, match="trace_rate"):
        WorkloadSpec(trace=str(path), trace_rate=0.0)


def test_distserve_release_trace_is_its_100_requests():
    """The claims' DistServe traces (whatif/claims/traces): the 100 requests of the release's vllm-100-1.exp, in issue
    order from 0 s at 1 req/s, under OPT's 2,048-token pair limit (its benchmark asserts prompt + output < 2048)."""
    from pathlib import Path
    import statistics
    import whatif.claims as claims
    reqs = read_trace(Path(claims.__file__).parent / "traces" / "distserve_opt_sharegpt_100.csv")
    assert len(reqs) == 100 and reqs[0].arrival_s == 0.0 and 95 < reqs[-1].arrival_s < 105
    assert all(r.prompt + r.output < 2048 for r in reqs)
    assert (reqs[0].prompt, reqs[0].output) == (55, 4) and statistics.median(r.prompt for r in reqs) == 814
    # DistServe's 300 (distserve-300-3.exp at 3 req/s): the same 100 first, in order (one seed's sample prefix)
    split = read_trace(Path(claims.__file__).parent / "traces" / "distserve_opt_sharegpt_300.csv")
    assert len(split) == 300 and 95 < split[-1].arrival_s < 105 and all(r.prompt + r.output < 2048 for r in split)
    assert [(r.prompt, r.output) for r in split[:100]] == [(r.prompt, r.output) for r in reqs]


def test_trace_aliases_sorting_and_defaults(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_tokens,num_decode_tokens,prefix_id,prefix_tokens\n"
                    "2.5,100,10,doc,40\n"
                    "0.5,200,20,,\n"
                    "\n"
                    "1.0,300.0,30,doc,40\n")
    requests = read_trace(path)
    assert [(r.id, r.arrival_s, r.prompt, r.output) for r in requests] == [
        (0, 0.5, 200, 20), (1, 1.0, 300, 30), (2, 2.5, 100, 10)]
    assert [(r.prefix_id, r.prefix_tokens, r.shared_tokens) for r in requests] == [
        (None, 0, 0), ("doc", 40, 40), ("doc", 40, 40)]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"arrival_time": 1, "num_prefill_tokens": 5, "output_tokens": 2, "shared_tokens": 7}\n')
    assert read_trace(jsonl) == [Request(0, 1.0, 5, 2, None, 0, 7)]


@pytest.mark.parametrize("name,text,expected", [
    ("t.csv", "arrival_s,output_tokens\n0,5\n", ["line 1", "prompt_tokens", "input_tokens"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,5\n0.5,abc,5\n", ["line 3", "prompt_tokens", "'abc'"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,5\n1,10,0\n", ["line 3", "output_tokens", ">= 1"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens\n-1,10,5\n", ["line 2", "arrival_s", ">= 0"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,10.5,5\n", ["line 2", "prompt_tokens", "whole number"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens\n0,10\n", ["line 2", "output_tokens", "empty"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens,prefix_tokens\n0,10,5,11\n", ["line 2", "prefix_tokens"]),
    ("t.csv", "arrival_s,prompt_tokens,output_tokens\n", ["no requests"]),
    ("t.csv", "", ["line 1", "empty file"]),
    ("t.jsonl", '{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1}\n{"arrival_s": 1\n', ["line 2", "JSON"]),
    ("t.jsonl", '{"arrival_s": 0, "output_tokens": 1}\n', ["line 1", "prompt_tokens"]),
    ("t.jsonl", '{"arrival_s": "x", "prompt_tokens": 1, "output_tokens": 1}\n', ["line 1", "arrival_s", "'x'"]),
    ("t.jsonl", '{"arrival_s": true, "prompt_tokens": 1, "output_tokens": 1}\n', ["line 1", "arrival_s"]),
    ("t.jsonl", '[1, 2]\n', ["line 1", "object"]),
])
def test_trace_errors_name_the_file_line_and_column(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(WhatifError) as e:
        read_trace(path)
    message = str(e.value)
    assert str(path) in message and "\n" not in message
    for part in expected:
        assert part in message


def test_trace_missing_file_and_bad_extension(tmp_path):
    with pytest.raises(WhatifError, match="no such file"):
        generate(WorkloadSpec(trace=str(tmp_path / "nope.csv")))
    with pytest.raises(WhatifError, match="--trace.*extension"):
        WorkloadSpec(trace="requests.parquet")


# ---------------------------------------------------------------- validation and description

@pytest.mark.parametrize("kwargs,flag", [
    (dict(arrival="uniform"), "--arrival"), (dict(rate=0), "--rate"), (dict(rate=float("inf")), "--rate"),
    (dict(rate="5"), "--rate"), (dict(arrival="gamma", burstiness=0), "--burstiness"),
    (dict(burstiness=2.0), "--burstiness"), (dict(requests=0), "--requests"), (dict(requests=2.5), "--requests"),
    (dict(requests=10 ** 9), "--requests"), (dict(duration_s=-1), "--duration"),
    (dict(rate=1e6, duration_s=1e6), "--duration"), (dict(lengths="zipf"), "--lengths"),
    (dict(prompt=0), "--prompt"), (dict(output=-3), "--output"), (dict(prefix_groups=-1), "--prefix-groups"),
    (dict(prefix_groups=3), "--prefix-groups"), (dict(prefix_tokens=100), "--prefix-tokens"),
    (dict(turns=0), "--turns"), (dict(think_s=-1.0), "--think-time"), (dict(seed=-1), "--seed"),
    (dict(seed=1.5), "--seed"), (dict(seed=True), "--seed"), (dict(trace=""), "--trace"),
    (dict(trace="t.csv", turns=2), "--trace"),
])
def test_spec_errors_name_the_flag(kwargs, flag):
    with pytest.raises(WhatifError) as e:
        WorkloadSpec(**kwargs)
    assert str(e.value).startswith(flag) and "\n" not in str(e.value)


def test_requests_and_duration_together_is_an_error():
    with pytest.raises(WhatifError, match="give --requests or --duration, not both"):
        WorkloadSpec(requests=10, duration_s=10.0)


def test_describe_says_what_is_generated():
    text = describe(WorkloadSpec(rate=5, lengths="sharegpt"))
    profile = LENGTH_PROFILES["sharegpt"]
    assert text.startswith(f"{DEFAULT_REQUESTS} requests, Poisson 5 req/s, ShareGPT-like")
    assert f"prompt median {profile.prompt.median:.0f}" in text and text.endswith("seed 0")
    text = describe(WorkloadSpec(arrival="gamma", burstiness=3, duration_s=600, turns=3, prefix_groups=2,
                                 prefix_tokens=64, seed=7))
    for part in ("600 s", "gamma (CV 3)", "sessions/s", "2 shared prefixes of 64 tokens", "3-turn", "seed 7"):
        assert part in text
    assert "trace x.csv" in describe(WorkloadSpec(trace="x.csv")) and "\n" not in text


# ---------------------------------------------------------------- property

specs = st.builds(
    WorkloadSpec,
    arrival=st.sampled_from(["poisson", "gamma"]),
    rate=st.floats(0.05, 50),
    requests=st.integers(1, 60),
    lengths=st.sampled_from(["fixed", "sharegpt", "long-context"]),
    prompt=st.integers(1, 4096),
    output=st.integers(1, 512),
    turns=st.integers(1, 4),
    think_s=st.floats(0, 30),
    seed=st.integers(0, 2 ** 32),
).flatmap(lambda s: st.builds(
    lambda cv, groups, tokens: WorkloadSpec(**{**s.__dict__, "burstiness": cv if s.arrival == "gamma" else 1.0,
                                               "prefix_groups": groups, "prefix_tokens": tokens if groups else 0}),
    st.floats(0.2, 5), st.integers(0, 3), st.integers(1, 256)))


@settings(max_examples=60, deadline=None)
@given(specs)
def test_any_small_spec_gives_ordered_requests_of_positive_lengths(spec):
    requests = generate(spec)
    assert len(requests) == spec.requests
    assert [r.id for r in requests] == list(range(len(requests)))
    assert all(a.arrival_s <= b.arrival_s for a, b in zip(requests, requests[1:]))
    for r in requests:
        assert r.prompt >= 1 and r.output >= 1 and r.arrival_s > 0
        assert 0 <= r.prefix_tokens <= r.prompt and 0 <= r.shared_tokens <= r.prompt + r.output
    if spec.turns > 1:
        check_sessions(requests, spec.turns)
    json.dumps([dataclasses.asdict(r) for r in requests])   # plain Python numbers, no numpy scalars


def test_a_profile_solved_from_a_published_mean_has_that_mean():
    """dist_with_mean solves the median against the clipped mean; sampling it gives the published mean back."""
    from whatif.simulator.length_profiles import SHAREGPT_OUTPUT_MEAN, SHAREGPT_PROMPT_MEAN, clipped_lognormal_mean
    rng = np.random.default_rng(0)
    x = rng.lognormal(math.log(120.0), 1.0, 400_000)
    assert clipped_lognormal_mean(120.0, 1.0, 4, 1024) == pytest.approx(np.clip(x, 4, 1024).mean(), rel=0.01)
    requests = generate(WorkloadSpec(lengths="sharegpt", requests=50000, rate=100))
    assert np.mean([r.prompt for r in requests]) == pytest.approx(SHAREGPT_PROMPT_MEAN, rel=0.02)
    assert np.mean([r.output for r in requests]) == pytest.approx(SHAREGPT_OUTPUT_MEAN, rel=0.02)
    assert 224.5 < SHAREGPT_PROMPT_MEAN < 224.6 and 193.8 < SHAREGPT_OUTPUT_MEAN < 193.9   # the published totals


def test_a_mean_outside_the_clip_range_is_refused():
    from whatif.simulator.length_profiles import dist_with_mean
    for mean in (2.0, 5000.0):
        with pytest.raises(ValueError, match="between the clip range"):
            dist_with_mean(mean, 1.0, 4, 1024)
    assert dist_with_mean(500.0, 1.0, 4, 1024).mean() == pytest.approx(500.0, rel=1e-6)


def test_requests_built_from_columns_equal_the_constructors():
    """requests_from_columns and Request.sent skip the frozen dataclass's per-field calls: the same requests as
    Request(...) and dataclasses.replace, still frozen."""

    from whatif.simulator.request import Request, requests_from_columns
    built = requests_from_columns([0.5, 1.25], [3, 4], [5, 6], [None, "g1"], [0, 7], [0, 8])
    made = [Request(0, 0.5, 3, 5, None, 0, 0), Request(1, 1.25, 4, 6, "g1", 7, 8)]
    assert built == made and [hash(r) for r in built] == [hash(r) for r in made]
    sent = built[1].sent(2.0, 2.5)
    assert sent == dataclasses.replace(built[1], sent_s=2.0, arrival_s=2.5) and built[1].sent_s is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        sent.prompt = 1


# ---------------------------------------------------------------- lengths drawn in a range (benchmark_serving's)

def test_a_range_ratio_draws_each_length_uniform_between_its_share_and_the_length():
    """benchmark_serving.py's random dataset with --random-range-ratio r (InferenceX's sample_uniform): every prompt
    and output length uniform in [floor(r x L), L]; the same seed, the same lengths."""
    spec = WorkloadSpec(requests=4000, prompt=1000, output=200, range_ratio=0.8, seed=5)
    reqs = generate(spec)
    prompts, outputs = np.array([r.prompt for r in reqs]), np.array([r.output for r in reqs])
    assert prompts.min() >= 800 and prompts.max() <= 1000 and outputs.min() >= 160 and outputs.max() <= 200
    assert prompts.mean() == pytest.approx(900, rel=0.01) and outputs.mean() == pytest.approx(180, rel=0.01)
    assert len(set(prompts.tolist())) > 150
    assert [r.prompt for r in generate(spec)] == prompts.tolist()
    assert {r.prompt for r in generate(WorkloadSpec(requests=50, prompt=1000, output=200))} == {1000}
    assert "uniform in [0.8 x, 1 x]" in describe(spec)


@pytest.mark.parametrize("kw, field", [(dict(range_ratio=0), "range_ratio"), (dict(range_ratio=1.5), "range_ratio"),
                                       (dict(range_ratio=0.8, lengths="sharegpt"), "range_ratio")])
def test_a_bad_range_ratio_names_the_field(kw, field):
    with pytest.raises(WhatifError, match=field):
        WorkloadSpec(**kw)


def test_a_length_cv_draws_each_length_normal_around_the_length():
    """DeepSpeed-FastGen's benchmark: prompt and output lengths normal around their means with a 30% spread."""
    spec = WorkloadSpec(requests=4000, prompt=2600, output=60, length_cv=0.3, seed=5)
    reqs = generate(spec)
    prompts, outputs = np.array([r.prompt for r in reqs]), np.array([r.output for r in reqs])
    assert prompts.mean() == pytest.approx(2600, rel=0.02) and prompts.std() == pytest.approx(780, rel=0.05)
    assert outputs.min() >= 1 and outputs.std() == pytest.approx(18, rel=0.1)
    assert [r.prompt for r in generate(spec)] == prompts.tolist()
    assert "CV 0.3" in describe(spec)


@pytest.mark.parametrize("kw", [dict(length_cv=-0.1), dict(length_cv=0.3, lengths="sharegpt"),
                                dict(length_cv=0.3, range_ratio=0.8)])
def test_a_bad_length_cv_names_the_field(kw):
    with pytest.raises(WhatifError, match="length_cv"):
        WorkloadSpec(**kw)


def test_request_builders_set_every_field_in_order():
    """requests_from_columns and Request.sent set the fields one by one (_FIELDS): the same names, in the dataclass's
    order (instances then share their keys), and the same requests as __init__ makes."""
    from dataclasses import fields

    from whatif.simulator.request import _FIELDS, Request, requests_from_columns
    assert _FIELDS == tuple(f.name for f in fields(Request))
    built = requests_from_columns([0.5], [10], [5], ["p"], [3], [4])
    assert built == [Request(0, 0.5, 10, 5, "p", 3, 4)]
    assert built[0].sent(0.1, 0.7) == Request(0, 0.7, 10, 5, "p", 3, 4, sent_s=0.1)


def test_generated_and_sent_requests_equal_the_ones_the_dataclass_builds():
    """requests_from_columns and Request.sent build through _Unfrozen (the same slots): each field where
    Request(...) and dataclasses.replace put it, still frozen, hashed and pickled as a Request."""
    import pickle

    from whatif.simulator.request import _FIELDS, _Unfrozen, requests_from_columns
    assert _Unfrozen.__slots__ == Request.__slots__ == _FIELDS == tuple(f.name for f in dataclasses.fields(Request))
    r = requests_from_columns([0.5, 1.25], [7, 8], [3, 4], [None, "g1"], [0, 2], [0, 5])[1]
    built = Request(1, 1.25, 8, 4, "g1", 2, 5)
    assert type(r) is Request and r == built and hash(r) == hash(built)
    assert r.sent(1.0, 2.0) == dataclasses.replace(r, arrival_s=2.0, sent_s=1.0)
    assert pickle.loads(pickle.dumps(r)) == r
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.prompt = 9


def test_prompt_max_cuts_only_the_prompts_drawn_past_it():
    """DeepSpeed-FastGen's client: min(int(normal(L, 0.3 L)), max_length); the draws themselves do not change."""
    spec = WorkloadSpec(requests=2000, prompt=2600, output=60, length_cv=0.3, seed=5)
    cut = dataclasses.replace(spec, prompt_max=4000)
    free, capped = generate(spec), generate(cut)
    assert max(r.prompt for r in free) > 4000 and max(r.prompt for r in capped) == 4000
    assert [min(r.prompt, 4000) for r in free] == [r.prompt for r in capped]
    assert [r.output for r in free] == [r.output for r in capped]
    assert "prompts cut to at most 4000 tokens" in describe(cut)


@pytest.mark.parametrize("kw", [dict(prompt_max=0), dict(prompt_max=1.5), dict(prompt_max=100, lengths="sharegpt")])
def test_a_bad_prompt_max_names_the_field(kw):
    with pytest.raises(WhatifError, match="prompt_max"):
        WorkloadSpec(**kw)
