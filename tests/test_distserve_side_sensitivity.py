"""benchmarks/distserve_side_sensitivity.py: the release's fits as its time_estimator reads them, and the
dearer-steps patch touching only the engine named and undone on exit."""
from types import SimpleNamespace

from tests.benchmark_module import load_benchmark
from whatif.simulator import iteration_time

bench = load_benchmark("distserve_side_sensitivity")


def test_fits_read_as_time_estimator_reads_them():
    """Prefill a + b x tokens + c x tokens^2; decode a + b x (rows x context) + c x rows (ms)."""
    a, b, c = bench.PREFILL_FIT[("vllm", 4)]
    assert bench.prefill_fit_ms(("vllm", 4), 1974) == a + b * 1974 + c * 1974 ** 2
    assert 455 < bench.prefill_fit_ms(("vllm", 4), 1974) < 462            # 458.9 ms, read in session 73 C
    a, b, c = bench.DECODE_FIT[("distserve", 2)]
    assert bench.decode_fit_ms(("distserve", 2), 8, 1000) == a + b * 8000 + c * 8
    # the release's vLLM prefills a 2K prompt dearer than its DistServe does at the same tp (the doc's reading)
    assert bench.prefill_fit_ms(("vllm", 4), 1974) > 1.3 * bench.prefill_fit_ms(("distserve", 4), 1974)


def _times(engine: str):
    return SimpleNamespace(setup=SimpleNamespace(engine_spec=SimpleNamespace(name=engine)))


def test_dearer_scales_only_the_named_engine_and_is_undone(monkeypatch):
    monkeypatch.setattr(iteration_time.IterationTimes, "time", lambda self, d, c, p: 1.0)
    plain = iteration_time.IterationTimes.time
    with bench.dearer("vllm-0.2", 1.2, prompt_steps_only=True):
        step = iteration_time.IterationTimes.time
        assert step(_times("vllm-0.2-ray"), 0, 0, [(100, 0)]) == 1.2      # a prompt step of the engine named
        assert step(_times("vllm-0.2-ray"), 8, 500, []) == 1.0            # its decode step: prompts only
        assert step(_times("distserve"), 0, 0, [(100, 0)]) == 1.0         # another engine
    with bench.dearer("distserve", 1.1, prompt_steps_only=False):
        assert iteration_time.IterationTimes.time(_times("distserve"), 8, 500, []) == 1.1
    assert iteration_time.IterationTimes.time is plain


def test_dearer_memoizes_the_dearer_price_and_drops_kept_times(monkeypatch):
    """A step priced inside the block is memoized at its dearer price (decode_time reads the memo without `time`), a
    memo hit is not scaled twice, and the simulator's kept IterationTimes are dropped on entry and exit (session 73 L:
    a memo kept from an earlier block moved the figures with the order the blocks ran in)."""
    from whatif.simulator import cluster

    def priced(self, d, c, p):
        key = (d, c, tuple(p))
        if key not in self.cache:
            self.misses += 1
            self.cache[key] = 1.0
        return self.cache[key]
    monkeypatch.setattr(iteration_time.IterationTimes, "time", priced)
    monkeypatch.setitem(cluster._TIMES, "kept", object())
    times = SimpleNamespace(setup=_times("distserve").setup, cache={}, misses=0)
    with bench.dearer("distserve", 1.5, prompt_steps_only=False):
        assert not cluster._TIMES
        step = iteration_time.IterationTimes.time
        assert step(times, 8, 500, []) == 1.5                                 # priced now
        assert times.cache[(8, 500, ())] == 1.5                               # the memo holds the dearer price
        assert step(times, 8, 500, []) == 1.5                                 # a memo hit, not scaled twice
    cluster._TIMES["kept"] = object()
    with bench.dearer("vllm-0.2", 1.5, prompt_steps_only=True):
        pass
    assert not cluster._TIMES
