"""Configuration search (`whatif search`, `whatif.search`): which deployment of a model on a pool of GPUs
serves the most tokens per GPU within TTFT/TPOT targets.

space.py names what is searched (replica setups); evaluate.py prices a replica setup at every batch with the
roofline estimate; configs.py builds aggregated and disaggregated (xPyD) deployments from priced replica setups;
pareto.py ranks them and finds the frontier; backends.py runs the pricing in process or on Ray; prune.py skips
batches that can be neither on the frontier nor the best (--prune); recheck.py re-runs the best few in the serving
simulator; result.py reports; run.py ties them together."""
