"""One engine's scheduling: the shared core (core.py: queues, KV blocks, preemption, the decoding set) and the
policies that form an iteration from it, one per file, named in registry.py."""
