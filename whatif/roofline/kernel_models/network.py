"""NCCL over a network link (InfiniBand / RoCE NICs): the assumed terms of one network collective step.

No measured table covers NCCL over a NIC, so these are assumed from public nccl-tests figures, not
fitted; the NIC's own line rate and latency come from its link profile (e.g. rdma-400g):

  t = NET_BASE_S + steps(op, n) * NET_STEP_LAT * link_latency + wire_bytes(op, S, n) / (B * NET_BW_EFF)

- NET_BW_EFF = 0.92: NVIDIA's NCCL team: "For NDR @ 400Gbps you should see 46-48GB/s per NIC"
  (github.com/NVIDIA/nccl-tests/issues/290), i.e. 46/50 = 0.92 of the 50 GB/s line rate (low end).
- NET_BASE_S = 9 us: an 8-byte all-reduce between 2 nodes (1 GPU each, HDR InfiniBand) takes about
  19 us in nccl-tests (github.com/NVIDIA/nccl-tests/issues/150); that is 2 ring steps of the
  profile's ~5 us one-way RDMA latency plus ~9 us of fixed launch and proxy cost.
- NET_STEP_LAT = 1: each ring step pays one one-way message latency of the link.
One protocol: NCCL's LL/LL128/Simple choice over the network is not modelled (all three get these
terms); the engines' custom all-reduce kernels need peer memory (NVLink / P2P), so none runs here.
"""
from __future__ import annotations

NET_BW_EFF = 0.92
NET_BASE_S = 9e-6
NET_STEP_LAT = 1.0
PROVENANCE = ("assumed (network link: NCCL over NICs at 0.92 of line rate, 9 us fixed + 1 link latency per "
              "ring step; nccl-tests issues 290 and 150), no engine custom all-reduce")
